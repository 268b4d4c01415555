package websocket

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/transport"
)

// chunkReader returns its data at most chunk bytes per Read, as a socket
// may, with io.EOF on the Read after the last byte.
type chunkReader struct {
	data  []byte
	chunk int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.chunk)], r.data)
	r.data = r.data[n:]
	return n, nil
}

// FuzzReadMessage: whatever the peer's message and however the socket
// splits it, readMessage returns it whole when it is a datagram's size and
// fails with ErrMessageTooBig otherwise, reading no more than its buffer.
func FuzzReadMessage(f *testing.F) {
	f.Add([]byte("hello"), uint16(1))
	f.Add([]byte{}, uint16(7))
	f.Add(bytes.Repeat([]byte{0xAB}, transport.MaxDatagramSize), uint16(1000))
	f.Add(bytes.Repeat([]byte{0xCD}, transport.MaxDatagramSize+1), uint16(bufferSize))
	f.Add(bytes.Repeat([]byte{0xEF}, 4*transport.MaxDatagramSize), uint16(3))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint16) {
		r := &chunkReader{data: data, chunk: max(int(chunk), 1)}
		b := make([]byte, bufferSize)
		n, err := readMessage(r, b)
		if len(data) > transport.MaxDatagramSize {
			require.True(t, errors.Is(err, websocket.ErrMessageTooBig), "%d bytes: %v", len(data), err)
			assert.LessOrEqual(t, n, bufferSize)
			return
		}
		require.NoError(t, err)
		assert.Equal(t, data, b[:n])
	})
}
