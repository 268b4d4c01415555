package udp

import (
	"crypto/cipher"
	"encoding/binary"
	"math"
	"net/netip"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/ghostwire/ghostwire/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/chacha20poly1305"
)

// fakeWriter records what a server sends, per address.
type fakeWriter struct {
	mu      sync.Mutex
	packets map[netip.AddrPort][][]byte
	bytes   map[netip.AddrPort]int
}

func newFakeWriter() *fakeWriter {
	return &fakeWriter{packets: map[netip.AddrPort][][]byte{}, bytes: map[netip.AddrPort]int{}}
}

func (w *fakeWriter) WriteToUDPAddrPort(b []byte, a netip.AddrPort) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.packets[a] = append(w.packets[a], append([]byte(nil), b...))
	w.bytes[a] += len(b)
	return len(b), nil
}

// take returns and forgets the packets sent to a.
func (w *fakeWriter) take(a netip.AddrPort) [][]byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.packets[a]
	delete(w.packets, a)
	return p
}

func (w *fakeWriter) sentTo(a netip.AddrPort) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.bytes[a]
}

// discardWriter counts and drops, without allocating.
type discardWriter struct{ packets, bytes int }

func (w *discardWriter) WriteToUDPAddrPort(b []byte, _ netip.AddrPort) (int, error) {
	w.packets++
	w.bytes += len(b)
	return len(b), nil
}

// newTestServer returns a server with public address testServerAddr and the
// vector key, sending into a fakeWriter, and its clock's origin.
func newTestServer(t testing.TB, mutate func(*Options)) (*server, *fakeWriter, time.Time) {
	t.Helper()
	opts := Options{PrivateKey: vectorKey(), ProtocolID: vectorProtocol, PublicAddress: testServerAddr}
	if mutate != nil {
		mutate(&opts)
	}
	opts, err := opts.withDefaults()
	require.NoError(t, err)
	w := newFakeWriter()
	t0 := time.Now()
	s, err := newServer(opts, w, t0)
	require.NoError(t, err)
	return s, w, t0
}

// fakeClient speaks the client side of the protocol by hand, so tests can
// drive server.receive with any source address.
type fakeClient struct {
	addr     netip.AddrPort
	tok      *ConnectToken
	c2s, s2c cipher.AEAD
	seq      uint64
	replay   replayWindow
	sc       scratch
}

func newFakeClient(t testing.TB, addr netip.AddrPort, p TokenParams) *fakeClient {
	t.Helper()
	_, tok := makeTestToken(t, p)
	c2s, _ := chacha20poly1305.New(tok.ClientToServerKey[:])
	s2c, _ := chacha20poly1305.New(tok.ServerToClientKey[:])
	return &fakeClient{addr: addr, tok: tok, c2s: c2s, s2c: s2c}
}

func (fc *fakeClient) request() []byte { return appendRequest(nil, fc.tok) }

func (fc *fakeClient) seal(typ byte, body []byte) []byte {
	b := sealPacket(make([]byte, maxPacketSize), &fc.sc, fc.c2s, fc.tok.ProtocolID, typ, fc.seq, body)
	fc.seq++
	return b
}

// open reads a packet the server sent to the client.
func (fc *fakeClient) open(t testing.TB, pkt []byte) (byte, []byte) {
	t.Helper()
	typ, seq, at, ok := peekHeader(pkt)
	require.True(t, ok)
	body, res := openPacket(pkt, &scratch{}, typ, seq, at, fc.s2c, fc.tok.ProtocolID, &fc.replay, make([]byte, len(pkt)))
	require.Equal(t, readOK, res)
	return typ, append([]byte(nil), body...)
}

