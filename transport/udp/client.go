package udp

import (
	"context"
	"crypto/cipher"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/ghostwire/ghostwire/transport"
	"golang.org/x/crypto/chacha20poly1305"
)

// State is where a Client is in its life.
type State int32

// Client states. Connecting is the only state that can lead to Connected;
// every state after Connected is final.
const (
	StateConnecting   State = iota // sending requests, then challenge responses
	StateConnected                 // the server sent a keep-alive; payloads flow
	StateDenied                    // every server address denied the connection (full)
	StateTimedOut                  // no answer, or silence past the token's timeout
	StateTokenExpired              // the token expired before a server accepted it
	StateDisconnected              // either side disconnected
)

func (s State) String() string {
	switch s {
	case StateConnecting:
		return "connecting"
	case StateConnected:
		return "connected"
	case StateDenied:
		return "denied"
	case StateTimedOut:
		return "timed out"
	case StateTokenExpired:
		return "token expired"
	case StateDisconnected:
		return "disconnected"
	}
	return "State(" + fmt.Sprint(int32(s)) + ")"
}

var (
	// ErrDenied: the server was full.
	ErrDenied = errors.New("udp: connection denied")
	// ErrTokenExpired: the connect token expired before a server accepted it.
	ErrTokenExpired = errors.New("udp: connect token expired")
	// ErrNotConnected is returned by Client.Send before the client connected.
	ErrNotConnected = errors.New("udp: not connected yet")
)

// ClientOptions configures a Client. The zero value is ready to use.
type ClientOptions struct {
	// BindAddress is the local UDP address; empty means any address and an
	// ephemeral port.
	BindAddress string
	// QueueBytes bounds the received payloads waiting for Receive, two bytes
	// of overhead each; when it fills, the client disconnects (the
	// application stopped reading). Zero means DefaultQueueBytes.
	QueueBytes int
	// Polled makes the Client read its socket and run its timers only in
	// Poll, with no goroutine of its own (see Options.Polled): call Poll
	// every frame, at least every 25 ms; WaitConnected polls while it
	// waits. systems.Client polls at the start of every Update.
	Polled bool
	// Logger receives state changes at debug level; nil discards them.
	Logger *slog.Logger
}

// connecting sub-states.
const (
	sendingRequest  = 0
	sendingResponse = 1
)

// Client is a netcode 1.02 client: it connects with a connect token to the
// token's server addresses in turn and then implements transport.Conn. Two
// goroutines run until Close (none with ClientOptions.Polled, whose Poll
// does their work): one reads the socket, one sends requests,
// responses and keep-alives at 10 Hz and watches the timeouts. Always call
// Close. It is safe for concurrent use.
type Client struct {
	token     *ConnectToken
	conn      *net.UDPConn
	c2s, s2c  cipher.AEAD
	log       *slog.Logger
	start     time.Time
	expire    int64 // client clock: the token's lifetime, counted from Dial
	timeout   int64 // nanoseconds; 0 = the token disabled it
	stop      chan struct{}
	connected chan struct{} // closed on connection
	ended     chan struct{} // closed when the state becomes final
	wg        sync.WaitGroup
	// in, polled, pollMu and lastUpdate serve ClientOptions.Polled, as on
	// the Listener.
	in         *batchReader
	polled     bool
	pollMu     sync.Mutex
	lastUpdate time.Time

	mu           sync.Mutex
	state        State
	sub          int // sendingRequest or sendingResponse while connecting
	reason       error
	addrIndex    int
	server       netip.AddrPort
	attemptStart int64
	lastSent     int64
	lastRecv     int64
	sendSeq      uint64
	challenge    [challengeBodySize]byte
	clientIndex  uint32
	maxClients   uint32
	replay       replayWindow
	queue        byteQueue
	stats        transport.Stats
	counters     Stats
	localClosed  bool
	request      [requestPacketSize]byte
	sendBuf      [maxPacketSize]byte
	plain        [maxPacketSize]byte
	sc           scratch
}

var (
	_ transport.Conn   = (*Client)(nil)
	_ transport.Poller = (*Client)(nil)
)

