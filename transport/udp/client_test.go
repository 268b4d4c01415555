package udp

import (
	"crypto/cipher"
	"log/slog"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/ghostwire/ghostwire/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/chacha20poly1305"
)

// fakeServer seals what a server would send to a Client under test, whose
// receive function the test drives directly.
type fakeServer struct {
	s2c cipher.AEAD
	seq uint64
	sc  scratch
	buf [maxPacketSize]byte
}

func (fs *fakeServer) seal(typ byte, body []byte) []byte {
	b := sealPacket(fs.buf[:], &fs.sc, fs.s2c, vectorProtocol, typ, fs.seq, body)
	fs.seq++
	return b
}

// newDriven returns a Client whose server address is a socket that never
// answers, so only the test's packets reach its state machine.
func newDriven(t *testing.T, mutate func(*ClientOptions)) (*Client, *fakeServer) {
	t.Helper()
	dead, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = dead.Close() })
	p := testParams()
	p.ServerAddresses = []netip.AddrPort{dead.LocalAddr().(*net.UDPAddr).AddrPort()}
	raw, tok := makeTestToken(t, p)
	opts := ClientOptions{BindAddress: "127.0.0.1:0"}
	if mutate != nil {
		mutate(&opts)
	}
	c, err := Dial(raw, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	s2c, _ := chacha20poly1305.New(tok.ServerToClientKey[:])
	return c, &fakeServer{s2c: s2c, seq: 0}
}

// connectDriven walks a driven client through challenge and keep-alive.
func connectDriven(t *testing.T, c *Client, fs *fakeServer) {
	t.Helper()
	now := time.Now()
	global := &fakeServer{s2c: fs.s2c, seq: globalSequenceStart}
	c.receive(now, c.server, global.seal(packetChallenge, make([]byte, challengeBodySize)))
	c.receive(now, c.server, fs.seal(packetKeepAlive, []byte{5, 0, 0, 0, 16, 0, 0, 0}))
	require.Equal(t, StateConnected, c.State())
	index, maxClients := c.ClientIndex()
	assert.Equal(t, 5, index)
	assert.Equal(t, 16, maxClients)
}

func TestClientReceivePath(t *testing.T) {
	c, fs := newDriven(t, nil)
	now := time.Now()
	buf := make([]byte, transport.MaxDatagramSize)

	c.receive(now, c.server, fs.seal(packetPayload, []byte("early")))
	connectDriven(t, c, fs)
	_, ok := c.Receive(buf)
	assert.False(t, ok, "payloads before connection are discarded")

	p := append([]byte(nil), fs.seal(packetPayload, []byte("hello"))...)
	c.receive(now, c.server, p)
	n, ok := c.Receive(buf)
	require.True(t, ok)
	assert.Equal(t, "hello", string(buf[:n]))

	c.receive(now, c.server, p)
	assert.Equal(t, uint64(1), c.Counters().Replayed)

	q := fs.seal(packetPayload, []byte("x"))
	q[len(q)-1] ^= 1
	c.receive(now, c.server, q)
	assert.Equal(t, uint64(1), c.Counters().AuthFailed)

	c.receive(now, netip.MustParseAddrPort("127.0.0.1:1"), fs.seal(packetDisconnect, nil))
	assert.Equal(t, uint64(1), c.Counters().UnknownClient)
	assert.Equal(t, StateConnected, c.State(), "a disconnect from another address does nothing")

	c.receive(now, c.server, appendRequest(nil, c.token))
	assert.Equal(t, uint64(1), c.Counters().Malformed, "a client never receives requests")

	c.receive(now, c.server, fs.seal(packetDisconnect, nil))
	assert.Equal(t, StateDisconnected, c.State())
	assert.ErrorIs(t, c.Err(), ErrPeerDisconnected)
}