// handshake connects fc to s at time now and returns the server's conn.
func handshake(t testing.TB, s *server, w *fakeWriter, fc *fakeClient, now time.Time) *ServerConn {
	t.Helper()
	s.receive(now, fc.addr, fc.request())
	sent := w.take(fc.addr)
	require.Len(t, sent, 1, "one challenge per request")
	typ, body := fc.open(t, sent[0])
	require.Equal(t, byte(packetChallenge), typ)
	s.receive(now, fc.addr, fc.seal(packetResponse, body))
	sent = w.take(fc.addr)
	require.Len(t, sent, 1, "one keep-alive on connection")
	typ, body = fc.open(t, sent[0])
	require.Equal(t, byte(packetKeepAlive), typ)
	c := s.byAddr[fc.addr]
	require.NotNil(t, c)
	assert.Equal(t, uint32(c.index), binary.LittleEndian.Uint32(body))
	assert.Equal(t, uint32(len(s.slots)), binary.LittleEndian.Uint32(body[4:]))
	return c
}

func addr(i int) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), 5000)
}

func TestServerHandshakeAndPayloads(t *testing.T) {
	s, w, t0 := newTestServer(t, nil)
	fc := newFakeClient(t, addr(1), testParams())
	c := handshake(t, s, w, fc, t0)
	assert.Equal(t, uint64(77), c.ClientID())
	assert.Equal(t, testParams().UserData, c.UserData())

	acc, ok := s.acceptConn()
	require.True(t, ok)
	assert.Same(t, c, acc)
	_, ok = s.acceptConn()
	assert.False(t, ok)

	// Unconfirmed: a payload goes out after a keep-alive.
	require.NoError(t, c.Send([]byte("down")))
	sent := w.take(fc.addr)
	require.Len(t, sent, 2)
	typ, _ := fc.open(t, sent[0])
	assert.Equal(t, byte(packetKeepAlive), typ)
	typ, body := fc.open(t, sent[1])
	assert.Equal(t, byte(packetPayload), typ)
	assert.Equal(t, "down", string(body))

	s.receive(t0, fc.addr, fc.seal(packetPayload, []byte("up")))
	buf := make([]byte, 1200)
	n, ok := c.Receive(buf)
	require.True(t, ok)
	assert.Equal(t, "up", string(buf[:n]))
	assert.True(t, c.confirmed, "a payload confirms the slot")
	require.NoError(t, c.Send([]byte("x")))
	assert.Len(t, w.take(fc.addr), 1, "confirmed: no keep-alive before payloads")

	// Keep-alives at 10 Hz while quiet, counted from the last send (which
	// Send stamped with the real clock).
	lastSent := t0.Add(time.Duration(c.lastSent))
	s.update(lastSent.Add(keepAliveInterval / 2))
	assert.Empty(t, w.take(fc.addr))
	s.update(lastSent.Add(keepAliveInterval))
	sent = w.take(fc.addr)
	require.Len(t, sent, 1)
	typ, _ = fc.open(t, sent[0])
	assert.Equal(t, byte(packetKeepAlive), typ)

	// The client disconnects.
	s.receive(t0, fc.addr, fc.seal(packetDisconnect, nil))
	assert.ErrorIs(t, c.Err(), ErrPeerDisconnected)
	assert.Empty(t, s.byAddr)
	assert.Nil(t, s.slots[0], "slot freed")
}

func TestServerRefusesTokens(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*TokenParams)
		count  func(Stats) uint64
	}{
		{"another key", func(p *TokenParams) { p.PrivateKey[0] ^= 1 }, func(s Stats) uint64 { return s.BadToken }},
		{"expired", func(p *TokenParams) {
			p.Create, p.Expire = time.Now().Add(-2*time.Minute), time.Now().Add(-time.Minute)
		}, func(s Stats) uint64 { return s.ExpiredToken }},
		{"another server", func(p *TokenParams) {
			p.ServerAddresses = []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:40001")}
		}, func(s Stats) uint64 { return s.WrongAddress }},
		{"another protocol", func(p *TokenParams) { p.ProtocolID++ }, func(s Stats) uint64 { return s.WrongProtocol }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, w, t0 := newTestServer(t, nil)
			p := testParams()
			tc.mutate(&p)
			fc := newFakeClient(t, addr(1), p)
			for range 3 {
				s.receive(t0, fc.addr, fc.request())
			}
			assert.Equal(t, uint64(3), tc.count(s.stats))
			assert.Zero(t, w.sentTo(fc.addr), "a refused request gets no reply")
			assert.Empty(t, s.pending)
			assert.Empty(t, s.byAddr)
			_, ok := s.acceptConn()
			assert.False(t, ok)
			// Not even a forged response gets it in.
			s.receive(t0, fc.addr, fc.seal(packetResponse, make([]byte, challengeBodySize)))
			assert.Equal(t, uint64(1), s.stats.UnknownClient)
			assert.Empty(t, s.byAddr)
		})
	}
}