// Dial parses a connect token and starts connecting to its first server
// address; it does not wait (see WaitConnected). It returns an error
// matching ErrInvalidToken for a token ParseConnectToken refuses, an error
// matching ErrInvalidOptions for a QueueBytes that cannot hold one full
// datagram, and the socket's error when the bind fails.
func Dial(token []byte, opts ClientOptions) (*Client, error) {
	t, err := ParseConnectToken(token)
	if err != nil {
		return nil, err
	}
	if opts.QueueBytes == 0 {
		opts.QueueBytes = DefaultQueueBytes
	}
	if opts.QueueBytes < 2+transport.MaxDatagramSize {
		return nil, fmt.Errorf("%w: QueueBytes %d cannot hold one full datagram (%d bytes)", ErrInvalidOptions, opts.QueueBytes, 2+transport.MaxDatagramSize)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	var bind *net.UDPAddr
	if opts.BindAddress != "" {
		if bind, err = net.ResolveUDPAddr("udp", opts.BindAddress); err != nil {
			return nil, fmt.Errorf("%w: BindAddress %q: %w", ErrInvalidOptions, opts.BindAddress, err)
		}
	}
	c2s, _ := chacha20poly1305.New(t.ClientToServerKey[:]) // cannot fail: the key is KeySize bytes
	s2c, _ := chacha20poly1305.New(t.ServerToClientKey[:])
	conn, err := net.ListenUDP("udp", bind)
	if err != nil {
		return nil, err
	}
	c := &Client{
		token:     t,
		conn:      conn,
		c2s:       c2s,
		s2c:       s2c,
		log:       opts.Logger,
		start:     time.Now(),
		expire:    int64(time.Duration(t.ExpireTimestamp-t.CreateTimestamp) * time.Second),
		stop:      make(chan struct{}),
		connected: make(chan struct{}),
		ended:     make(chan struct{}),
		queue:     newByteQueue(opts.QueueBytes),
	}
	if t.TimeoutSeconds > 0 {
		c.timeout = int64(time.Duration(t.TimeoutSeconds) * time.Second)
	}
	appendRequest(c.request[:0], t)
	c.mu.Lock()
	c.tryAddressLocked(0, 0)
	c.mu.Unlock()
	c.polled, c.lastUpdate = opts.Polled, c.start
	if !opts.Polled || !pollable {
		c.wg.Add(1)
		go c.read()
	}
	if opts.Polled {
		c.in = newBatchReader(conn)
	} else {
		c.wg.Add(1)
		go c.tick()
	}
	return c, nil
}

// Poll reads every datagram that has arrived and handles it, and runs
// the timers when they are due (ClientOptions.Polled). Without Polled it
// does nothing. A Poll while another runs returns at once. It implements
// transport.Poller; it does not allocate.
func (c *Client) Poll() {
	if !c.polled || !c.pollMu.TryLock() {
		return
	}
	defer c.pollMu.Unlock()
	if pollable && pollBatches(c.in, c.deliver, maxPollBatches) {
		c.mu.Lock()
		c.counters.PollCapped++
		c.mu.Unlock()
	}
	if now := time.Now(); now.Sub(c.lastUpdate) >= tickInterval {
		c.lastUpdate = now
		c.update(now)
	}
}

// deliver hands one received datagram to the client.
func (c *Client) deliver(from netip.AddrPort, p []byte) { c.receive(time.Now(), normalize(from), p) }

func (c *Client) clock(now time.Time) int64 { return int64(now.Sub(c.start)) }

func (c *Client) read() {
	defer c.wg.Done()
	var buf [readBufferSize]byte
	for {
		n, from, err := c.conn.ReadFromUDPAddrPort(buf[:])
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		c.receive(time.Now(), normalize(from), buf[:n])
	}
}

func (c *Client) tick() {
	defer c.wg.Done()
	t := time.NewTicker(tickInterval)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case now := <-t.C:
			c.update(now)
		}
	}
}

// tryAddressLocked starts a connection attempt at server address i and sends
// the first request.
func (c *Client) tryAddressLocked(i int, mono int64) {
	c.addrIndex = i
	c.server = c.token.ServerAddresses[i]
	c.sub = sendingRequest
	c.attemptStart = mono
	c.replay = replayWindow{}
	c.sendRequestLocked(mono)
}

func (c *Client) sendRequestLocked(mono int64) {
	c.lastSent = mono
	_, _ = c.conn.WriteToUDPAddrPort(c.request[:], c.server)
}

