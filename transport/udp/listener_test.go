package udp

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/ghostwire/ghostwire/internal/fuzzing"
	"github.com/ghostwire/ghostwire/internal/longtest"
	"github.com/ghostwire/ghostwire/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them, and
// bounds the fuzzer's minimizing first (see package fuzzing).
func TestMain(m *testing.M) {
	fuzzing.BoundMinimizing()
	goleak.VerifyTestMain(m)
}

// deadline bounds every wait on real sockets: generous, so a loaded 2-core
// machine does not flake, yet a hang still fails.
const deadline = 15 * time.Second

// poll is how often waits re-check their condition.
const poll = 5 * time.Millisecond

func listen(t testing.TB, mutate func(*Options)) *Listener {
	t.Helper()
	opts := Options{BindAddress: "127.0.0.1:0", PrivateKey: vectorKey(), ProtocolID: vectorProtocol}
	if mutate != nil {
		mutate(&opts)
	}
	l, err := Listen(opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func tokenFor(t testing.TB, clientID uint64, addrs ...netip.AddrPort) []byte {
	t.Helper()
	p := testParams()
	p.ClientID = clientID
	p.ServerAddresses = addrs
	b, _ := makeTestToken(t, p)
	return b
}

func dial(t testing.TB, token []byte) *Client {
	t.Helper()
	c, err := Dial(token, ClientOptions{BindAddress: "127.0.0.1:0"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func waitConnected(t testing.TB, c *Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	require.NoError(t, c.WaitConnected(ctx))
	require.Equal(t, StateConnected, c.State())
}

// acceptN accepts n connections, waiting up to the deadline.
func acceptN(t testing.TB, l *Listener, n int) []*ServerConn {
	t.Helper()
	var conns []*ServerConn
	require.Eventually(t, func() bool {
		for {
			c, ok := l.Accept()
			if !ok {
				return len(conns) >= n
			}
			conns = append(conns, c.(*ServerConn))
		}
	}, deadline, poll)
	return conns
}

// exchange sends a payload each way on every pair until each side has
// received its peer's, resending on every poll so a lost datagram costs a
// retry, not a flake. It returns what each side received.
func exchange(t testing.TB, clients []*Client, byID map[uint64]*ServerConn) {
	t.Helper()
	upDone := make([]bool, len(clients))
	downDone := make([]bool, len(clients))
	buf := make([]byte, transport.MaxDatagramSize)
	require.Eventually(t, func() bool {
		all := true
		for i, c := range clients {
			id := uint64(i + 1)
			sc := byID[id]
			up, down := fmt.Sprintf("up %d", id), fmt.Sprintf("down %d", id)
			if !upDone[i] {
				require.NoError(t, c.Send([]byte(up)))
			}
			if !downDone[i] {
				require.NoError(t, sc.Send([]byte(down)))
			}
			for n, ok := sc.Receive(buf); ok; n, ok = sc.Receive(buf) {
				require.Equal(t, up, string(buf[:n]))
				upDone[i] = true
			}
			for n, ok := c.Receive(buf); ok; n, ok = c.Receive(buf) {
				require.Equal(t, down, string(buf[:n]))
				downDone[i] = true
			}
			all = all && upDone[i] && downDone[i]
		}
		return all
	}, deadline, poll)
}

func connectClients(t testing.TB, l *Listener, n int) ([]*Client, map[uint64]*ServerConn) {
	t.Helper()
	clients := make([]*Client, n)
	for i := range clients {
		clients[i] = dial(t, tokenFor(t, uint64(i+1), l.Addr()))
	}
	for _, c := range clients {
		waitConnected(t, c)
	}
	byID := map[uint64]*ServerConn{}
	for _, sc := range acceptN(t, l, n) {
		byID[sc.ClientID()] = sc
	}
	require.Len(t, byID, n)
	return clients, byID
}

func TestUDPEightClients(t *testing.T) {
	l := listen(t, nil)
	clients, byID := connectClients(t, l, 8)
	for i, c := range clients {
		sc := byID[uint64(i+1)]
		index, maxClients := c.ClientIndex()
		assert.Equal(t, DefaultMaxClients, maxClients)
		assert.Equal(t, sc.ClientIndex(), index, "the client learns its slot")
		assert.Equal(t, c.LocalAddr(), sc.RemoteAddr())
		assert.Equal(t, testParams().UserData, sc.UserData())
	}
	exchange(t, clients, byID)

	st := l.Stats()
	assert.Zero(t, st.AuthFailed+st.Malformed+st.BadToken+st.Replayed)
}

func TestUDPDisconnects(t *testing.T) {
	l := listen(t, nil)
	clients, byID := connectClients(t, l, 2)

	require.NoError(t, clients[0].Close())
	assert.ErrorIs(t, clients[0].Close(), transport.ErrClosed)
	assert.ErrorIs(t, clients[0].Send([]byte("x")), transport.ErrClosed)
	require.Eventually(t, func() bool { return byID[1].Err() != nil }, deadline, poll)
	assert.ErrorIs(t, byID[1].Err(), ErrPeerDisconnected)

	require.NoError(t, byID[2].Close())
	require.Eventually(t, func() bool { return clients[1].State() == StateDisconnected }, deadline, poll)
	assert.ErrorIs(t, clients[1].Err(), ErrPeerDisconnected)

	// A listener's Close disconnects its clients too.
	c := dial(t, tokenFor(t, 3, l.Addr()))
	waitConnected(t, c)
	require.NoError(t, l.Close())
	assert.ErrorIs(t, l.Close(), transport.ErrClosed)
	require.Eventually(t, func() bool { return c.State() == StateDisconnected }, deadline, poll)
}

func TestUDPDenied(t *testing.T) {
	l := listen(t, func(o *Options) { o.MaxClients = 1 })
	connectClients(t, l, 1)
	c := dial(t, tokenFor(t, 2, l.Addr()))
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	assert.ErrorIs(t, c.WaitConnected(ctx), ErrDenied)
	assert.Equal(t, StateDenied, c.State())
	assert.Equal(t, uint64(1), c.Counters().ServerFull)
	assert.Positive(t, l.Stats().ServerFull)
	assert.ErrorIs(t, c.Send([]byte("x")), transport.ErrClosed)
}

func TestUDPFailoverAndTimeout(t *testing.T) {
	// A socket that never answers stands in for a dead server.
	dead, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer dead.Close()
	deadAddr := dead.LocalAddr().(*net.UDPAddr).AddrPort()
	l := listen(t, nil)

	p := testParams()
	p.TimeoutSeconds = 2 // per address; the live server must answer within it, even on a loaded machine
	p.ServerAddresses = []netip.AddrPort{deadAddr, l.Addr()}
	tok, _ := makeTestToken(t, p)
	c := dial(t, tok)
	assert.ErrorIs(t, c.Send([]byte("early")), ErrNotConnected)
	waitConnected(t, c)
	assert.Equal(t, l.Addr(), c.ServerAddr(), "moved on to the second address")
	assert.Equal(t, uint64(1), c.Counters().Timeout)

	p.TimeoutSeconds = 1
	p.ServerAddresses = []netip.AddrPort{deadAddr}
	tok, _ = makeTestToken(t, p)
	c = dial(t, tok)
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	assert.ErrorIs(t, c.WaitConnected(ctx), ErrTimedOut)
	assert.Equal(t, StateTimedOut, c.State())
}

func TestUDPTokenExpiresWhileConnecting(t *testing.T) {
	dead, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer dead.Close()
	p := testParams()
	p.TimeoutSeconds = -1 // no per-address timeout: only the token's life ends it
	p.Expire = p.Create.Add(time.Second)
	p.ServerAddresses = []netip.AddrPort{dead.LocalAddr().(*net.UDPAddr).AddrPort()}
	tok, _ := makeTestToken(t, p)
	c := dial(t, tok)
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	assert.ErrorIs(t, c.WaitConnected(ctx), ErrTokenExpired)
	assert.Equal(t, StateTokenExpired, c.State())
}

func TestUDPWaitConnectedContext(t *testing.T) {
	dead, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer dead.Close()
	c := dial(t, tokenFor(t, 1, dead.LocalAddr().(*net.UDPAddr).AddrPort()))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, c.WaitConnected(ctx), context.Canceled)
	assert.Equal(t, StateConnecting, c.State())
}

func TestUDPRefusedTokensOverTheWire(t *testing.T) {
	l := listen(t, nil)
	other := vectorKey()
	other[0] ^= 1
	p := testParams()
	p.PrivateKey = other
	p.ServerAddresses = []netip.AddrPort{l.Addr()}
	p.TimeoutSeconds = 1
	tok, _ := makeTestToken(t, p)
	c := dial(t, tok)
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	assert.ErrorIs(t, c.WaitConnected(ctx), ErrTimedOut, "a refused request gets no answer")
	assert.Positive(t, l.Stats().BadToken)
	_, ok := l.Accept()
	assert.False(t, ok)
}

func TestUDPSpoofedSourceDoesNothing(t *testing.T) {
	l := listen(t, nil)
	clients, byID := connectClients(t, l, 1)
	exchange(t, clients, byID)

	// Another socket replays a packet the client sealed (same keys, same
	// header) from its own address.
	spoofer, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer spoofer.Close()
	var sc scratch
	clients[0].mu.Lock()
	pkt := sealPacket(make([]byte, maxPacketSize), &sc, clients[0].c2s, vectorProtocol, packetDisconnect, clients[0].sendSeq+1000, nil)
	clients[0].mu.Unlock()
	before := l.Stats().UnknownClient
	_, err = spoofer.WriteToUDPAddrPort(pkt, l.Addr())
	require.NoError(t, err)
	require.Eventually(t, func() bool { return l.Stats().UnknownClient > before }, deadline, poll)
	assert.NoError(t, byID[1].Err())
	exchange(t, clients, byID)
}

func TestListenRejectsOptions(t *testing.T) {
	for name, o := range map[string]Options{
		"zero key":           {BindAddress: "127.0.0.1:0"},
		"unspecified bind":   {BindAddress: "0.0.0.0:0", PrivateKey: vectorKey()},
		"max clients":        {BindAddress: "127.0.0.1:0", PrivateKey: vectorKey(), MaxClients: MaxClientsLimit + 1},
		"queue bytes":        {BindAddress: "127.0.0.1:0", PrivateKey: vectorKey(), QueueBytes: 100},
		"negative handshake": {BindAddress: "127.0.0.1:0", PrivateKey: vectorKey(), HandshakeTimeout: -1},
		"bad bind":           {BindAddress: "nonsense", PrivateKey: vectorKey()},
	} {
		_, err := Listen(o)
		assert.ErrorIs(t, err, ErrInvalidOptions, name)
	}
	l, err := Listen(Options{BindAddress: "0.0.0.0:0", PrivateKey: vectorKey(), PublicAddress: testServerAddr})
	require.NoError(t, err, "behind NAT: bound to any address, tokens name the public one")
	assert.Equal(t, testServerAddr, l.PublicAddress())
	require.NoError(t, l.Close())
}

func TestUDPSendSizes(t *testing.T) {
	l := listen(t, nil)
	clients, byID := connectClients(t, l, 1)
	for _, c := range []transport.Conn{clients[0], byID[1]} {
		assert.ErrorIs(t, c.Send(nil), transport.ErrDatagramSize)
		err := c.Send(make([]byte, transport.MaxDatagramSize+1))
		assert.ErrorIs(t, err, transport.ErrDatagramSize)
		assert.ErrorContains(t, err, "1201")
		assert.NoError(t, c.Send(make([]byte, transport.MaxDatagramSize)))
	}
}

// soakDuration is how long TestUDPSixtyFourClients runs traffic: 2 s by
// default, 20 s in the long tier (GHOSTWIRE_LONG=1), or UDP_SOAK=<duration>.
func soakDuration(t *testing.T) time.Duration {
	if v := os.Getenv("UDP_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		require.NoError(t, err)
		return d
	}
	if longtest.Enabled() {
		return 20 * time.Second
	}
	return 2 * time.Second
}

func TestUDPSixtyFourClients(t *testing.T) {
	// All 64 clients share 127.0.0.1, as players behind one NAT would: the
	// per-IP handshake caps are raised to fit them.
	l := listen(t, func(o *Options) {
		o.MaxPendingPerIP = 64
		o.AddressRate = Rate{Packets: 4096, Bytes: 8 << 20}
	})
	start := time.Now()
	clients, byID := connectClients(t, l, 64)
	t.Logf("64 clients connected in %v", time.Since(start))
	exchange(t, clients, byID)
	connected := l.Stats()

	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	var base uint64
	rounds := 0
	soak := soakDuration(t)
	// Each round is a full exchange on every connection, paced by arrival
	// rather than by sleeping.
	for start := time.Now(); time.Since(start) < soak; rounds++ {
		if rounds == 20 {
			base = heap() // after every buffer has grown to its traffic
		}
		exchange(t, clients, byID)
	}
	require.Greater(t, rounds, 20)
	end := heap()
	growth := int64(end) - int64(base)
	t.Logf("64 clients for %v: %d rounds of 128 payloads, heap %d -> %d bytes (%+d)", soak, rounds, base, end, growth)
	assert.Less(t, growth, int64(256<<10), "memory flat")
	for _, c := range clients {
		assert.Equal(t, StateConnected, c.State())
	}
	st := l.Stats()
	assert.Zero(t, st.Timeout+st.QueueFull+st.AuthFailed+st.Replayed)
	assert.Equal(t, connected.RateLimited, st.RateLimited, "no connection was rate limited")

	// One at a time: 640 disconnect packets at once overflow the server's
	// socket buffer, and a client whose ten all drop is only seen to leave
	// by its timeout.
	for i, c := range clients {
		require.NoError(t, c.Close())
		sc := byID[uint64(i+1)]
		require.Eventually(t, func() bool { return sc.Err() != nil }, deadline, poll)
		assert.ErrorIs(t, sc.Err(), ErrPeerDisconnected)
	}
	require.NoError(t, l.Close())
	start = time.Now()
	goleak.VerifyNone(t)
	t.Logf("no goroutine left %v after Close", time.Since(start))
}

func TestUDPUnansweredChallengeReceivesLess(t *testing.T) {
	l := listen(t, nil)
	sock, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer sock.Close()
	_, tok := makeTestToken(t, func() TokenParams {
		p := testParams()
		p.ServerAddresses = []netip.AddrPort{l.Addr()}
		return p
	}())
	req := appendRequest(nil, tok)
	const requests = 5
	sent, received := 0, 0
	buf := make([]byte, readBufferSize)
	require.NoError(t, sock.SetReadDeadline(time.Now().Add(deadline)))
	for range requests {
		_, err := sock.WriteToUDPAddrPort(req, l.Addr())
		require.NoError(t, err)
		sent += len(req)
		n, _, err := sock.ReadFromUDPAddrPort(buf) // the challenge; never answered
		require.NoError(t, err)
		assert.Equal(t, byte(packetChallenge), buf[0]&0x0f)
		received += n
	}
	assert.Less(t, received, sent)
	t.Logf("sent %d bytes, received %d (%.2f)", sent, received, float64(received)/float64(sent))
}

// A server that learns its public address after it listens: tokens must
// name the new one, a token naming only the old one is refused and
// counted, and an address that names nothing specific is refused.
func TestListenerSetPublicAddress(t *testing.T) {
	l, err := Listen(Options{BindAddress: "127.0.0.1:0", PrivateKey: vectorKey(), ProtocolID: vectorProtocol})
	require.NoError(t, err)
	defer l.Close()
	bound := l.PublicAddress()
	assert.Equal(t, l.Addr(), bound)
	for _, bad := range []netip.AddrPort{{}, netip.MustParseAddrPort("0.0.0.0:7777"), netip.MustParseAddrPort("203.0.113.10:0")} {
		err := l.SetPublicAddress(bad)
		assert.ErrorIs(t, err, ErrInvalidOptions, bad)
		assert.ErrorContains(t, err, "want a specific IP and a port 1..65535")
	}
	assert.Equal(t, bound, l.PublicAddress(), "a refused address changes nothing")
	public := netip.MustParseAddrPort("[::ffff:203.0.113.10]:7654")
	require.NoError(t, l.SetPublicAddress(public))
	assert.Equal(t, netip.MustParseAddrPort("203.0.113.10:7654"), l.PublicAddress(), "an IPv4-mapped address is the IPv4 one")

	// A token naming the bound address only, sent to it: refused.
	p := testParams()
	p.ServerAddresses = []netip.AddrPort{bound}
	tok, _ := makeTestToken(t, p)
	c, err := Dial(tok, ClientOptions{})
	require.NoError(t, err)
	defer c.Close()
	require.Eventually(t, func() bool { return l.Stats().WrongAddress > 0 }, 5*time.Second, 10*time.Millisecond)
	_, ok := l.Accept()
	assert.False(t, ok)
}

// The server checks tokens against the public address of the moment: a
// token naming the new one connects (the socket is not involved: the
// address is where a NAT or Agones' port mapping forwards from).
func TestServerAcceptsTheNewPublicAddress(t *testing.T) {
	s, w, t0 := newTestServer(t, nil)
	public := netip.MustParseAddrPort("203.0.113.10:7654")
	l := &Listener{s: s}
	require.NoError(t, l.SetPublicAddress(public))
	old := newFakeClient(t, addr(1), testParams())
	s.receive(t0, old.addr, old.request())
	assert.Equal(t, uint64(1), s.stats.WrongAddress)
	p := testParams()
	p.ServerAddresses = []netip.AddrPort{public}
	handshake(t, s, w, newFakeClient(t, addr(2), p), t0)
}
