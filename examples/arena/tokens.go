package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ghostwire/ghostwire/transport/udp"
	"github.com/ghostwire/ghostwire/transport/udp/tokens"
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
// public address, as a matchmaker does once it has authenticated a player,
// with the room and the player's identity in its claims; either side
// gives up after timeout seconds without a packet.
func makeToken(key [udp.KeySize]byte, server netip.AddrPort, room string, id uint64, timeout int) ([]byte, error) {
	claims := tokens.Claims{Room: room, Identity: "bot-" + strconv.FormatUint(id, 16)}
	ud, err := claims.UserData()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	b, _, err := udp.MakeConnectToken(udp.TokenParams{
		PrivateKey:      key,
		ProtocolID:      arenaProtocolID,
		ClientID:        id,
		ServerAddresses: []netip.AddrPort{server},
		Create:          now,
		Expire:          now.Add(tokenLife),
		TimeoutSeconds:  int32(timeout),
		UserData:        ud,
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

// tokenServer is the arena's token endpoint, as a matchmaker runs one: a
// tokens.Service (POST JSON, the shared secret as a bearer token, rate
// limits, random client IDs, refusals counted; systems/fleet's, naming
// the public address and refusing once the server drains) on a hardened
// HTTP server.
type tokenServer struct {
	svc  *tokens.Service
	http *http.Server
	ln   net.Listener
	done chan struct{}
}

// serveTokens listens on addr (host:port; port 0 picks one) and serves
// svc until close.
func serveTokens(addr string, svc *tokens.Service, log *slog.Logger) (*tokenServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("-tokens %s: %w", addr, err)
	}
	ts := &tokenServer{svc: svc, ln: ln, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.Handle("POST "+tokenPath, svc)
	ts.http = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 5 * time.Second,
		WriteTimeout: 5 * time.Second, IdleTimeout: 30 * time.Second, MaxHeaderBytes: 8 << 10,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go func() {
		defer close(ts.done)
		_ = ts.http.Serve(ln) // ends with http.ErrServerClosed on close
	}()
	return ts, nil
}

// URL returns the address clients fetch tokens from.
func (ts *tokenServer) URL() string { return "http://" + ts.ln.Addr().String() + tokenPath }

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

// fetchToken asks a token endpoint for the token of a player of identity
// in room, with the shared secret. It errors when the endpoint does not
// answer 200 with a token, or when the token does not name the server the
// client was told to connect to.
func fetchToken(ctx context.Context, client *http.Client, endpoint, secret, room, identity string, server netip.AddrPort) ([]byte, error) {
	body, _ := json.Marshal(tokens.Request{Room: room, Identity: identity})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("-tokens %s: %w", endpoint, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("-tokens: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<10))
	if err != nil {
		return nil, fmt.Errorf("-tokens %s: %w", endpoint, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("-tokens %s: %s: %s", endpoint, resp.Status, bytes.TrimSpace(b))
	}
	var r tokens.Response
	if err := json.Unmarshal(b, &r); err != nil || len(r.Token) != udp.ConnectTokenSize {
		return nil, fmt.Errorf("-tokens %s answered no connect token of %d bytes", endpoint, udp.ConnectTokenSize)
	}
	t, err := udp.ParseConnectToken(r.Token)
	if err != nil {
		return nil, fmt.Errorf("-tokens %s: %w", endpoint, err)
	}
	if !slices.Contains(t.ServerAddresses, server) {
		return nil, fmt.Errorf("-tokens %s gives tokens for %v, not for -connect %v", endpoint, t.ServerAddresses, server)
	}
	return r.Token, nil
}

// readSecretFile reads the token endpoint's shared secret: the file's
// text, trimmed, at least 16 bytes.
func readSecretFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("-token-secret: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 4<<10))
	if err != nil {
		return "", fmt.Errorf("-token-secret %s: %w", path, err)
	}
	s := strings.TrimSpace(string(b))
	if len(s) < 16 || len(s) > 1024 {
		return "", fmt.Errorf("-token-secret %s holds %d bytes; want 16..1024 (make one with: head -c 24 /dev/urandom | base64 > %s)", path, len(s), path)
	}
	return s, nil
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