func TestClientQueueFullDisconnects(t *testing.T) {
	c, fs := newDriven(t, func(o *ClientOptions) { o.QueueBytes = 2 * 1202 })
	connectDriven(t, c, fs)
	for range 3 {
		c.receive(time.Now(), c.server, fs.seal(packetPayload, make([]byte, 1200)))
	}
	assert.Equal(t, StateDisconnected, c.State())
	assert.ErrorIs(t, c.Err(), ErrQueueFull)
	assert.Equal(t, uint64(1), c.Counters().QueueFull)
	n := 0
	for _, ok := c.Receive(make([]byte, 1200)); ok; _, ok = c.Receive(make([]byte, 1200)) {
		n++
	}
	assert.Equal(t, 2, n, "what arrived before the drop stays readable")
}

func TestClientTruncated(t *testing.T) {
	c, fs := newDriven(t, nil)
	connectDriven(t, c, fs)
	c.receive(time.Now(), c.server, fs.seal(packetPayload, make([]byte, 100)))
	c.receive(time.Now(), c.server, fs.seal(packetPayload, make([]byte, 10)))
	n, ok := c.Receive(make([]byte, 50))
	require.True(t, ok)
	assert.Equal(t, 10, n, "the long one was dropped, the next delivered")
	assert.Equal(t, uint64(1), c.Stats().Truncated)
}

func TestClientReceiveAllocs(t *testing.T) {
	c, fs := newDriven(t, nil)
	connectDriven(t, c, fs)
	now := time.Now()
	replayed := append([]byte(nil), fs.seal(packetPayload, []byte("x"))...)
	c.receive(now, c.server, replayed)
	flipped := append([]byte(nil), fs.seal(packetPayload, []byte("x"))...)
	flipped[len(flipped)-1] ^= 1
	buf := make([]byte, 1200)
	for name, pkt := range map[string][]byte{"replayed": replayed, "flipped": flipped, "short": {1}} {
		assert.Zero(t, testing.AllocsPerRun(100, func() { c.receive(now, c.server, pkt) }), name)
	}
	payload := make([]byte, 1200)
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		c.receive(now, c.server, fs.seal(packetPayload, payload))
		c.Receive(buf)
		_ = c.Send(payload)
	}), "steady state")
}

func TestDialRejects(t *testing.T) {
	_, err := Dial(make([]byte, 10), ClientOptions{})
	assert.ErrorIs(t, err, ErrInvalidToken)
	raw, _ := makeTestToken(t, testParams())
	_, err = Dial(raw, ClientOptions{QueueBytes: 10})
	assert.ErrorIs(t, err, ErrInvalidOptions)
	_, err = Dial(raw, ClientOptions{BindAddress: "nonsense"})
	assert.ErrorIs(t, err, ErrInvalidOptions)
}

func TestStateString(t *testing.T) {
	assert.Equal(t, "connected", StateConnected.String())
	assert.Equal(t, "State(42)", State(42).String())
}

func FuzzClientReceive(f *testing.F) {
	key := vectorKey()
	s2c, _ := chacha20poly1305.New(key[:])
	fs := &fakeServer{s2c: s2c}
	for typ := byte(1); typ < packetTypes; typ++ {
		f.Add(append([]byte(nil), fs.seal(typ, make([]byte, 8))...))
	}
	f.Add([]byte{0})
	f.Fuzz(func(t *testing.T, pkt []byte) {
		c := &Client{token: &ConnectToken{ProtocolID: vectorProtocol}, s2c: s2c, server: testServerAddr,
			queue: newByteQueue(2 * 1202), connected: make(chan struct{}), ended: make(chan struct{}),
			log: slog.New(slog.DiscardHandler)}
		c.sub = sendingResponse
		c.receive(time.Now(), testServerAddr, pkt)
		if st := c.State(); st != StateConnecting {
			// Only the authentic seeds move it: a keep-alive or a denial.
			assert.Contains(t, []byte{packetKeepAlive, packetDenied}, pkt[0]&0x0f, st.String())
		}
	})
}
