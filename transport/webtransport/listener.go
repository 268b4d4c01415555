//go:build !js

package webtransport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	wt "github.com/quic-go/webtransport-go"

	"github.com/ghostwire/ghostwire/transport"
)

const (
	// DefaultMaxSessions is ListenerOptions.MaxSessions when it is zero.
	DefaultMaxSessions = 64
	// MaxSessionsLimit is the largest MaxSessions a Listener takes.
	MaxSessionsLimit = 4096
	// DefaultMaxPending is ListenerOptions.MaxPending when it is zero.
	DefaultMaxPending = 64
	// DefaultSetupTimeout is ListenerOptions.SetupTimeout when it is zero.
	DefaultSetupTimeout = 5 * time.Second
	// DefaultIdleTimeout is ListenerOptions.IdleTimeout when it is zero.
	DefaultIdleTimeout = 10 * time.Second
)

// maxStreams bounds the QUIC streams a peer may open: HTTP/3 needs its
// control streams and one request stream per session, and the datagrams
// need none, so a peer cannot make the server hold many.
const maxStreams = 16

// Close codes the Listener ends a QUIC connection with (HTTP/3 error
// codes, which a browser's console shows).
const (
	codeRefused  = quic.ApplicationErrorCode(http3.ErrCodeConnectError) // MaxSessions reached
	codeTimedOut = quic.ApplicationErrorCode(http3.ErrCodeRequestRejected)
	codeNoError  = quic.ApplicationErrorCode(http3.ErrCodeNoError)
)

// ListenerOptions configures a Listener. Certificate is required; the rest
// has defaults.
type ListenerOptions struct {
	// Conn tunes every connection the Listener accepts.
	Conn Options

	// Certificate is the server's TLS certificate: NewDevCertificate's for
	// development, LoadCertificate's for production.
	Certificate tls.Certificate

	// MaxSessions bounds the QUIC connections open at once, each carrying
	// at most one session, accepted or not: one beyond it is closed as
	// soon as its handshake completes and counted in
	// ListenerStats.Refused. Zero means DefaultMaxSessions; allowed
	// 1..MaxSessionsLimit.
	MaxSessions int

	// MaxPending bounds the sessions established (or being established)
	// but not yet taken by Accept. A request beyond it is refused with 503
	// Service Unavailable and counted in ListenerStats.Refused. Zero means
	// DefaultMaxPending; allowed 1..MaxSessionsLimit.
	MaxPending int

	// OriginPatterns lists the hosts, besides the request's own, whose
	// pages may open a session here (path.Match patterns on the Origin's
	// host and port, as in the websocket package). Empty allows only
	// same-origin pages and clients that send no Origin header. A page
	// served over TCP from another port than the Listener's UDP one is
	// another origin: list its host.
	OriginPatterns []string

	// SetupTimeout bounds how long a QUIC connection may stay open
	// without a session: past it the connection is closed and counted in
	// ListenerStats.TimedOut, so a peer cannot hold a slot (and send
	// datagrams that no session takes) for free. Zero means
	// DefaultSetupTimeout; allowed 100ms..1m.
	SetupTimeout time.Duration

	// IdleTimeout ends a session whose peer sends nothing, not even an
	// acknowledgement, for this long (QUIC's idle timeout; the lower of
	// the two ends' applies). Zero means DefaultIdleTimeout; allowed
	// 1s..5m.
	IdleTimeout time.Duration
}