func (c *Client) sendLocked(mono int64, typ byte, body []byte) {
	b := sealPacket(c.sendBuf[:], &c.sc, c.c2s, c.token.ProtocolID, typ, c.sendSeq, body)
	c.sendSeq++
	c.lastSent = mono
	_, _ = c.conn.WriteToUDPAddrPort(b, c.server)
}

// failLocked moves to the next server address or, after the last one, ends
// the client in state with reason.
func (c *Client) failLocked(mono int64, state State, reason error) {
	if c.addrIndex+1 < len(c.token.ServerAddresses) {
		c.tryAddressLocked(c.addrIndex+1, mono)
		return
	}
	c.endLocked(state, reason)
}

// endLocked makes state final.
func (c *Client) endLocked(state State, reason error) {
	if c.state != StateConnecting && c.state != StateConnected {
		return
	}
	c.state = state
	c.reason = reason
	close(c.ended)
	c.log.Debug("udp: client ended", "state", state, "reason", reason)
}

// update runs the client's timers.
func (c *Client) update(now time.Time) {
	mono := c.clock(now)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch c.state {
	case StateConnecting:
		if mono >= c.expire {
			c.endLocked(StateTokenExpired, fmt.Errorf("%w: no server accepted it within %v", ErrTokenExpired, time.Duration(c.expire)))
			return
		}
		if c.timeout > 0 && mono-c.attemptStart > c.timeout {
			c.counters.Timeout++
			c.failLocked(mono, StateTimedOut, fmt.Errorf("%w: no answer from %v", ErrTimedOut, c.server))
			return
		}
		if mono-c.lastSent < int64(keepAliveInterval) {
			return
		}
		if c.sub == sendingRequest {
			c.sendRequestLocked(mono)
		} else {
			c.sendLocked(mono, packetResponse, c.challenge[:])
		}
	case StateConnected:
		if c.timeout > 0 && mono-c.lastRecv > c.timeout {
			c.counters.Timeout++
			c.endLocked(StateTimedOut, fmt.Errorf("%w: nothing from %v for %v", ErrTimedOut, c.server, time.Duration(c.timeout)))
			return
		}
		if mono-c.lastSent >= int64(keepAliveInterval) {
			body := c.sc.body[:keepAliveBodySize]
			binary.LittleEndian.PutUint32(body, c.clientIndex)
			binary.LittleEndian.PutUint32(body[4:], c.maxClients)
			c.sendLocked(mono, packetKeepAlive, body)
		}
	}
}

// receive processes one datagram. It never panics, and a datagram that fails
// a check costs no allocation.
func (c *Client) receive(now time.Time, from netip.AddrPort, pkt []byte) {
	mono := c.clock(now)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != StateConnecting && c.state != StateConnected {
		return
	}
	if from != c.server {
		c.counters.UnknownClient++
		return
	}
	typ, seq, bodyAt, ok := peekHeader(pkt)
	if !ok || typ == packetResponse {
		c.counters.Malformed++ // a client never receives requests or responses
		return
	}
	body, res := openPacket(pkt, &c.sc, typ, seq, bodyAt, c.s2c, c.token.ProtocolID, &c.replay, c.plain[:])
	switch res {
	case readReplayed:
		c.counters.Replayed++
		return
	case readAuth:
		c.counters.AuthFailed++
		return
	case readBadSize:
		c.counters.Malformed++
		return
	}
	connecting := c.state == StateConnecting
	switch {
	case typ == packetDenied && connecting:
		c.counters.ServerFull++
		c.failLocked(mono, StateDenied, fmt.Errorf("%w by %v", ErrDenied, c.server))
	case typ == packetChallenge && connecting && c.sub == sendingRequest:
		copy(c.challenge[:], body)
		c.sub = sendingResponse
		c.attemptStart = mono
		c.sendLocked(mono, packetResponse, c.challenge[:])
	case typ == packetKeepAlive && connecting && c.sub == sendingResponse:
		c.clientIndex = binary.LittleEndian.Uint32(body)
		c.maxClients = binary.LittleEndian.Uint32(body[4:])
		c.state = StateConnected
		c.lastRecv = mono
		close(c.connected)
		c.log.Debug("udp: client connected", "server", c.server, "index", c.clientIndex)
	case typ == packetKeepAlive && !connecting:
		c.lastRecv = mono
	case typ == packetPayload && !connecting:
		c.lastRecv = mono
		if !c.queue.push(body) {
			c.counters.QueueFull++
			c.disconnectLocked(mono)
			c.endLocked(StateDisconnected, ErrQueueFull)
		}
	case typ == packetDisconnect && !connecting:
		c.endLocked(StateDisconnected, ErrPeerDisconnected)
	}
}

