package udp

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readNow returns the datagrams recv holds now, without waiting for more
// (a loopback send is delivered before the system call returns).
func readNow(t *testing.T, recv *net.UDPConn) [][]byte {
	t.Helper()
	var got [][]byte
	buf := make([]byte, readBufferSize)
	for {
		require.NoError(t, recv.SetReadDeadline(time.Now().Add(20*time.Millisecond)))
		n, err := recv.Read(buf)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return got
		}
		require.NoError(t, err)
		got = append(got, append([]byte(nil), buf[:n]...))
	}
}

// Queued datagrams stay queued until the batch is full or flushed, then
// leave in order with one system call per batch; writing allocates
// nothing.
func TestBatchWriterHoldsUntilFullOrFlushed(t *testing.T) {
	recv, send := loopbackSockets(t)
	to := normalize(recv.LocalAddr().(*net.UDPAddr).AddrPort())
	w := &batchWriter{limit: 8, out: newSendBatch(send)}
	for i := range 3 {
		_, err := w.WriteToUDPAddrPort([]byte{byte(i), 1, 2}, to)
		require.NoError(t, err)
	}
	assert.Empty(t, readNow(t, recv), "held until the flush")
	w.flush()
	assert.Equal(t, [][]byte{{0, 1, 2}, {1, 1, 2}, {2, 1, 2}}, readNow(t, recv))
	writes, written := w.counts()
	assert.Equal(t, uint64(3), written)
	if sendmmsg {
		assert.Equal(t, uint64(1), writes, "one system call for the batch")
	}
	for i := range 8 {
		_, _ = w.WriteToUDPAddrPort([]byte{byte(i)}, to)
	}
	assert.Len(t, readNow(t, recv), 8, "a full batch leaves without a flush")
	w.flush()
	_, written = w.counts()
	assert.Equal(t, uint64(11), written, "nothing left to flush")

	allocs := testing.AllocsPerRun(50, func() {
		_, _ = w.WriteToUDPAddrPort([]byte{1, 2, 3}, to)
		w.flush()
	})
	if !raceDetector {
		assert.Zero(t, allocs)
	}
	assert.Len(t, readNow(t, recv), 51)
}

// A dual-stack socket reaches an IPv4 address (v4-mapped); an IPv4 socket
// drops an IPv6 destination as a lost datagram and still sends the rest
// of its batch.
func TestBatchWriterAddressFamilies(t *testing.T) {
	recv, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer recv.Close()
	to := normalize(recv.LocalAddr().(*net.UDPAddr).AddrPort())

	dual, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv6unspecified})
	require.NoError(t, err)
	defer dual.Close()
	w := &batchWriter{limit: 4, out: newSendBatch(dual)}
	_, _ = w.WriteToUDPAddrPort([]byte{6}, to)
	w.flush()
	assert.Equal(t, [][]byte{{6}}, readNow(t, recv), "an IPv4 destination from a dual-stack socket")

	v4, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer v4.Close()
	w = &batchWriter{limit: 4, out: newSendBatch(v4)}
	_, _ = w.WriteToUDPAddrPort([]byte{1}, netip.MustParseAddrPort("[::1]:9"))
	_, _ = w.WriteToUDPAddrPort([]byte{2}, to)
	w.flush()
	assert.Equal(t, [][]byte{{2}}, readNow(t, recv), "the IPv4 datagram after an unreachable one")
}

// A Listener refuses a SendBatch it cannot hold, naming it.
func TestSendBatchOutOfRange(t *testing.T) {
	for _, n := range []int{-1, MaxSendBatch + 1} {
		_, err := Listen(Options{BindAddress: "127.0.0.1:0", PrivateKey: [KeySize]byte{1}, SendBatch: n})
		require.ErrorIs(t, err, ErrInvalidOptions)
		assert.ErrorContains(t, err, "SendBatch")
	}
}
