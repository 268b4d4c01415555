package udp

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loopbackSockets returns a receiving socket and a sending one on loopback.
func loopbackSockets(t testing.TB) (recv, send *net.UDPConn) {
	t.Helper()
	recv, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	require.NoError(t, recv.SetReadBuffer(4<<20))
	send, err = net.DialUDP("udp", nil, recv.LocalAddr().(*net.UDPAddr))
	require.NoError(t, err)
	t.Cleanup(func() { recv.Close(); send.Close() })
	return recv, send
}

// Every datagram arrives whole with its source, in order, fewer system
// calls than datagrams where recvmmsg batches them; reading allocates
// nothing; a closed socket ends the reader with net.ErrClosed.
func TestBatchReaderReadsEveryDatagram(t *testing.T) {
	recv, send := loopbackSockets(t)
	from := normalize(send.LocalAddr().(*net.UDPAddr).AddrPort())
	b := newBatchReader(recv)
	const n = 200
	for i := range n {
		_, err := send.Write([]byte{byte(i), byte(i >> 8), 7, 7})
		require.NoError(t, err)
	}
	got, calls := 0, 0
	require.NoError(t, recv.SetReadDeadline(time.Now().Add(5*time.Second)))
	for got < n {
		calls++
		require.NoError(t, b.read(func(src netip.AddrPort, p []byte) {
			assert.Equal(t, from, normalize(src))
			assert.Equal(t, []byte{byte(got), byte(got >> 8), 7, 7}, p)
			got++
		}))
	}
	t.Logf("%d datagrams in %d reads", got, calls)
	if readBatch > 1 {
		assert.Less(t, calls, n, "datagrams already queued come in batches")
	}
	allocs := testing.AllocsPerRun(50, func() {
		_, _ = send.Write([]byte{1, 2, 3})
		_ = b.read(func(netip.AddrPort, []byte) {})
	})
	if !raceDetector {
		assert.Zero(t, allocs)
	}
	recv.Close()
	assert.ErrorIs(t, b.read(func(netip.AddrPort, []byte) {}), net.ErrClosed)
}

// An IPv6 source keeps its address and port.
func TestBatchReaderIPv6(t *testing.T) {
	recv, err := net.ListenUDP("udp6", &net.UDPAddr{IP: net.IPv6loopback})
	if err != nil {
		t.Skip("no IPv6 loopback here:", err)
	}
	defer recv.Close()
	send, err := net.DialUDP("udp6", nil, recv.LocalAddr().(*net.UDPAddr))
	require.NoError(t, err)
	defer send.Close()
	_, err = send.Write([]byte("six"))
	require.NoError(t, err)
	require.NoError(t, recv.SetReadDeadline(time.Now().Add(5*time.Second)))
	var src netip.AddrPort
	require.NoError(t, newBatchReader(recv).read(func(from netip.AddrPort, p []byte) {
		src = from
		assert.Equal(t, "six", string(p))
	}))
	assert.Equal(t, send.LocalAddr().(*net.UDPAddr).AddrPort(), src)
}