// disconnectLocked sends the redundant disconnect packets.
func (c *Client) disconnectLocked(mono int64) {
	for range redundantDisconnects {
		c.sendLocked(mono, packetDisconnect, nil)
	}
}

// State returns the client's current state.
func (c *Client) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// Err returns nil while the client is connecting or connected, and
// afterwards why it ended: an error matching ErrDenied, ErrTimedOut,
// ErrTokenExpired, ErrPeerDisconnected, ErrQueueFull or ErrLocalClose.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reason
}

// WaitConnected blocks until the client connects (nil), its state becomes
// final without connecting (Err), or ctx ends (ctx.Err()). With
// ClientOptions.Polled it polls every millisecond while it waits.
func (c *Client) WaitConnected(ctx context.Context) error {
	if c.polled {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			c.Poll()
			select {
			case <-c.connected:
				return nil
			case <-c.ended:
				return c.endedErr()
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
			}
		}
	}
	select {
	case <-c.connected:
		return nil
	case <-c.ended:
		return c.endedErr()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// endedErr is WaitConnected's answer once the state is final: nil when
// the client had connected first.
func (c *Client) endedErr() error {
	select {
	case <-c.connected:
		return nil
	default:
		return c.Err()
	}
}

// ClientIndex returns the slot the server gave this client and the server's
// max clients, as the connecting keep-alive said; zeros before that.
func (c *Client) ClientIndex() (index, maxClients int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return int(c.clientIndex), int(c.maxClients)
}

// LocalAddr returns the client's bound address.
func (c *Client) LocalAddr() netip.AddrPort {
	return normalize(c.conn.LocalAddr().(*net.UDPAddr).AddrPort())
}

// ServerAddr returns the server address the client is trying or connected to.
func (c *Client) ServerAddr() netip.AddrPort {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.server
}

// Send encrypts p into a payload packet and sends it. It returns an error
// matching transport.ErrDatagramSize for p outside
// 1..transport.MaxDatagramSize bytes, ErrNotConnected while connecting and
// transport.ErrClosed once the client's state is final. It does not
// allocate.
func (c *Client) Send(p []byte) error {
	if len(p) == 0 || len(p) > transport.MaxDatagramSize {
		return sizeError(len(p))
	}
	mono := c.clock(time.Now())
	c.mu.Lock()
	defer c.mu.Unlock()
	switch c.state {
	case StateConnected:
	case StateConnecting:
		return ErrNotConnected
	default:
		return transport.ErrClosed
	}
	c.stats.Sent++
	c.stats.SentBytes += uint64(len(p))
	c.sendLocked(mono, packetPayload, p)
	return nil
}

// Receive copies the oldest received payload into buf. A payload longer
// than buf is discarded and counted in Stats.Truncated. Payloads that
// arrived before the connection ended can be received until Close. It does
// not allocate.
func (c *Client) Receive(buf []byte) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.localClosed {
		return 0, false
	}
	return receiveQueued(&c.queue, &c.stats, buf)
}

// Close sends the redundant disconnect packets if connected, closes the
// socket and waits for the background goroutines to end. Closing twice
// returns transport.ErrClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.localClosed {
		c.mu.Unlock()
		return transport.ErrClosed
	}
	c.localClosed = true
	c.queue = byteQueue{}
	if c.state == StateConnected {
		c.disconnectLocked(c.clock(time.Now()))
	}
	c.endLocked(StateDisconnected, ErrLocalClose)
	c.mu.Unlock()
	close(c.stop)
	err := c.conn.Close()
	c.wg.Wait()
	return err
}

// Stats returns the payload counters: sent, received, and discarded by
// Receive for a short buffer (Truncated).
func (c *Client) Stats() transport.Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// Counters returns the client's counters of refused packets by reason.
func (c *Client) Counters() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counters
}
