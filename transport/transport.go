package transport

import (
	"errors"
	"strconv"
	"time"
)

// MaxDatagramSize is the largest datagram a Conn accepts, in bytes. It fits
// the 1280-byte IPv6 minimum MTU after IP and UDP headers (1232 bytes), so a
// datagram that fits here needs no IP fragmentation on a real network.
const MaxDatagramSize = 1200

// Clock is the time source a network reads to decide which datagrams have
// arrived. The ecs package's virtual clock satisfies it; transport depends on
// the method set only, so it does not import ecs.
type Clock interface {
	// Now returns the current time as an offset from an arbitrary origin.
	// It must never go backwards.
	Now() time.Duration
}

// Conn is one end of a datagram link: unreliable, unordered and
// message-oriented. It never blocks and is meant to be polled once per tick.
// Implementations are safe for concurrent use.
type Conn interface {
	// Send queues one datagram; p is copied, so the caller may reuse it at
	// once. It returns ErrClosed once either end is closed, and an error
	// matching ErrDatagramSize (naming the length and the limit) when p is
	// empty or longer than MaxDatagramSize. A nil error does not mean the
	// datagram will arrive: it may be lost or dropped on the way.
	Send(p []byte) error

	// Receive copies the next datagram that has arrived by now into buf and
	// returns its length and true, or 0 and false when none has arrived.
	// A datagram longer than buf is dropped and counted in Stats.Truncated,
	// never half-delivered, and Receive moves on to the next one.
	Receive(buf []byte) (n int, ok bool)

	// Close ends this side of the link. Later Sends on either end return
	// ErrClosed; the peer can still receive what was already in flight.
	// Closing an end twice returns ErrClosed.
	Close() error

	// Stats returns a snapshot of this end's counters.
	Stats() Stats
}

// Stats counts what happened at one end of a link. Send-side counters
// (Sent, SentBytes, Lost, Duplicated, Reordered, Dropped) describe the
// datagrams this end sent; receive-side counters (Received, ReceivedBytes,
// Truncated) describe the datagrams it received.
type Stats struct {
	Sent          uint64 // datagrams accepted by Send, including those later lost or dropped
	SentBytes     uint64 // payload bytes accepted by Send
	Received      uint64 // datagrams returned by Receive
	ReceivedBytes uint64 // payload bytes returned by Receive
	Lost          uint64 // datagrams discarded by the link's loss probability
	Duplicated    uint64 // extra copies scheduled by the link's duplicate probability
	Reordered     uint64 // datagrams that took the reorder path, so later ones may overtake them
	Dropped       uint64 // datagrams or copies discarded because the in-flight queue was full
	Truncated     uint64 // arrived datagrams discarded because the Receive buffer was too small
}

var (
	// ErrClosed is returned by operations on a closed Conn or listener.
	ErrClosed = errors.New("transport: connection closed")

	// ErrDatagramSize is matched (errors.Is) by the error Send returns for an
	// empty datagram or one longer than MaxDatagramSize.
	ErrDatagramSize = errors.New("transport: invalid datagram size")

	// errInvalidConfig is matched (errors.Is) by the errors of Pair and
	// Dial for link conditions out of range.
	errInvalidConfig = errors.New("transport: invalid link config")

	// errInvalidAddr is returned by Listen for an empty address.
	errInvalidAddr = errors.New("transport: invalid address")

	// errAddrInUse is returned by Listen when the address already has a listener.
	errAddrInUse = errors.New("transport: address already in use")

	// errNoListener is returned by Dial when nobody listens at the address.
	errNoListener = errors.New("transport: no listener at address")
)

// datagramSizeError reports a datagram length outside 1..MaxDatagramSize.
// It is a value type so the message can name the length without a format call.
type datagramSizeError int

func (e datagramSizeError) Error() string {
	n := strconv.Itoa(int(e))
	if e == 0 {
		return "transport: empty datagram (0 bytes); a datagram must be 1 to " +
			strconv.Itoa(MaxDatagramSize) + " bytes"
	}
	return "transport: datagram of " + n + " bytes exceeds MaxDatagramSize " + strconv.Itoa(MaxDatagramSize)
}

func (e datagramSizeError) Is(target error) bool { return target == ErrDatagramSize }

// checkSize returns nil when n is a valid datagram length.
func checkSize(n int) error {
	if n == 0 || n > MaxDatagramSize {
		return datagramSizeError(n)
	}
	return nil
}

// Listener hands out the connections dialled to a server, polled once per
// frame like Conn.Receive.
type Listener interface {
	// Accept returns the next new connection, or false when none is
	// waiting.
	Accept() (Conn, bool)
	Close() error
}

// Flusher is a Listener whose connections may hold sent datagrams back
// to write many with one system call (the UDP listener's SendBatch).
// Flush writes every datagram held. A caller that sends a round of
// datagrams (a tick's snapshots) calls it after the round;
// systems.Server does, at the end of every Update. A Listener that wraps
// a Flusher implements Flush too, passing it on, or what its connections
// send waits for the inner listener's own timer.
type Flusher interface {
	Flush()
}

// Poller is a Listener or Conn that reads its socket when polled rather
// than on a goroutine of its own (the UDP transport's Polled option).
// Poll reads what has arrived, runs the transport's timers and flushes;
// the owner calls it often (every frame, at least every 25 ms for UDP).
// systems.Server polls its Listener at the start of every Update and
// systems.Client its Conn at the start of every Update.
type Poller interface {
	Poll()
}