func TestServerTokenReuseAndClientInUse(t *testing.T) {
	s, w, t0 := newTestServer(t, nil)
	fc := newFakeClient(t, addr(1), testParams())
	s.receive(t0, fc.addr, fc.request())
	thief := *fc
	thief.addr = addr(2)
	s.receive(t0, thief.addr, thief.request())
	assert.Equal(t, uint64(1), s.stats.TokenReused)
	assert.Zero(t, w.sentTo(thief.addr))

	handshakeFrom(t, s, w, fc, t0)
	other := newFakeClient(t, addr(3), testParams()) // same client ID 77, fresh token
	s.receive(t0, other.addr, other.request())
	assert.Equal(t, uint64(1), s.stats.ClientInUse)
	assert.Zero(t, w.sentTo(other.addr))

	// A token connects once, even from its own address: a second connection
	// under the same keys would repeat the server's nonces.
	s.receive(t0, fc.addr, fc.seal(packetDisconnect, nil))
	require.Nil(t, s.byAddr[fc.addr])
	s.receive(t0, fc.addr, fc.request())
	assert.Equal(t, uint64(2), s.stats.TokenReused)
	assert.Empty(t, w.take(fc.addr), "no challenge")
	assert.Empty(t, s.pending)
}

// handshakeFrom finishes a handshake whose request was already received.
func handshakeFrom(t testing.TB, s *server, w *fakeWriter, fc *fakeClient, now time.Time) {
	t.Helper()
	sent := w.take(fc.addr)
	require.NotEmpty(t, sent)
	_, body := fc.open(t, sent[len(sent)-1])
	s.receive(now, fc.addr, fc.seal(packetResponse, body))
	require.NotNil(t, s.byAddr[fc.addr])
	w.take(fc.addr)
}

func TestServerReplayFlipSpoof(t *testing.T) {
	s, w, t0 := newTestServer(t, nil)
	fc := newFakeClient(t, addr(1), testParams())
	c := handshake(t, s, w, fc, t0)
	buf := make([]byte, 1200)

	captured := fc.seal(packetPayload, []byte("once"))
	s.receive(t0, fc.addr, captured)
	s.receive(t0, fc.addr, captured)
	assert.Equal(t, uint64(1), s.stats.Replayed)
	_, ok := c.Receive(buf)
	assert.True(t, ok)
	_, ok = c.Receive(buf)
	assert.False(t, ok, "the replay delivered nothing")

	flipped := fc.seal(packetPayload, []byte("flip"))
	flipped[len(flipped)-20] ^= 1
	s.receive(t0, fc.addr, flipped)
	assert.Equal(t, uint64(1), s.stats.AuthFailed)
	_, ok = c.Receive(buf)
	assert.False(t, ok)

	// A valid client's header from another address: another source, no connection.
	lastRecv := c.lastRecv
	for _, typ := range []byte{packetKeepAlive, packetPayload, packetDisconnect} {
		s.receive(t0.Add(time.Second), addr(2), fc.seal(typ, map[byte][]byte{
			packetKeepAlive: make([]byte, 8), packetPayload: []byte("spoof"),
		}[typ]))
	}
	s.receive(t0.Add(time.Second), addr(2), captured)
	assert.Equal(t, uint64(4), s.stats.UnknownClient)
	assert.Zero(t, w.sentTo(addr(2)), "no reply to the spoofer")
	assert.Equal(t, lastRecv, c.lastRecv, "the connection saw nothing")
	assert.NoError(t, c.Err(), "the spoofed disconnect did nothing")
	_, ok = c.Receive(buf)
	assert.False(t, ok)
}

