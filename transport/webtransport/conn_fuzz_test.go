package webtransport

import (
	"bytes"
	"testing"

	"github.com/ghostwire/ghostwire/transport/internal/ring"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/transport"
)

// FuzzDeliver: whatever datagrams a peer sends (data holds them, each
// after a two-byte length), deliver queues exactly those of 1 to
// MaxDatagramSize bytes, whole and in order, counts the longer ones as
// Truncated, and takes an empty one as the close marker, which ends
// Sends; nothing else reaches Receive.
func FuzzDeliver(f *testing.F) {
	f.Add([]byte{0, 5, 'h', 'e', 'l', 'l', 'o'})
	f.Add([]byte{0, 0, 0, 1, 'x'})
	f.Add(append([]byte{0x04, 0xB1}, bytes.Repeat([]byte{0xAB}, transport.MaxDatagramSize+1)...))
	f.Add(append([]byte{0x04, 0xB0}, bytes.Repeat([]byte{0xCD}, transport.MaxDatagramSize)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &conn{recvq: ring.New(16), limit: bucket{rate: Rate{Datagrams: -1, Bytes: -1}}}
		var want [][]byte
		truncated, marker := 0, false
		for len(data) >= 2 {
			n := int(data[0])<<8 | int(data[1])
			data = data[2:]
			n = min(n, len(data))
			p := append([]byte(nil), data[:n]...)
			data = data[n:]
			got := c.deliver(p)
			require.Equal(t, n == 0, got, "only an empty datagram is the marker")
			switch {
			case n == 0:
				marker = true
			case n > transport.MaxDatagramSize:
				truncated++
			case len(want) < 16:
				want = append(want, p)
			}
		}
		buf := make([]byte, transport.MaxDatagramSize)
		for _, w := range want {
			n, ok := c.Receive(buf)
			require.True(t, ok)
			require.Equal(t, w, buf[:n])
		}
		_, ok := c.Receive(buf)
		assert.False(t, ok, "nothing else is delivered")
		assert.Equal(t, uint64(truncated), c.Stats().Truncated)
		if marker {
			assert.ErrorIs(t, c.Send([]byte{1}), transport.ErrClosed, "the peer closed")
		}
	})
}
