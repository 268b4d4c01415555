package packet

import (
	"errors"
	"strconv"
	"time"
)

// Values used for the zero fields of Options.
const (
	defaultMaxMessageSize     = 64 << 10
	defaultMaxQueuedBytes     = 256 << 10
	defaultMaxReliablePending = 1024
	defaultMaxReceiveBytes    = 128 << 10
	defaultBacklogTimeout     = 10 * time.Second
)

// Upper bounds of Options fields.
const (
	maxMessageSizeLimit     = MaxFragments * FragmentSize
	maxReliablePendingLimit = 1 << 15 // message ids must stay less than half the uint16 circle apart
	maxBytesLimit           = 1 << 30
)

// ErrInvalidOptions is matched (errors.Is) by the errors of Options.Validate
// and NewConn.
var ErrInvalidOptions = errors.New("packet: invalid options")

// Options tunes a Conn. The zero value gives the defaults, which suit a game
// connection: 64 KiB reliable messages, 256 KiB send queue, no send budget.
type Options struct {
	// MaxMessageSize is the largest reliable message in bytes; larger ones
	// are refused by SendReliable and, from the peer, never reassembled. It
	// also caps fragments per message at ceil(MaxMessageSize/FragmentSize).
	// Zero means 64 KiB; at most MaxFragments×FragmentSize.
	MaxMessageSize int

	// MaxQueuedBytes caps the bytes held for (re)sending reliable messages,
	// counted by the buffer sizes actually retained. SendReliable refuses a
	// message that would pass it with an error matching ErrBacklogged.
	// Zero means 256 KiB (or MaxMessageSize, if larger); at least MaxMessageSize.
	MaxQueuedBytes int

	// MaxReliablePending caps the reliable messages sent but not yet acked.
	// Zero means 1024; at most 32768.
	MaxReliablePending int

	// MaxReceiveBytes caps the bytes held for reliable messages that arrived
	// before an earlier one they must wait for, counted by buffer class
	// (64, 256 or 1186 bytes). A packet that would pass it is dropped
	// unacknowledged, so the peer resends it later. Messages that continue
	// the in-order run are exempt: Receive hands them out before it reads
	// the next datagram. Zero means 128 KiB; at least 1186
	// (one whole reliable message).
	MaxReceiveBytes int

	// SendBudget is the most bytes per second this end sends, enforced by a
	// token bucket that holds at most 100 ms of budget. A packet goes out
	// only while the bucket is not negative, so over any interval T the
	// bytes sent stay under SendBudget×T plus one packet. Zero means
	// unlimited.
	SendBudget int

	// ReliableBytesPerFlush is the most bytes of reliable entries (whole
	// messages of either channel and fragments, first sends and resends,
	// their 5 or 7 bytes of entry header included) sent from one Flush to
	// the next, so that a large message goes out over several Flushes
	// beside the unreliable traffic instead of in one burst. A Flush sends
	// entries while some of it is left, so it always sends at least one and
	// passes it by less than one entry (1,191 bytes). Zero means unlimited;
	// at most 1 GiB.
	ReliableBytesPerFlush int

	// AckInterval is the least time between two ack-only packets, which
	// Flush sends when a packet needing an ack arrived and nothing else
	// went out. Zero means at most one per Flush.
	AckInterval time.Duration

	// BacklogTimeout is how long the oldest reliable message may stay
	// unacknowledged before Backlogged reports the peer as stalled. Zero
	// means 10 s.
	BacklogTimeout time.Duration

	// OnAck, if not nil, is called once for every packet sent by
	// SendUnreliable or Flush when its first acknowledgement arrives, in
	// Receive, oldest first. It must not call methods of the Conn. Ack-only
	// packets are not reported.
	OnAck func(Seq)
}

// Validate returns nil when every field is in range, and otherwise an error
// matching ErrInvalidOptions that names the first bad field, its value and
// the allowed range.
func (o Options) Validate() error {
	o = o.withDefaults()
	ints := [...]struct {
		name      string
		v, lo, hi int
	}{
		{"MaxMessageSize", o.MaxMessageSize, 1, maxMessageSizeLimit},
		{"MaxQueuedBytes", o.MaxQueuedBytes, o.MaxMessageSize, maxBytesLimit},
		{"MaxReliablePending", o.MaxReliablePending, 1, maxReliablePendingLimit},
		{"MaxReceiveBytes", o.MaxReceiveBytes, maxSmallReliable, maxBytesLimit},
		{"SendBudget", o.SendBudget, 0, maxBytesLimit},
		{"ReliableBytesPerFlush", o.ReliableBytesPerFlush, 0, maxBytesLimit},
	}
	for _, f := range ints {
		if f.v < f.lo || f.v > f.hi {
			return &optionError{field: f.name, value: strconv.Itoa(f.v),
				allowed: "[" + strconv.Itoa(f.lo) + ", " + strconv.Itoa(f.hi) + "]"}
		}
	}
	durations := [...]struct {
		name string
		v    time.Duration
	}{{"AckInterval", o.AckInterval}, {"BacklogTimeout", o.BacklogTimeout}}
	for _, d := range durations {
		if d.v < 0 {
			return &optionError{field: d.name, value: d.v.String(), allowed: "[0s, ∞)"}
		}
	}
	return nil
}

// withDefaults replaces zero fields by their defaults. Negative values stay,
// for Validate to refuse.
func (o Options) withDefaults() Options {
	if o.MaxMessageSize == 0 {
		o.MaxMessageSize = defaultMaxMessageSize
	}
	if o.MaxQueuedBytes == 0 {
		o.MaxQueuedBytes = max(defaultMaxQueuedBytes, o.MaxMessageSize)
	}
	if o.MaxReliablePending == 0 {
		o.MaxReliablePending = defaultMaxReliablePending
	}
	if o.MaxReceiveBytes == 0 {
		o.MaxReceiveBytes = defaultMaxReceiveBytes
	}
	if o.BacklogTimeout == 0 {
		o.BacklogTimeout = defaultBacklogTimeout
	}
	return o
}

// optionError names the offending field, its value and the allowed range.
type optionError struct {
	field, value, allowed string
}

func (e *optionError) Error() string {
	return "packet: invalid Options." + e.field + " = " + e.value + ", want a value in " + e.allowed
}

func (e *optionError) Is(target error) bool { return target == ErrInvalidOptions }
