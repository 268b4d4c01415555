//go:build !js

package webtransport

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/internal/conntest"
)

// settleTimeout bounds every wait on real sockets: generous, so a loaded
// 2-core machine never fails a test that a quick one passes.
const settleTimeout = 10 * time.Second

// settle polls cond until it holds, failing t after settleTimeout.
func settle(t testing.TB, cond func() bool) {
	t.Helper()
	conntest.Poll(t, settleTimeout, cond)
}

// fast is the Options of the tests that send bursts: no receive limit,
// and a pace twice the default's, in bursts of 16 datagrams (half what
// quic-go queues for a session), so that the conformance suite's 2,400
// datagrams take two seconds, not five.
var fast = Options{ReceiveRate: Rate{Datagrams: -1, Bytes: -1}, SendRate: Rate{Datagrams: 1024, Bytes: -1, Burst: 1.0 / 64}}

// server is a Listener serving loopback UDP, with its certificate's hash
// and its https:// URL.
type server struct {
	ln   *Listener
	hash [32]byte
	url  string
}

// serve starts a Listener on a loopback UDP port with a fresh development
// certificate; it closes when t ends. A nil h serves the Listener itself.
func serve(t testing.TB, opts ListenerOptions) server {
	t.Helper()
	cert, err := NewDevCertificate(time.Hour, "127.0.0.1")
	require.NoError(t, err)
	opts.Certificate = cert
	ln, err := NewListener(opts)
	require.NoError(t, err)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- ln.Serve(pc, nil) }()
	t.Cleanup(func() {
		_ = ln.Close()
		require.NoError(t, <-served)
		_ = pc.Close()
	})
	hash, err := CertificateHash(cert)
	require.NoError(t, err)
	return server{ln: ln, hash: hash, url: "https://" + pc.LocalAddr().String() + "/game"}
}

// dial connects a client to s, closing it when t ends.
func (s server) dial(t testing.TB, opts Options) transport.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
	defer cancel()
	c, err := Dial(ctx, s.url, DialOptions{Conn: opts, CertificateHashes: [][32]byte{s.hash}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// accept waits for the Listener's next connection, closing it when t ends.
func (s server) accept(t testing.TB) transport.Conn {
	t.Helper()
	var c transport.Conn
	settle(t, func() bool {
		var ok bool
		c, ok = s.ln.Accept()
		return ok
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// pair returns a connected client and server over loopback WebTransport.
func pair(t testing.TB, opts ListenerOptions, clientOpts Options) (client, srv transport.Conn) {
	t.Helper()
	s := serve(t, opts)
	client = s.dial(t, clientOpts)
	return client, s.accept(t)
}

// receiveOne waits for one datagram on c and returns it.
func receiveOne(t testing.TB, c transport.Conn) []byte {
	t.Helper()
	buf := make([]byte, transport.MaxDatagramSize)
	var n int
	settle(t, func() bool {
		var ok bool
		n, ok = c.Receive(buf)
		return ok
	})
	return buf[:n]
}
