// Package agonestest has a fake Agones sidecar for tests: an http.Handler
// speaking the sidecar's REST gateway and enforcing its in-cluster
// contract, as observed and checked against the real sidecar
// (docs/operations.md): an empty health body is a 400 with no body, an
// unknown path a 404 and a wrong verb a 501, errors are
// {"code","message","details"}, int64 values are strings, unknown JSON
// fields are ignored but a counter update that sets nothing is refused, a
// capacity below the count lowers the count, label keys are validated,
// and the sidecar can be made unreachable for a while.
//
// Where the real sidecar's local mode (sdk-server --local) is laxer than
// in cluster — it stores any label key, keeps a count above a lowered
// capacity, takes a counter update that sets nothing, and does not watch
// counter changes — the fake does what the in-cluster one does.
package agonestest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ghostwire/ghostwire/systems/agones"
)

// Call is one request the sidecar answered.
type Call struct {
	Method, Path string
	At           time.Time // on the sidecar's clock
	Status       int
}

// Sidecar is the fake. Its zero value is not usable: use New.
type Sidecar struct {
	clock interface{ Now() time.Time }

	mu       sync.Mutex
	gs       agones.GameServer
	calls    []Call
	down     bool
	watchers []watcher
}

// watcher is an open watch stream: the updates it is sent, and closed
// when the sidecar goes down under it.
type watcher struct {
	ch   chan agones.GameServer
	gone chan struct{}
}

// New returns a sidecar whose game server is Scheduled at address:port
// (port named "default"), with the given counters (count 0), reading
// time from clock (nil: the real one).
func New(clock interface{ Now() time.Time }, address string, port int32, counters map[string]int64) *Sidecar {
	if clock == nil {
		clock = realNow{}
	}
	s := &Sidecar{clock: clock}
	s.gs.ObjectMeta = agones.ObjectMeta{Name: "gameserver-test", Labels: map[string]string{}, Annotations: map[string]string{}}
	s.gs.Status = agones.Status{State: "Scheduled", Address: address, Ports: []agones.Port{{Name: "default", Port: port}},
		Counters: map[string]agones.Counter{}}
	for name, capacity := range counters {
		s.gs.Status.Counters[name] = agones.Counter{Capacity: capacity}
	}
	return s
}

type realNow struct{}

func (realNow) Now() time.Time { return time.Now() }

// SetDown makes the sidecar unreachable (every connection closed without
// an answer, as a sidecar not listening yet or restarting; the open watch
// streams end) or reachable again.
func (s *Sidecar) SetDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
	if down {
		for _, w := range s.watchers {
			close(w.gone)
		}
		s.watchers = nil
	}
}

// Calls returns the requests answered so far.
func (s *Sidecar) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// GameServer returns the game server's state now.
func (s *Sidecar) GameServer() agones.GameServer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.copyGS()
}

// Allocate marks the game server Allocated, as a matchmaker's allocation
// does, and tells the watchers.
func (s *Sidecar) Allocate() { s.SetState("Allocated") }

// SetState sets the game server's state as Agones' controllers do, and
// tells the watchers: "Shutdown" is how a fleet scaling down or a rolling
// update marks a game server it removes (Kubernetes then deletes its pod,
// whose containers get SIGTERM).
func (s *Sidecar) SetState(state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gs.Status.State = state
	s.changed()
}

// ServeHTTP answers one request of the REST gateway.
func (s *Sidecar) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.down {
		s.mu.Unlock()
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	s.mu.Unlock()
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if r.URL.Path == "/health" && len(body) == 0 {
		// The sidecar refuses an empty health body before its gateway,
		// with a bare 400: no JSON, no content type.
		s.record(r, http.StatusBadRequest)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if r.URL.Path == "/watch/gameserver" && r.Method == http.MethodGet {
		s.record(r, http.StatusOK)
		s.serveWatch(w, r)
		return
	}
	status, out := s.handle(r.Method, r.URL.Path, body)
	s.record(r, status)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(out)
}

func (s *Sidecar) record(r *http.Request, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, Call{Method: r.Method, Path: r.URL.Path, At: s.clock.Now(), Status: status})
}

// gatewayError is the gateway's error body.
type gatewayError struct {
	Code    int      `json:"code"`
	Message string   `json:"message"`
	Details []string `json:"details"`
}

