package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"sync/atomic"
	"time"

	"github.com/ghostwire/ghostwire/transport/udp"
)

// arenaProtocolID is the arena's netcode protocol ID ("arena 01"): servers
// refuse tokens made for another game or version.
const arenaProtocolID uint64 = 0x6172656e61203031

// Connect tokens of the arena: a client has tokenLife to connect with one,
// and either side gives up after tokenTimeout seconds without a packet.
const (
	tokenLife    = 30 * time.Second
	tokenTimeout = 5
)

// tokenPath is where the token endpoint serves tokens.
const tokenPath = "/token"

// makeToken makes a connect token for client ID id naming the server's
// public address, as a matchmaker does once it has authenticated a player;
// either side gives up after timeout seconds without a packet.
func makeToken(key [udp.KeySize]byte, server netip.AddrPort, id uint64, timeout int) ([]byte, error) {
	now := time.Now()
	b, _, err := udp.MakeConnectToken(udp.TokenParams{
		PrivateKey:      key,
		ProtocolID:      arenaProtocolID,
		ClientID:        id,
		ServerAddresses: []netip.AddrPort{server},
		Create:          now,
		Expire:          now.Add(tokenLife),
		TimeoutSeconds:  int32(timeout),
	})
	return b, err
}

// randomClientID returns a random non-zero client ID: bot processes that
// make their own tokens share no counter, and a server admits one
// connection per client ID.
func randomClientID() (uint64, error) {
	var b [8]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			return 0, fmt.Errorf("reading random bytes: %w", err)
		}
		if id := binary.LittleEndian.Uint64(b[:]); id != 0 {
			return id, nil
		}
	}
}

// tokenServer is a token endpoint as a matchmaker would run it: GET
// /token answers with a fresh connect token for the server's public
// address and a new client ID. A real matchmaker authenticates the player
// first and serves over HTTPS; this one gives a token to anyone who asks,
// so bind it where only your own clients reach it.
type tokenServer struct {
	key    [udp.KeySize]byte
	server netip.AddrPort
	next   atomic.Uint64 // the last client ID handed out
	issued atomic.Uint64
	http   *http.Server
	ln     net.Listener
	done   chan struct{}
}

// startTokenServer listens on addr (host:port; port 0 picks one) and
// serves tokens naming server until close.
func startTokenServer(addr string, key [udp.KeySize]byte, server netip.AddrPort, log *slog.Logger) (*tokenServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("-tokens %s: %w", addr, err)
	}
	ts := &tokenServer{key: key, server: server, ln: ln, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+tokenPath, ts.serveToken)
	ts.http = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 5 * time.Second,
		WriteTimeout: 5 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go func() {
		defer close(ts.done)
		_ = ts.http.Serve(ln) // ends with http.ErrServerClosed on close
	}()
	return ts, nil
}

// URL returns the address clients fetch tokens from.
func (ts *tokenServer) URL() string { return "http://" + ts.ln.Addr().String() + tokenPath }

func (ts *tokenServer) serveToken(w http.ResponseWriter, _ *http.Request) {
	b, err := makeToken(ts.key, ts.server, ts.next.Add(1), tokenTimeout)
	if err != nil {
		http.Error(w, "cannot make a token", http.StatusInternalServerError)
		return
	}
	ts.issued.Add(1)
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Cache-Control", "no-store") // a token is a secret and good for one connection
	_, _ = w.Write(b)
}

// close stops serving and waits for the serving goroutine; requests in
// flight get up to a second to finish.
func (ts *tokenServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if ts.http.Shutdown(ctx) != nil {
		_ = ts.http.Close()
	}
	<-ts.done
}

// fetchToken gets one connect token from a token endpoint. It errors when
// the endpoint does not answer 200 with exactly udp.ConnectTokenSize bytes,
// or when the token does not name the server the client was told to
// connect to.
func fetchToken(ctx context.Context, client *http.Client, endpoint string, server netip.AddrPort) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return nil, fmt.Errorf("-tokens %s: %w", endpoint, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("-tokens: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("-tokens %s: %s", endpoint, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, udp.ConnectTokenSize+1))
	if err != nil {
		return nil, fmt.Errorf("-tokens %s: %w", endpoint, err)
	}
	if len(b) != udp.ConnectTokenSize {
		return nil, fmt.Errorf("-tokens %s answered %d bytes; a connect token has %d", endpoint, len(b), udp.ConnectTokenSize)
	}
	t, err := udp.ParseConnectToken(b)
	if err != nil {
		return nil, fmt.Errorf("-tokens %s: %w", endpoint, err)
	}
	if !slices.Contains(t.ServerAddresses, server) {
		return nil, fmt.Errorf("-tokens %s gives tokens for %v, not for -connect %v", endpoint, t.ServerAddresses, server)
	}
	return b, nil
}

// tokenURL turns the -tokens value of a client into the endpoint's URL:
// a bare host:port or a URL without a path gets /token.
func tokenURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		if u, err = url.Parse("http://" + s); err != nil || u.Host == "" {
			return "", fmt.Errorf("-tokens %q: want the token endpoint's URL, such as http://127.0.0.1:40001/token", s)
		}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", errors.New("-tokens " + s + ": the URL's scheme must be http or https")
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = tokenPath
	}
	return u.String(), nil
}
