package rooms

import (
	"sync"

	"github.com/ghostwire/ghostwire/transport"
)

// roomListener is a room's side of the shared listener: the connections
// routed to the room, handed to its server's Accept.
type roomListener struct {
	ch     chan transport.Conn
	mu     sync.Mutex
	closed bool
}

func newRoomListener() *roomListener { return &roomListener{ch: make(chan transport.Conn, 64)} }

// Accept returns the next routed connection, or false when none waits.
func (l *roomListener) Accept() (transport.Conn, bool) {
	select {
	case c := <-l.ch:
		return c, true
	default:
		return nil, false
	}
}

// offer hands c to the room; false when the room is closed or 64
// connections wait already.
func (l *roomListener) offer(c transport.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	select {
	case l.ch <- c:
		return true
	default:
		return false
	}
}

// waiting returns how many routed connections the room has not accepted.
func (l *roomListener) waiting() int { return len(l.ch) }

// Close closes the connections never accepted.
func (l *roomListener) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	for {
		select {
		case c := <-l.ch:
			_ = c.Close()
		default:
			return nil
		}
	}
}