// withDefaults fills in the defaults and returns an error naming the first
// field out of range.
func (o ListenerOptions) withDefaults() (ListenerOptions, error) {
	if o.MaxSessions == 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.MaxPending == 0 {
		o.MaxPending = DefaultMaxPending
	}
	if o.SetupTimeout == 0 {
		o.SetupTimeout = DefaultSetupTimeout
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	switch {
	case len(o.Certificate.Certificate) == 0:
		return o, errors.New("webtransport: ListenerOptions.Certificate is empty: use NewDevCertificate or LoadCertificate")
	case o.MaxSessions < 1 || o.MaxSessions > MaxSessionsLimit:
		return o, fmt.Errorf("webtransport: MaxSessions %d: allowed range is 1..%d", o.MaxSessions, MaxSessionsLimit)
	case o.MaxPending < 1 || o.MaxPending > MaxSessionsLimit:
		return o, fmt.Errorf("webtransport: MaxPending %d: allowed range is 1..%d", o.MaxPending, MaxSessionsLimit)
	case o.SetupTimeout < 100*time.Millisecond || o.SetupTimeout > time.Minute:
		return o, fmt.Errorf("webtransport: SetupTimeout %v: allowed range is 100ms..1m", o.SetupTimeout)
	case o.IdleTimeout < time.Second || o.IdleTimeout > 5*time.Minute:
		return o, fmt.Errorf("webtransport: IdleTimeout %v: allowed range is 1s..5m", o.IdleTimeout)
	}
	for _, p := range o.OriginPatterns {
		if _, err := path.Match(p, ""); err != nil {
			return o, fmt.Errorf("webtransport: OriginPatterns %q: %w", p, err)
		}
	}
	return o, o.Conn.validate()
}

// ListenerStats counts what a Listener did with the connections and
// requests it served.
type ListenerStats struct {
	Accepted uint64 // connections returned by Accept
	Pending  int    // sessions established and waiting for Accept when the snapshot was taken
	Open     int    // QUIC connections open when the snapshot was taken
	Refused  uint64 // connections and requests refused because MaxSessions or MaxPending was reached
	Failed   uint64 // requests that failed the WebTransport handshake (not a CONNECT, forbidden origin, a second session, ...)
	TimedOut uint64 // connections closed for opening no session within SetupTimeout
}

// connKey is the context key under which the HTTP/3 server hands
// ServeHTTP the QUIC connection of a request.
type connKey struct{}

// peer is one open QUIC connection.
type peer struct {
	setup   *time.Timer // closes the connection if it opens no session in time
	session bool        // a session is established or being established on it
}

// Listener is the server side: it serves HTTP/3 on a UDP socket (Serve),
// upgrades each WebTransport request to a session (ServeHTTP) and queues it
// for Accept. The game loop polls Accept once per tick like any
// transport.Listener. It is safe for concurrent use.
type Listener struct {
	opts ListenerOptions
	tls  *tls.Config
	quic *quic.Config

	mu        sync.Mutex
	wt        *wt.Server // set by Serve
	tr        *quic.Transport
	ln        *quic.Listener
	peers     map[*quic.Conn]*peer
	pending   []*conn // established, oldest first
	upgrading int     // requests past the pending check and not yet queued
	stats     ListenerStats
	closed    bool
	serving   sync.WaitGroup // the goroutines serving QUIC connections
}

// NewListener returns an open Listener with opts, or an error naming the
// first option out of range. It serves nothing until Serve.
func NewListener(opts ListenerOptions) (*Listener, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Listener{
		opts:  opts,
		tls:   http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{opts.Certificate}, MinVersion: tls.VersionTLS13}),
		quic:  quicConfig(opts.IdleTimeout),
		peers: make(map[*quic.Conn]*peer),
	}, nil
}

// quicConfig is what WebTransport needs of QUIC, with the bounds a server
// needs against its peers.
func quicConfig(idle time.Duration) *quic.Config {
	return &quic.Config{
		EnableDatagrams:                  true,
		EnableStreamResetPartialDelivery: true,
		MaxIdleTimeout:                   idle,
		MaxIncomingStreams:               maxStreams,
		MaxIncomingUniStreams:            maxStreams,
	}
}

// errServing is Serve's error when the Listener already serves a socket.
var errServing = errors.New("webtransport: Listener already serves a socket")

// Serve serves HTTP/3 on pc until Close, handing every request to h; nil
// means the Listener itself, which takes a WebTransport request at any
// path. A game that checks its own rules first (a session token, say)
// passes a handler that calls the Listener's ServeHTTP once they hold.
// Serve returns nil after Close, transport.ErrClosed when the Listener
// was closed before, and otherwise the socket's error. It does not close
// pc; call it once.
func (l *Listener) Serve(pc net.PacketConn, h http.Handler) error {
	if h == nil {
		h = l
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return transport.ErrClosed
	}
	if l.tr != nil {
		l.mu.Unlock()
		return errServing
	}
	l.wt = &wt.Server{
		H3: &http3.Server{Handler: h, TLSConfig: l.tls, QUICConfig: l.quic,
			ConnContext: func(ctx context.Context, c *quic.Conn) context.Context {
				return context.WithValue(ctx, connKey{}, c)
			}},
		// ServeHTTP checks origins itself, so that refusals are answered
		// and counted.
		CheckOrigin: func(*http.Request) bool { return true },
	}
	l.tr = &quic.Transport{Conn: pc}
	ln, err := l.tr.Listen(l.tls, l.quic)
	if err != nil {
		l.mu.Unlock()
		return fmt.Errorf("webtransport: listening on %s: %w", pc.LocalAddr(), err)
	}
	l.ln = ln
	l.mu.Unlock()
	for {
		qc, err := ln.Accept(context.Background())
		if err != nil {
			l.mu.Lock()
			closed := l.closed
			l.mu.Unlock()
			if closed {
				return nil
			}
			return err
		}
		l.admit(qc)
	}
}

// admit serves a new QUIC connection, or closes it when MaxSessions are
// open.
func (l *Listener) admit(qc *quic.Conn) {
	l.mu.Lock()
	if l.closed || len(l.peers) >= l.opts.MaxSessions {
		if !l.closed {
			l.stats.Refused++
		}
		l.mu.Unlock()
		_ = qc.CloseWithError(codeRefused, fmt.Sprintf("webtransport: %d sessions open, MaxSessions", l.opts.MaxSessions))
		return
	}
	l.peers[qc] = &peer{setup: time.AfterFunc(l.opts.SetupTimeout, func() { l.timeout(qc) })}
	srv := l.wt
	l.serving.Add(1)
	l.mu.Unlock()
	context.AfterFunc(qc.Context(), func() { l.forget(qc) })
	go func() {
		defer l.serving.Done()
		_ = srv.ServeQUICConn(qc) // its errors end only this connection
	}()
}