func TestServerAmplificationGuard(t *testing.T) {
	s, w, t0 := newTestServer(t, nil)
	fc := newFakeClient(t, addr(1), testParams())
	received := 0
	for i := range 50 {
		req := fc.request()
		s.receive(t0.Add(time.Duration(i)*100*time.Millisecond), fc.addr, req)
		received += len(req)
		// Junk responses grow the budget no faster than they arrive.
		junk := make([]byte, 40)
		junk[0] = 0x13
		s.receive(t0, fc.addr, junk)
		received += len(junk)
		assert.Less(t, w.sentTo(fc.addr), received, "after %d requests", i+1)
	}
	assert.Equal(t, 50*maxChallengePacketSize, w.sentTo(fc.addr), "one challenge per request, never more")
	assert.Less(t, w.sentTo(fc.addr), received/3)
	p := s.pending[fc.addr]
	require.NotNil(t, p)
	assert.LessOrEqual(t, p.sent, p.received, "the pending handshake's own books agree")
}

func TestServerJunkDoesNotRefreshTimeouts(t *testing.T) {
	s, w, t0 := newTestServer(t, func(o *Options) { o.HandshakeTimeout = time.Second })
	pend := newFakeClient(t, addr(1), testParams())
	s.receive(t0, pend.addr, pend.request())
	params := testParams()
	params.ClientID = 78
	conn := newFakeClient(t, addr(2), params)
	c := handshake(t, s, w, conn, t0)

	for i := range 60 {
		now := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		junk := conn.seal(packetKeepAlive, make([]byte, 8))
		junk[len(junk)-1] ^= 1
		s.receive(now, conn.addr, junk)
		s.receive(now, pend.addr, pend.seal(packetResponse, make([]byte, challengeBodySize))) // a forged challenge token
		s.update(now)
	}
	assert.Equal(t, uint64(1), s.stats.PendingExpired, "the handshake expired despite the junk")
	assert.Empty(t, s.pending)
	assert.Positive(t, s.stats.BadToken)
	assert.Equal(t, uint64(1), s.stats.Timeout, "the connection timed out despite the junk")
	assert.ErrorIs(t, c.Err(), ErrTimedOut)
	assert.Positive(t, s.stats.AuthFailed)
}

func TestServerFullDenies(t *testing.T) {
	s, w, t0 := newTestServer(t, func(o *Options) { o.MaxClients = 1 })
	handshake(t, s, w, newFakeClient(t, addr(1), testParams()), t0)
	params := testParams()
	params.ClientID = 2
	fc := newFakeClient(t, addr(2), params)
	s.receive(t0, fc.addr, fc.request())
	sent := w.take(fc.addr)
	require.Len(t, sent, 1)
	assert.Len(t, sent[0], deniedPacketSize)
	typ, _ := fc.open(t, sent[0])
	assert.Equal(t, byte(packetDenied), typ)
	assert.Equal(t, uint64(1), s.stats.ServerFull)
	assert.Empty(t, s.pending)
}

func TestServerFullAtResponse(t *testing.T) {
	s, w, t0 := newTestServer(t, func(o *Options) { o.MaxClients = 1 })
	a := newFakeClient(t, addr(1), testParams())
	params := testParams()
	params.ClientID = 2
	b := newFakeClient(t, addr(2), params)
	s.receive(t0, a.addr, a.request())
	s.receive(t0, b.addr, b.request())
	handshakeFrom(t, s, w, a, t0)
	_, body := b.open(t, w.take(b.addr)[0])
	s.receive(t0, b.addr, b.seal(packetResponse, body))
	sent := w.take(b.addr)
	require.Len(t, sent, 1)
	typ, _ := b.open(t, sent[0])
	assert.Equal(t, byte(packetDenied), typ)
	assert.Equal(t, uint64(1), s.stats.ServerFull)
}

