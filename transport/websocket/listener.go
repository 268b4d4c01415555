package websocket

import (
	"net/http"
	"sync"

	"github.com/coder/websocket"

	"github.com/ghostwire/ghostwire/transport"
)

// DefaultMaxPending is ListenerOptions.MaxPending when it is zero.
const DefaultMaxPending = 64

// ListenerOptions tunes a Listener. The zero value gives the defaults.
type ListenerOptions struct {
	// Conn tunes every connection the Listener accepts.
	Conn Options

	// MaxPending bounds the connections upgraded (or being upgraded) but
	// not yet taken by Accept. A handshake beyond it is refused with
	// 503 Service Unavailable before the upgrade and counted in
	// ListenerStats.Refused. Zero or negative means DefaultMaxPending.
	MaxPending int

	// OriginPatterns lists the hosts, besides the request's own, whose
	// pages may open a socket here (path.Match patterns, as in
	// github.com/coder/websocket's AcceptOptions). Empty allows only
	// same-origin pages and clients that send no Origin header.
	OriginPatterns []string
}

// ListenerStats counts what a Listener did with the handshakes it served.
type ListenerStats struct {
	Accepted uint64 // connections returned by Accept
	Pending  int    // connections upgraded and waiting for Accept when the snapshot was taken
	Refused  uint64 // handshakes refused because MaxPending connections were waiting
	Failed   uint64 // requests that failed the WebSocket handshake (not an upgrade, forbidden origin, ...)
}

// Listener is the server side: an http.Handler that upgrades each request
// to a WebSocket connection and queues it for Accept. Mount it on the
// game's own http.Server beside the page that opens the socket. It is safe
// for concurrent use.
//
// Connections outlive the request and the http.Server: shutting the server
// down does not close them, so close each accepted connection (Close
// closes the ones still pending).
type Listener struct {
	conn       Options
	maxPending int
	accept     websocket.AcceptOptions

	mu        sync.Mutex
	pending   []*conn // upgraded, oldest first
	upgrading int     // handshakes past the pending check and not yet queued
	stats     ListenerStats
	closed    bool
}

// NewListener returns an open Listener with opts.
func NewListener(opts ListenerOptions) *Listener {
	if opts.MaxPending <= 0 {
		opts.MaxPending = DefaultMaxPending
	}
	return &Listener{
		conn:       opts.Conn,
		maxPending: opts.MaxPending,
		accept:     websocket.AcceptOptions{OriginPatterns: opts.OriginPatterns},
	}
}

// ServeHTTP upgrades r to a WebSocket connection and queues it for Accept.
// It answers 503 Service Unavailable when the Listener is closed or
// MaxPending connections are waiting, and an error status when the request
// is not a valid WebSocket handshake. It returns once the connection is
// queued; the connection lives on after it.
func (l *Listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	switch {
	case l.closed:
		l.mu.Unlock()
		http.Error(w, "websocket: listener closed", http.StatusServiceUnavailable)
		return
	case len(l.pending)+l.upgrading >= l.maxPending:
		l.stats.Refused++
		l.mu.Unlock()
		http.Error(w, "websocket: too many pending connections", http.StatusServiceUnavailable)
		return
	}
	l.upgrading++
	l.mu.Unlock()

	ws, err := websocket.Accept(w, r, &l.accept) // writes the error response itself

	l.mu.Lock()
	defer l.mu.Unlock()
	l.upgrading--
	switch {
	case err != nil:
		l.stats.Failed++
	case l.closed:
		_ = ws.CloseNow()
	default:
		l.pending = append(l.pending, newConn(ws, l.conn))
	}
}

// Accept returns the oldest upgraded connection not yet accepted, or nil
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

// Close stops the Listener: later handshakes are refused and pending
// connections are closed, so their clients' Sends return transport.ErrClosed. Accepted
// connections are not touched. Closing twice returns transport.ErrClosed.
func (l *Listener) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return transport.ErrClosed
	}
	l.closed = true
	for _, c := range l.pending {
		_ = c.Close() // first Close of an unaccepted conn cannot fail
	}
	l.pending = nil
	return nil
}

// Stats returns a snapshot of the Listener's counters.
func (l *Listener) Stats() ListenerStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.stats
	s.Pending = len(l.pending)
	return s
}

var _ transport.Listener = (*Listener)(nil)
