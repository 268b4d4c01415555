package main

import (
	"errors"
	"net/netip"
	"sync"

	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/udp"
)

// trackedListener hands the listener's connections to the rooms and
// keeps them, so that the report can count how they ended. Ended
// connections are let go by prune. The rooms' manager calls Accept on its
// goroutine and the server's loop prunes on its own, hence the lock; the
// public address goes through to the listener (systems/fleet gives it the
// one Agones says).
type trackedListener struct {
	l      *udp.Listener
	mu     sync.Mutex
	live   []*udp.ServerConn
	counts struct {
		accepted                  uint64
		peak                      int
		left, timedOut, queueFull uint64
	}
}

var (
	_ transport.Listener = (*trackedListener)(nil)
	_ transport.Flusher  = (*trackedListener)(nil)
	_ transport.Poller   = (*trackedListener)(nil)
)

// Accept implements transport.Listener.
func (t *trackedListener) Accept() (transport.Conn, bool) {
	c, ok := t.l.Accept()
	if !ok {
		return nil, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.live = append(t.live, c.(*udp.ServerConn))
	t.counts.accepted++
	t.counts.peak = max(t.counts.peak, len(t.live))
	return c, true
}

// Flush implements transport.Flusher: the rooms' servers flush the
// listener's batched sends through it.
func (t *trackedListener) Flush() { t.l.Flush() }

// Poll implements transport.Poller: the rooms' manager and servers read
// the listener's socket through it.
func (t *trackedListener) Poll() { t.l.Poll() }

// Close implements transport.Listener.
func (t *trackedListener) Close() error { return t.l.Close() }

// PublicAddress is the listener's.
func (t *trackedListener) PublicAddress() netip.AddrPort { return t.l.PublicAddress() }

// SetPublicAddress is the listener's.
func (t *trackedListener) SetPublicAddress(a netip.AddrPort) error { return t.l.SetPublicAddress(a) }

// prune forgets the connections that ended, counting why.
func (t *trackedListener) prune() {
	t.mu.Lock()
	defer t.mu.Unlock()
	kept := t.live[:0]
	for _, c := range t.live {
		switch err := c.Err(); {
		case err == nil:
			kept = append(kept, c)
		case errors.Is(err, udp.ErrPeerDisconnected), errors.Is(err, udp.ErrLocalClose):
			t.counts.left++ // the client said goodbye, or the server ended the connection (its room ended)
		case errors.Is(err, udp.ErrTimedOut):
			t.counts.timedOut++
		case errors.Is(err, udp.ErrQueueFull):
			t.counts.queueFull++
		}
	}
	clear(t.live[len(kept):])
	t.live = kept
}