func TestServerChallengeBoundToAddress(t *testing.T) {
	// A token holder fetches a challenge token at its own address, then
	// tries to complete a handshake at a victim's address with it.
	s, w, t0 := newTestServer(t, nil)
	own := newFakeClient(t, addr(1), testParams())
	s.receive(t0, own.addr, own.request())
	_, body := own.open(t, w.take(own.addr)[0])

	victim := newFakeClient(t, addr(2), testParams()) // a second token of the same holder
	s.receive(t0, victim.addr, victim.request())      // spoofed from the victim
	require.NotNil(t, s.pending[victim.addr])
	s.receive(t0, victim.addr, victim.seal(packetResponse, body))
	assert.Nil(t, s.byAddr[victim.addr], "no connection to an address that never answered")
	assert.Equal(t, uint64(1), s.stats.BadToken)
}

func TestServerConnRateLimit(t *testing.T) {
	s, w, t0 := newTestServer(t, func(o *Options) { o.ConnRate = Rate{Packets: 10} })
	fc := newFakeClient(t, addr(1), testParams())
	c := handshake(t, s, w, fc, t0)
	for range 15 {
		s.receive(t0, fc.addr, fc.seal(packetPayload, []byte("p")))
	}
	assert.Equal(t, uint64(5), s.stats.RateLimited)
	got := 0
	buf := make([]byte, 10)
	for {
		if _, ok := c.Receive(buf); !ok {
			break
		}
		got++
	}
	assert.Equal(t, 10, got)
	s.receive(t0.Add(time.Second), fc.addr, fc.seal(packetPayload, []byte("p")))
	_, ok := c.Receive(buf)
	assert.True(t, ok, "the bucket refilled")
}

func TestServerAddressRateLimit(t *testing.T) {
	s, _, t0 := newTestServer(t, func(o *Options) { o.AddressRate = Rate{Packets: 100, Bytes: 1 << 30} })
	junk := make([]byte, 30)
	junk[0] = 0x15
	for i := range 150 {
		// Many ports, one IP: the bucket is per IP.
		s.receive(t0, netip.AddrPortFrom(addr(1).Addr(), uint16(i)), junk)
	}
	assert.Equal(t, uint64(50), s.stats.RateLimited)
	assert.Equal(t, uint64(100), s.stats.UnknownClient)
}

func TestServerQueueFull(t *testing.T) {
	s, w, t0 := newTestServer(t, func(o *Options) { o.QueueBytes = 4 * 1202 })
	fc := newFakeClient(t, addr(1), testParams())
	c := handshake(t, s, w, fc, t0)
	for range 5 {
		s.receive(t0, fc.addr, fc.seal(packetPayload, make([]byte, 1200)))
	}
	assert.Equal(t, uint64(1), s.stats.QueueFull)
	assert.ErrorIs(t, c.Err(), ErrQueueFull)
	sent := w.take(fc.addr)
	assert.Len(t, sent, redundantDisconnects)
	for _, p := range sent {
		typ, _ := fc.open(t, p)
		assert.Equal(t, byte(packetDisconnect), typ)
	}
	// What arrived before the drop can still be read, until Close.
	n := 0
	for {
		if _, ok := c.Receive(make([]byte, 1200)); !ok {
			break
		}
		n++
	}
	assert.Equal(t, 4, n)
	assert.NoError(t, c.Close())
	assert.ErrorIs(t, c.Close(), transport.ErrClosed)
}

func TestServerConnClose(t *testing.T) {
	s, w, t0 := newTestServer(t, nil)
	fc := newFakeClient(t, addr(1), testParams())
	c := handshake(t, s, w, fc, t0)
	require.NoError(t, c.Close())
	assert.Len(t, w.take(fc.addr), redundantDisconnects)
	assert.ErrorIs(t, c.Send([]byte("x")), transport.ErrClosed)
	assert.ErrorIs(t, c.Err(), ErrLocalClose)
	_, ok := s.acceptConn()
	assert.False(t, ok, "a connection closed before Accept is not handed out")
	// The slot is free for the same client again, with a new token.
	fc2 := newFakeClient(t, addr(1), testParams())
	handshake(t, s, w, fc2, t0)
}