// timeout closes qc unless it has opened a session.
func (l *Listener) timeout(qc *quic.Conn) {
	l.mu.Lock()
	p := l.peers[qc]
	if p == nil || p.session {
		l.mu.Unlock()
		return
	}
	l.stats.TimedOut++
	l.mu.Unlock()
	_ = qc.CloseWithError(codeTimedOut, "webtransport: no session within SetupTimeout")
}

// forget frees qc's slot once it is closed.
func (l *Listener) forget(qc *quic.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p := l.peers[qc]; p != nil {
		p.setup.Stop()
		delete(l.peers, qc)
	}
}

// ServeHTTP upgrades a WebTransport request (an extended CONNECT over the
// HTTP/3 server that Serve runs) to a session and queues it for Accept. It
// answers 503 Service Unavailable when the Listener is closed or
// MaxPending sessions are waiting, 403 Forbidden for an origin that
// OriginPatterns does not allow, and 400 Bad Request for a request that is
// no WebTransport handshake or opens a second session on one connection.
// It returns once the session is queued; the session lives on after it.
func (l *Listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	qc, _ := r.Context().Value(connKey{}).(*quic.Conn)
	l.mu.Lock()
	p := l.peers[qc]
	refuse := func(code int, count *uint64, msg string) {
		if count != nil {
			*count++
		}
		l.mu.Unlock()
		http.Error(w, msg, code)
	}
	switch {
	case l.closed:
		refuse(http.StatusServiceUnavailable, nil, "webtransport: listener closed")
		return
	case p == nil:
		refuse(http.StatusBadRequest, &l.stats.Failed, "webtransport: not a request over this Listener's HTTP/3 server")
		return
	case !l.originAllowed(r):
		refuse(http.StatusForbidden, &l.stats.Failed, fmt.Sprintf("webtransport: origin %q not allowed", r.Header.Get("Origin")))
		return
	case p.session:
		refuse(http.StatusBadRequest, &l.stats.Failed, "webtransport: one session per connection")
		return
	case len(l.pending)+l.upgrading >= l.opts.MaxPending:
		refuse(http.StatusServiceUnavailable, &l.stats.Refused, "webtransport: too many pending sessions")
		return
	}
	l.upgrading++
	p.session = true
	p.setup.Stop()
	l.mu.Unlock()

	sess, err := l.wt.Upgrade(w, r)

	l.mu.Lock()
	defer l.mu.Unlock()
	l.upgrading--
	switch {
	case err != nil:
		l.stats.Failed++
		p.session = false
		p.setup.Reset(l.opts.SetupTimeout)
		http.Error(w, err.Error(), http.StatusBadRequest)
	case l.closed:
		_ = sess.CloseWithError(0, "webtransport: listener closed")
	default:
		s := &quicSession{s: sess, after: func() { _ = qc.CloseWithError(codeNoError, "") }}
		l.pending = append(l.pending, newConn(s, l.opts.Conn, nil))
	}
}

// originAllowed reports whether r comes from no page, from a page of its
// own host, or from one whose host OriginPatterns lists.
func (l *Listener) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	host := strings.ToLower(u.Host)
	for _, p := range l.opts.OriginPatterns {
		if ok, _ := path.Match(strings.ToLower(p), host); ok { // patterns were checked by NewListener
			return true
		}
	}
	return false
}

// Accept returns the oldest established session not yet accepted, or nil
// and false when there is none or the Listener is closed. It never blocks.
func (l *Listener) Accept() (transport.Conn, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || len(l.pending) == 0 {
		return nil, false
	}
	c := l.pending[0]
	l.pending[0] = nil
	l.pending = l.pending[1:]
	l.stats.Accepted++
	return c, true
}

// Addr returns the UDP address Serve listens on, or nil before Serve.
func (l *Listener) Addr() net.Addr {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ln == nil {
		return nil
	}
	return l.ln.Addr()
}

// Close stops the Listener and ends every session, accepted or not (they
// share its socket, so none outlives it): their peers' Sends return
// transport.ErrClosed. It returns once the goroutines serving the
// connections have ended; Serve returns nil. Closing twice returns
// transport.ErrClosed.
func (l *Listener) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return transport.ErrClosed
	}
	l.closed = true
	for _, c := range l.pending {
		_ = c.Close() // first Close of an unaccepted conn cannot fail
	}
	l.pending = nil
	conns := make([]*quic.Conn, 0, len(l.peers))
	for qc := range l.peers {
		conns = append(conns, qc)
	}
	srv, tr, ln := l.wt, l.tr, l.ln
	l.mu.Unlock()
	for _, qc := range conns {
		_ = qc.CloseWithError(codeNoError, "webtransport: listener closed")
	}
	var err error
	if ln != nil {
		err = errors.Join(ln.Close(), srv.Close(), tr.Close())
	}
	l.serving.Wait()
	return err
}

// Stats returns a snapshot of the Listener's counters.
func (l *Listener) Stats() ListenerStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.stats
	s.Pending = len(l.pending)
	s.Open = len(l.peers)
	return s
}

var _ transport.Listener = (*Listener)(nil)
