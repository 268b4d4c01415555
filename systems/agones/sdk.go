package agones

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultHTTPPort is the sidecar's REST port when AGONES_SDK_HTTP_PORT is
// unset.
const DefaultHTTPPort = 9358

// maxBody caps what the SDK reads of one answer of the sidecar (a watch
// reads line by line, each capped so).
const maxBody = 1 << 20

// Options configure an SDK. The zero value talks to the sidecar at
// localhost on AGONES_SDK_HTTP_PORT (9358 when unset), retries for 30 s.
type Options struct {
	// BaseURL is the sidecar's REST gateway, such as
	// "http://localhost:9358"; empty means localhost on
	// AGONES_SDK_HTTP_PORT.
	BaseURL string
	// RetryFor is how long a call keeps retrying while the sidecar cannot
	// be reached (refused, reset), backing off from 100 ms to 1 s; 30 s
	// when zero. Allowed: 0..10 min.
	RetryFor time.Duration
	// HTTPClient makes the calls; nil means one with a 10 s timeout per
	// call (a watch has none).
	HTTPClient *http.Client
	// Clock is the time retries and health pings wait on; nil is the real
	// clock.
	Clock Clock
	// Logger receives retries and failed pings at Debug and Warn; nil
	// discards.
	Logger *slog.Logger
}

// Stats counts what the SDK did.
type Stats struct {
	Calls, Retries uint64 // calls made, and attempts retried after a transport error
	Pings, PingErr uint64 // health pings sent, and those that failed
}

// SDK is a client of the sidecar. It is safe for concurrent use.
type SDK struct {
	base              string
	hc, watch         *http.Client
	retryFor          time.Duration
	clock             Clock
	log               *slog.Logger
	calls, retries    atomic.Uint64
	pings, pingErrors atomic.Uint64

	shutdown    sync.Once
	shutdownErr error
}

// New returns an SDK. It errors on a RetryFor out of range or a BaseURL
// that is not an http URL; it does not contact the sidecar.
func New(opts Options) (*SDK, error) {
	base := opts.BaseURL
	if base == "" {
		port := DefaultHTTPPort
		if p := os.Getenv("AGONES_SDK_HTTP_PORT"); p != "" {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 || n > 65535 {
				return nil, fmt.Errorf("agones: AGONES_SDK_HTTP_PORT %q is not a port (1..65535)", p)
			}
			port = n
		}
		base = "http://localhost:" + strconv.Itoa(port)
	}
	if len(base) < 8 || base[:7] != "http://" {
		return nil, fmt.Errorf("agones: BaseURL %q is not an http:// URL", base)
	}
	if opts.RetryFor < 0 || opts.RetryFor > 10*time.Minute {
		return nil, fmt.Errorf("agones: RetryFor %v outside 0..10m", opts.RetryFor)
	}
	s := &SDK{base: base, hc: opts.HTTPClient, retryFor: opts.RetryFor, clock: opts.Clock, log: opts.Logger}
	if s.retryFor == 0 {
		s.retryFor = 30 * time.Second
	}
	if s.hc == nil {
		s.hc = &http.Client{Timeout: 10 * time.Second}
	}
	s.watch = &http.Client{Transport: s.hc.Transport}
	if s.clock == nil {
		s.clock = realClock{}
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s, nil
}

// Stats returns the SDK's counts.
func (s *SDK) Stats() Stats {
	return Stats{Calls: s.calls.Load(), Retries: s.retries.Load(), Pings: s.pings.Load(), PingErr: s.pingErrors.Load()}
}

// Ready tells Agones the server is listening and may be allocated.
func (s *SDK) Ready(ctx context.Context) error {
	return s.call(ctx, http.MethodPost, "/ready", struct{}{}, nil)
}

// Allocate marks the server Allocated itself (a server that finds its own
// players, without a matchmaker's allocation).
func (s *SDK) Allocate(ctx context.Context) error {
	return s.call(ctx, http.MethodPost, "/allocate", struct{}{}, nil)
}

// Reserve marks the server Reserved for d (whole seconds, at least 1):
// not allocatable, not scaled down; Ready again after d unless allocated.
func (s *SDK) Reserve(ctx context.Context, d time.Duration) error {
	secs := int64(d / time.Second)
	if secs < 1 {
		return fmt.Errorf("agones: Reserve %v is under a second", d)
	}
	return s.call(ctx, http.MethodPost, "/reserve", struct {
		Seconds string `json:"seconds"`
	}{strconv.FormatInt(secs, 10)}, nil)
}

// Shutdown tells Agones the server is done; Agones then deletes its pod.
// Only the first call contacts the sidecar; later ones return its result.
func (s *SDK) Shutdown(ctx context.Context) error {
	s.shutdown.Do(func() { s.shutdownErr = s.call(ctx, http.MethodPost, "/shutdown", struct{}{}, nil) })
	return s.shutdownErr
}

// call sends in as JSON and decodes the answer into out (when not nil),
// retrying transport errors until RetryFor has passed or ctx ends.
func (s *SDK) call(ctx context.Context, method, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("agones: %s %s: %w", method, path, err)
	}
	s.calls.Add(1)
	deadline := s.clock.Now().Add(s.retryFor)
	wait := 100 * time.Millisecond
	for {
		err := s.once(ctx, method, path, body, out)
		var sidecar *Error
		if err == nil || errors.As(err, &sidecar) || ctx.Err() != nil {
			return err
		}
		if !s.clock.Now().Add(wait).Before(deadline) {
			return fmt.Errorf("agones: %s %s: sidecar unreachable for %v: %w", method, path, s.retryFor, err)
		}
		s.retries.Add(1)
		s.log.Debug("agones: sidecar unreachable, retrying", "call", method+" "+path, "in", wait, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.clock.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

// once makes one attempt of a call.
func (s *SDK) once(ctx context.Context, method, path string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		e := &Error{Status: resp.StatusCode, Call: method + " " + path}
		if json.Unmarshal(b, e) != nil {
			e.Message = string(bytes.TrimSpace(b))
		}
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return &Error{Status: resp.StatusCode, Code: -1, Message: "undecodable answer: " + err.Error(), Call: method + " " + path}
	}
	return nil
}
