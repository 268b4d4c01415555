package udp

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ghostwire/ghostwire/transport"
)

// tickInterval is how often the timers run: often enough that keep-alives
// leave at close to 10 Hz.
const tickInterval = 25 * time.Millisecond

// readBufferSize is larger than any valid packet, so an oversized datagram
// is read whole enough to be seen as malformed.
const readBufferSize = 2048

// Listener is a netcode 1.02 server on a UDP socket. It implements
// transport.Listener: Accept hands out each client that completed the
// handshake as a *ServerConn. Two goroutines run until Close: one reads the
// socket, one runs the keep-alive and timeout timers. It is safe for
// concurrent use.
type Listener struct {
	s    *server
	out  *batchWriter
	conn *net.UDPConn
	// in, polled, pollMu and lastUpdate serve Options.Polled: Poll reads
	// with in, one caller at a time, and runs the timers every
	// tickInterval.
	in             *batchReader
	polled         bool
	pollMu         sync.Mutex
	lastUpdate     time.Time
	maxPollBatches int
	pollCapped     atomic.Uint64
	stop           chan struct{}
	wg             sync.WaitGroup
	once           sync.Once
}

var (
	_ transport.Listener = (*Listener)(nil)
	_ transport.Flusher  = (*Listener)(nil)
	_ transport.Poller   = (*Listener)(nil)
)

// Listen binds opts.BindAddress and starts serving. It returns an error
// matching ErrInvalidOptions for an all-zero private key, a field out of
// range, or no public address (unset while bound to an unspecified IP), and
// the socket's error when the bind fails.
func Listen(opts Options) (*Listener, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	bind, err := net.ResolveUDPAddr("udp", opts.BindAddress)
	if err != nil {
		return nil, fmt.Errorf("%w: BindAddress %q: %w", ErrInvalidOptions, opts.BindAddress, err)
	}
	conn, err := net.ListenUDP("udp", bind)
	if err != nil {
		return nil, err
	}
	local := normalize(conn.LocalAddr().(*net.UDPAddr).AddrPort())
	if !opts.PublicAddress.IsValid() {
		if local.Addr().IsUnspecified() {
			_ = conn.Close()
			return nil, fmt.Errorf("%w: bound to %v with no PublicAddress; tokens must name a specific address", ErrInvalidOptions, local)
		}
		opts.PublicAddress = local
	}
	out := &batchWriter{limit: max(opts.SendBatch, 1), out: newSendBatch(conn)}
	s, err := newServer(opts, out, time.Now())
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	l := &Listener{s: s, out: out, conn: conn, stop: make(chan struct{}), polled: opts.Polled, lastUpdate: time.Now(),
		maxPollBatches: maxPollBatches}
	if !opts.Polled || !pollable {
		l.wg.Add(1)
		go l.read()
	}
	if opts.Polled {
		l.in = newBatchReader(conn)
	} else {
		l.wg.Add(1)
		go l.tick()
	}
	return l, nil
}

// Poll reads every datagram that has arrived and handles it, runs the
// timers when they are due and flushes (Options.Polled). Without Polled
// it does nothing: goroutines read and run the timers. A Poll while
// another runs returns at once. It implements transport.Poller; it does
// not allocate.
func (l *Listener) Poll() {
	if !l.polled || !l.pollMu.TryLock() {
		return
	}
	defer l.pollMu.Unlock()
	if pollable && pollBatches(l.in, l.deliver, l.maxPollBatches) {
		l.pollCapped.Add(1)
	}
	if now := time.Now(); now.Sub(l.lastUpdate) >= tickInterval {
		l.lastUpdate = now
		l.s.update(now)
	}
	l.out.flush()
}

// maxPollBatches bounds one Poll's reading, 1,024 datagrams, so that a
// flood cannot hold the caller's tick: what is left waits in the
// socket's buffer for the next Poll (the kernel drops what overflows it).
const maxPollBatches = 32

// pollBatches reads up to limit batches without waiting and reports
// whether it stopped at the limit with datagrams perhaps left.
func pollBatches(in *batchReader, deliver func(netip.AddrPort, []byte), limit int) (capped bool) {
	for range limit {
		if n, err := in.poll(deliver); err != nil || n < readBatch {
			return false
		}
	}
	return true
}

// deliver hands one received datagram to the server.
func (l *Listener) deliver(from netip.AddrPort, p []byte) {
	l.s.receive(time.Now(), normalize(from), p)
}

// read hands every datagram to the server, a batch per system call where
// the platform allows (batchReader).
func (l *Listener) read() {
	defer l.wg.Done()
	b := newBatchReader(l.conn)
	deliver := l.deliver
	for {
		if err := b.read(deliver); err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // a transient error (such as an ICMP report) ends no one's connection
		}
		l.out.flush() // the handshake replies and keep-alives the batch asked for
	}
}

func (l *Listener) tick() {
	defer l.wg.Done()
	t := time.NewTicker(tickInterval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case now := <-t.C:
			l.s.update(now)
			l.out.flush() // keep-alives, and what a caller left unflushed
		}
	}
}

// Addr returns the bound local address.
func (l *Listener) Addr() netip.AddrPort {
	return normalize(l.conn.LocalAddr().(*net.UDPAddr).AddrPort())
}

// PublicAddress returns the address tokens must name for this server.
func (l *Listener) PublicAddress() netip.AddrPort {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	return l.s.opts.PublicAddress
}

// SetPublicAddress changes the address tokens must name, for a server
// that learns it after it listens (Agones assigns a game server's public
// address and port; see systems/agones): from now on a token naming only
// the old address is refused (Stats.WrongAddress), and connections
// already made are kept. It errors, changing nothing, on an address
// without a specific IP and a port.
func (l *Listener) SetPublicAddress(a netip.AddrPort) error {
	a = normalize(a)
	if !a.IsValid() || a.Addr().IsUnspecified() || a.Port() == 0 {
		return fmt.Errorf("%w: public address %v: want a specific IP and a port 1..65535", ErrInvalidOptions, a)
	}
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	l.s.opts.PublicAddress = a
	return nil
}

// Accept returns the oldest connected client not yet accepted, as a
// *ServerConn, or false when there is none. It never blocks.
func (l *Listener) Accept() (transport.Conn, bool) {
	c, ok := l.s.acceptConn()
	if !ok {
		return nil, false
	}
	return c, true
}

// Stats returns the server's counters of refused traffic and dropped
// connections, and of its writes.
func (l *Listener) Stats() Stats {
	st := l.s.snapshot()
	st.Writes, st.Written = l.out.counts()
	st.PollCapped = l.pollCapped.Load()
	return st
}

// Flush writes every datagram the connections queued (Options.SendBatch),
// with as few system calls as the batch size allows. It implements
// transport.Flusher; it does not allocate.
func (l *Listener) Flush() { l.out.flush() }

// Close sends the redundant disconnect packets to every client, closes the
// socket and waits for the background goroutines to end. Closing twice
// returns transport.ErrClosed.
func (l *Listener) Close() error {
	err := transport.ErrClosed
	l.once.Do(func() {
		l.s.close(time.Now())
		l.out.flush() // the disconnect packets
		close(l.stop)
		err = l.conn.Close()
		l.wg.Wait()
	})
	return err
}