// TestServerPendingFlood fills the server with 20,000 handshakes that never
// answer, from 20,000 addresses, each with its own valid token; memory and
// the cost of an update stay within the caps, and honest clients connect.
func TestServerPendingFlood(t *testing.T) {
	const flood = 20000
	s, w, t0 := newTestServer(t, nil)
	params := testParams()
	reqs := make([][]byte, flood)
	for i := range reqs {
		params.ClientID = uint64(1000 + i)
		_, tok := makeTestToken(t, params)
		reqs[i] = appendRequest(nil, tok)
	}
	s.out = &discardWriter{}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	for i, r := range reqs {
		s.receive(t0, addr(i), r)
	}
	perRequest := time.Since(start) / flood
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(reqs)
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)

	assert.Len(t, s.pending, DefaultMaxPending)
	assert.Equal(t, uint64(flood-DefaultMaxPending), s.stats.PendingFull)
	assert.Equal(t, uint64(flood-DefaultTokenHistory), s.stats.TokenHistoryFull)
	assert.Len(t, s.history.index, DefaultTokenHistory)
	assert.Less(t, heap, int64(4<<20), "heap growth %d bytes", heap)

	// The fastest of ten batches: a loaded machine that descheduled the
	// test for one batch does not count.
	const updates = 10
	perUpdate := time.Duration(math.MaxInt64)
	for range 10 {
		start = time.Now()
		for range updates {
			s.update(t0)
		}
		perUpdate = min(perUpdate, time.Since(start)/updates)
	}
	assert.Less(t, perUpdate, 5*time.Millisecond)
	t.Logf("flood: %d requests, %v each; pending %d (cap %d), history %d (cap %d); heap +%d KiB; update %v",
		flood, perRequest, len(s.pending), DefaultMaxPending, len(s.history.index), DefaultTokenHistory, heap>>10, perUpdate)

	// Many ports of one IP: capped per IP.
	for i := range 100 {
		params.ClientID = uint64(100000 + i)
		_, tok := makeTestToken(t, params)
		s.receive(t0, netip.AddrPortFrom(addr(1<<20).Addr(), uint16(i)), appendRequest(nil, tok))
	}
	assert.Equal(t, uint64(100-DefaultMaxPendingPerIP), s.stats.PendingAddressFull)

	// Honest clients still connect while the flood sits in the table.
	s.out = w
	for i := range 8 {
		params.ClientID = uint64(i + 1)
		handshake(t, s, w, newFakeClient(t, netip.AddrPortFrom(netip.MustParseAddr("192.168.1.1"), uint16(1000+i)), params), t0)
	}
	assert.Equal(t, 8, s.connected)

	// And the flood expires without anyone's help.
	start = time.Now()
	s.update(t0.Add(DefaultHandshakeTimeout))
	t.Logf("the update that expires %d handshakes: %v", DefaultMaxPending, time.Since(start))
	assert.Empty(t, s.pending)
	assert.Empty(t, s.pendingPerIP)
	assert.Nil(t, s.oldest)
}

