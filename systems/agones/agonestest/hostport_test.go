package agonestest

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A host port forwards both ways, the answer coming from the public
// address; a client past the cap is dropped and counted.
func TestHostPortForwardsWithinItsCap(t *testing.T) {
	echo, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer echo.Close()
	sources := make(chan netip.AddrPort, 4)
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := echo.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			sources <- from
			_, _ = echo.WriteToUDPAddrPort(buf[:n], from)
		}
	}()
	target := echo.LocalAddr().(*net.UDPAddr).AddrPort()
	h, err := NewHostPort(target, 1)
	require.NoError(t, err)
	assert.NotEqual(t, target, h.Addr())

	a, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(h.Addr())) // a connected socket takes answers from h.Addr() only
	require.NoError(t, err)
	defer a.Close()
	_, err = a.Write([]byte("hello"))
	require.NoError(t, err)
	require.NoError(t, a.SetReadDeadline(time.Now().Add(5*time.Second)))
	buf := make([]byte, 64)
	n, err := a.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(buf[:n]))
	assert.NotEqual(t, a.LocalAddr().(*net.UDPAddr).AddrPort(), <-sources, "the server sees the host port's socket, not the client")

	b, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(h.Addr()))
	require.NoError(t, err)
	defer b.Close()
	require.Eventually(t, func() bool {
		_, _ = b.Write([]byte("over the cap"))
		return h.Dropped() > 0
	}, 5*time.Second, 10*time.Millisecond)
	assert.Empty(t, sources, "nothing of the second client reached the server")

	require.NoError(t, h.Close())
	assert.ErrorIs(t, h.Close(), net.ErrClosed)
	_, err = NewHostPort(target, 0)
	assert.EqualError(t, err, "agonestest: 0 host port clients outside 1..1024")
}
