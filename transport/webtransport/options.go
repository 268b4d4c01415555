package webtransport

import (
	"fmt"
	"time"
)

// DefaultQueueLen is the length of a connection's send and receive queues
// when Options leaves them zero: about four seconds of traffic at 60
// datagrams a second, at most 300 KB of buffers per queue.
const DefaultQueueLen = 256

// DefaultFlushTimeout is Options.FlushTimeout when it is zero.
const DefaultFlushTimeout = 2 * time.Second

// DefaultReceiveRate limits what one peer may send when Options leaves
// ReceiveRate zero: several times what a game client sends at 60 Hz, so
// only a flood meets it.
var DefaultReceiveRate = Rate{Datagrams: 512, Bytes: 1 << 20}

// DefaultSendRate paces what a connection sends when Options leaves
// SendRate zero: the peer's DefaultReceiveRate, in bursts of at most 16
// datagrams, half what quic-go queues for a session that has not read
// yet.
var DefaultSendRate = Rate{Datagrams: 512, Bytes: 1 << 20, Burst: 1.0 / 32}

// Rate is a token bucket: Datagrams and Bytes per second, sustained, with
// Burst seconds of either held when the bucket is full (zero means one
// second, allowed 0..60). A zero Rate means the default of the field it
// sets; a negative Datagrams or Bytes disables that half, and zero in
// one half of a Rate that sets the other is refused.
type Rate struct {
	Datagrams float64
	Bytes     float64
	Burst     float64
}

// Options tunes a connection. The zero value gives the defaults.
type Options struct {
	// SendQueue bounds the datagrams Send has queued that the writer
	// goroutine has not yet handed to the session. A Send that finds it
	// full drops the datagram and counts it in Stats.Dropped, like a full
	// socket buffer. Zero or negative means DefaultQueueLen.
	SendQueue int

	// ReceiveQueue bounds the datagrams that have arrived but not yet been
	// returned by Receive. A datagram that finds it full is dropped and
	// counted in this end's Stats.Dropped. Zero or negative means
	// DefaultQueueLen.
	ReceiveQueue int

	// ReceiveRate limits the datagrams taken from the peer; one over it is
	// dropped on arrival and counted in Stats.Dropped, so a flooding peer
	// costs the game loop nothing.
	ReceiveRate Rate

	// SendRate paces the writer goroutine: a burst of Sends waits in the
	// send queue and leaves at this rate. QUIC does not stop a sender
	// from outrunning its peer's reads, and the datagrams a peer's QUIC
	// stack cannot queue are dropped there, where nothing counts them;
	// here a burst over SendQueue is dropped and counted in Stats.Dropped.
	SendRate Rate

	// FlushTimeout bounds how long a closed connection waits for its peer
	// to confirm the close (see the package doc) before it ends the
	// session itself. Zero or negative means DefaultFlushTimeout.
	FlushTimeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.SendQueue <= 0 {
		o.SendQueue = DefaultQueueLen
	}
	if o.ReceiveQueue <= 0 {
		o.ReceiveQueue = DefaultQueueLen
	}
	if o.ReceiveRate == (Rate{}) {
		o.ReceiveRate = DefaultReceiveRate
	}
	if o.SendRate == (Rate{}) {
		o.SendRate = DefaultSendRate
	}
	if o.FlushTimeout <= 0 {
		o.FlushTimeout = DefaultFlushTimeout
	}
	return o
}

// validate returns an error naming the first field of o out of range.
func (o Options) validate() error {
	for _, r := range []struct {
		name string
		Rate
	}{{"ReceiveRate", o.ReceiveRate}, {"SendRate", o.SendRate}} {
		switch {
		case r.Rate == (Rate{}):
		case r.Burst < 0 || r.Burst > 60:
			return fmt.Errorf("webtransport: %s.Burst %v s: allowed range is 0..60", r.name, r.Burst)
		case r.Datagrams == 0 || r.Bytes == 0:
			return fmt.Errorf("webtransport: %s %+v: Datagrams and Bytes must each be positive, or negative for no limit", r.name, r.Rate)
		}
	}
	return nil
}