func fail(status, code int, format string, args ...any) (int, any) {
	return status, gatewayError{Code: code, Message: fmt.Sprintf(format, args...), Details: []string{}}
}

// routes are the gateway's paths and the verb each takes.
var routes = map[string]string{
	"/ready": http.MethodPost, "/allocate": http.MethodPost, "/shutdown": http.MethodPost, "/health": http.MethodPost,
	"/reserve": http.MethodPost, "/gameserver": http.MethodGet, "/metadata/label": http.MethodPut,
	"/metadata/annotation": http.MethodPut,
}

// handle answers everything but a watch.
func (s *Sidecar) handle(method, path string, body []byte) (int, any) {
	verb, known := routes[path]
	if name, ok := strings.CutPrefix(path, "/v1beta1/counters/"); ok && name != "" {
		return s.counter(method, name, body)
	}
	switch {
	case !known:
		return fail(http.StatusNotFound, 5, "Not Found")
	case method != verb:
		return fail(http.StatusNotImplemented, 12, "Method Not Allowed")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch path {
	case "/health":
		return http.StatusOK, struct{}{}
	case "/ready", "/allocate", "/shutdown":
		if err := decode(body, &struct{}{}); err != nil {
			return fail(http.StatusBadRequest, 3, "%v", err)
		}
		s.gs.Status.State = map[string]string{"/ready": "Ready", "/allocate": "Allocated", "/shutdown": "Shutdown"}[path]
		s.changed()
		return http.StatusOK, struct{}{}
	case "/reserve":
		var in struct {
			Seconds json.RawMessage `json:"seconds"`
		}
		if err := decode(body, &in); err != nil {
			return fail(http.StatusBadRequest, 3, "%v", err)
		}
		if in.Seconds != nil { // absent: 0, reserved until told otherwise
			if _, err := int64Field(in.Seconds); err != nil {
				return fail(http.StatusBadRequest, 3, "seconds: %v", err)
			}
		}
		s.gs.Status.State = "Reserved"
		s.changed()
		return http.StatusOK, struct{}{}
	case "/gameserver":
		return http.StatusOK, s.copyGS()
	default: // label, annotation
		var kv struct {
			Key   string `json:"key"`
			Value string `json:"value"`
		}
		if err := decode(body, &kv); err != nil {
			return fail(http.StatusBadRequest, 3, "%v", err)
		}
		value := kv.Value
		if path == "/metadata/annotation" {
			value = ""
		}
		if err := agones.ValidLabel(kv.Key, value); err != nil {
			return fail(http.StatusBadRequest, 3, "%v", err)
		}
		m := s.gs.ObjectMeta.Labels
		if path == "/metadata/annotation" {
			m = s.gs.ObjectMeta.Annotations
		}
		m["agones.dev/sdk-"+kv.Key] = kv.Value
		s.changed()
		return http.StatusOK, struct{}{}
	}
}

// counter answers GET and PATCH of a counter.
func (s *Sidecar) counter(method, name string, body []byte) (int, any) {
	if method != http.MethodGet && method != http.MethodPatch {
		return fail(http.StatusNotImplemented, 12, "Method Not Allowed")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.gs.Status.Counters[name]
	if !ok {
		return fail(http.StatusInternalServerError, 2, "counter not found: %s", name)
	}
	if method == http.MethodPatch {
		next, status, out := updateCounter(c, body)
		if status != http.StatusOK {
			return status, out
		}
		c = next
		s.gs.Status.Counters[name] = c
		s.changed()
	}
	return http.StatusOK, struct {
		Name     string `json:"name"`
		Count    string `json:"count"`
		Capacity string `json:"capacity"`
	}{name, strconv.FormatInt(c.Count, 10), strconv.FormatInt(c.Capacity, 10)}
}

// updateCounter applies a PATCH of a counter as the in-cluster sidecar
// does: the gateway ignores unknown fields, so an update that sets nothing
// (a misspelled field, a zero countDiff) is refused; capacity, count and
// countDiff apply in that order, each checked; and a capacity below the
// count lowers the count to it. It returns the counter and 200, or the
// status and error body.
func updateCounter(c agones.Counter, body []byte) (agones.Counter, int, any) {
	refuse := func(status, code int, format string, args ...any) (agones.Counter, int, any) {
		st, out := fail(status, code, format, args...)
		return c, st, out
	}
	var in struct {
		Count     json.RawMessage `json:"count"`
		CountDiff json.RawMessage `json:"countDiff"`
		Capacity  json.RawMessage `json:"capacity"`
	}
	if err := decode(body, &in); err != nil {
		return refuse(http.StatusBadRequest, 3, "%v", err)
	}
	var set [3]*int64 // capacity, count, countDiff
	for i, raw := range []json.RawMessage{in.Capacity, in.Count, in.CountDiff} {
		if raw == nil || string(raw) == "null" {
			continue
		}
		v, err := int64Field(raw)
		if err != nil {
			return refuse(http.StatusBadRequest, 3, "%v", err)
		}
		if i < 2 || v != 0 { // proto3: a zero countDiff is no countDiff
			set[i] = &v
		}
	}
	capacity, count, diff := set[0], set[1], set[2]
	if capacity == nil && count == nil && diff == nil {
		return refuse(http.StatusInternalServerError, 2, "invalid argument. Malformed CounterUpdateRequest: %s", bytes.TrimSpace(body))
	}
	next := c
	if capacity != nil {
		if *capacity < 0 {
			return refuse(http.StatusInternalServerError, 2, "out of range. Capacity must be greater than or equal to 0. Found Capacity: %d", *capacity)
		}
		next.Capacity = *capacity
	}
	outOfRange := func(n int64) bool { return n < 0 || n > next.Capacity }
	if count != nil {
		if outOfRange(*count) {
			return refuse(http.StatusInternalServerError, 2, "out of range. Count must be within range [0,Capacity]. Found Count: %d, Capacity: %d", *count, next.Capacity)
		}
		next.Count = *count
	}
	if diff != nil {
		if n := next.Count + *diff; outOfRange(n) {
			return refuse(http.StatusInternalServerError, 2, "out of range. Count must be within range [0,Capacity]. Found Count: %d, Capacity: %d", n, next.Capacity)
		}
		next.Count += *diff
	}
	next.Count = min(next.Count, next.Capacity)
	return next, http.StatusOK, nil
}

// decode reads a request body as the gateway does: unknown fields
// ignored, an empty body an empty message.
func decode(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	return json.Unmarshal(body, v)
}

// int64Field reads an int64 as the gateway takes it: "5" or 5.
func int64Field(raw json.RawMessage) (int64, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strconv.ParseInt(s, 10, 64)
	}
	var n int64
	err := json.Unmarshal(raw, &n)
	return n, err
}

// serveWatch streams the game server, once now and on every change,
// until the client leaves.
func (s *Sidecar) serveWatch(w http.ResponseWriter, r *http.Request) {
	me := watcher{ch: make(chan agones.GameServer, 16), gone: make(chan struct{})}
	s.mu.Lock()
	s.watchers = append(s.watchers, me)
	me.ch <- s.copyGS()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, w := range s.watchers {
			if w.ch == me.ch {
				s.watchers = append(s.watchers[:i], s.watchers[i+1:]...)
				break
			}
		}
	}()
	w.Header().Set("Content-Type", "application/json")
	flusher, _ := w.(http.Flusher)
	for {
		select {
		case <-r.Context().Done():
			return
		case <-me.gone:
			if hj, ok := w.(http.Hijacker); ok { // drop the stream as a dead sidecar does
				if conn, _, err := hj.Hijack(); err == nil {
					conn.Close()
				}
			}
			return
		case gs := <-me.ch:
			b, _ := json.Marshal(struct {
				Result agones.GameServer `json:"result"`
			}{gs})
			if _, err := w.Write(append(b, '\n')); err != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
	}
}

// changed tells every watcher; s.mu is held.
func (s *Sidecar) changed() {
	for _, w := range s.watchers {
		select {
		case w.ch <- s.copyGS():
		default: // a watcher 16 changes behind gets the next
		}
	}
}

// copyGS returns a deep copy; s.mu is held.
func (s *Sidecar) copyGS() agones.GameServer {
	g := s.gs
	g.ObjectMeta.Labels = copyMap(g.ObjectMeta.Labels)
	g.ObjectMeta.Annotations = copyMap(g.ObjectMeta.Annotations)
	g.Status.Ports = append([]agones.Port(nil), g.Status.Ports...)
	g.Status.Counters = copyMap(g.Status.Counters)
	return g
}

func copyMap[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
