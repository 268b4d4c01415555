package rooms

import (
	"sync"

	"github.com/ghostwire/ghostwire/transport"
)

// roomListener is a room's side of the shared listener: the connections
// routed to the room, handed to its server's Accept, and the shared
// listener's Flush.
type roomListener struct {
	ch     chan transport.Conn
	flush  transport.Flusher // nil when the shared listener does not batch
	poll   transport.Poller  // nil when it reads on its own goroutine
	mu     sync.Mutex
	closed bool
}

var (
	_ transport.Flusher = (*roomListener)(nil)
	_ transport.Poller  = (*roomListener)(nil)
)

func newRoomListener(shared transport.Listener) *roomListener {
	l := &roomListener{ch: make(chan transport.Conn, 64)}
	l.flush, _ = shared.(transport.Flusher)
	l.poll, _ = shared.(transport.Poller)
	return l
}

// Poll polls the shared listener: what arrived for every room is read,
// and a room polling while another does returns at once.
func (l *roomListener) Poll() {
	if l.poll != nil {
		l.poll.Poll()
	}
}

// Flush writes what the shared listener holds: this room's datagrams, and
// any other room's, which leave a little earlier.
func (l *roomListener) Flush() {
	if l.flush != nil {
		l.flush.Flush()
	}
}

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