func TestServerReceiveAllocs(t *testing.T) {
	s, w, t0 := newTestServer(t, nil)
	fc := newFakeClient(t, addr(1), testParams())
	c := handshake(t, s, w, fc, t0)
	s.receive(t0, fc.addr, fc.seal(packetKeepAlive, make([]byte, 8)))
	params := testParams()
	params.ClientID = 5
	pend := newFakeClient(t, addr(2), params)
	s.receive(t0, pend.addr, pend.request())
	w.take(pend.addr)

	badKey := testParams()
	badKey.PrivateKey[0] ^= 1
	forged := newFakeClient(t, addr(3), badKey)

	flipped := fc.seal(packetPayload, []byte("x"))
	flipped[len(flipped)-1] ^= 1
	forgedResponse := pend.seal(packetResponse, make([]byte, challengeBodySize))
	forgedResponse[len(forgedResponse)-1] ^= 1
	replayed := fc.seal(packetPayload, []byte("x"))
	s.receive(t0, fc.addr, replayed)
	buf := make([]byte, 1200)
	c.Receive(buf)

	s.out = &discardWriter{}
	for name, tc := range map[string]struct {
		from netip.AddrPort
		pkt  []byte
	}{
		"bad token":             {forged.addr, forged.request()},
		"flipped payload":       {fc.addr, flipped},
		"forged response":       {pend.addr, forgedResponse},
		"replayed payload":      {fc.addr, replayed},
		"spoofed source":        {addr(4), replayed},
		"short":                 {addr(4), []byte{1, 2, 3}},
		"oversized":             {addr(4), make([]byte, readBufferSize)},
		"retransmitted request": {pend.addr, pend.request()},
	} {
		allocs := testing.AllocsPerRun(100, func() { s.receive(t0, tc.from, tc.pkt) })
		assert.Zero(t, allocs, name)
	}
	assert.Positive(t, s.stats.BadToken)
	assert.Positive(t, s.stats.AuthFailed)
	assert.Positive(t, s.stats.Replayed)
	assert.Positive(t, s.stats.UnknownClient)
	assert.Positive(t, s.stats.Malformed)

	// Steady state: an authentic payload in, Receive out, a payload back.
	payload := make([]byte, 1200)
	allocs := testing.AllocsPerRun(100, func() {
		s.receive(t0, fc.addr, fc.sealInto(packetPayload, payload))
		c.Receive(buf)
		_ = c.Send(payload)
	})
	assert.Zero(t, allocs, "steady state")
}

// sealInto is seal into a buffer reused across calls, for allocation tests.
func (fc *fakeClient) sealInto(typ byte, body []byte) []byte {
	b := sealPacket(fakeSealBuf[:], &fc.sc, fc.c2s, fc.tok.ProtocolID, typ, fc.seq, body)
	fc.seq++
	return b
}

var fakeSealBuf [maxPacketSize]byte

func TestServerClosedIgnoresAll(t *testing.T) {
	s, w, t0 := newTestServer(t, nil)
	fc := newFakeClient(t, addr(1), testParams())
	c := handshake(t, s, w, fc, t0)
	s.close(t0)
	assert.Len(t, w.take(fc.addr), redundantDisconnects)
	assert.ErrorIs(t, c.Err(), ErrListenerClosed)
	s.receive(t0, addr(2), newFakeClient(t, addr(2), testParams()).request())
	assert.Zero(t, w.sentTo(addr(2)))
	assert.NoError(t, c.Close(), "first Close of a conn the listener ended")
}

func FuzzServerReceive(f *testing.F) {
	f.Add(byte(0), []byte{})
	params := testParams()
	params.Expire = params.Create.Add(24 * time.Hour) // outlives any fuzzing run
	fc := newFakeClient(f, addr(1), params)
	f.Add(byte(1), fc.request())
	for typ := byte(1); typ < packetTypes; typ++ {
		f.Add(byte(0), fc.seal(typ, make([]byte, 8)))
	}
	f.Fuzz(func(t *testing.T, from byte, pkt []byte) {
		s, w, t0 := newTestServer(t, func(o *Options) {
			// Small tables: the fuzzer builds a server per input.
			o.AddressSlots, o.TokenHistory, o.QueueBytes = 16, 16, 2*1202
		})
		conn := &fakeClient{addr: addr(0), tok: fc.tok, c2s: fc.c2s, s2c: fc.s2c}
		handshake(t, s, w, conn, t0)
		s.receive(t0, addr(int(from%4)), pkt)
		s.update(t0.Add(time.Second))
		assert.LessOrEqual(t, s.connected, 1)
		assert.LessOrEqual(t, len(s.pending), 1)
	})
}
