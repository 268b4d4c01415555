package packet

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/transport"
)

// encode builds a datagram from a header and entries.
func encode(h header, entries ...entry) []byte {
	b := make([]byte, HeaderSize, transport.MaxDatagramSize)
	h.put(b)
	for _, e := range entries {
		b = appendEntry(b, e)
	}
	return b
}

// decodeAll parses a datagram into its header and entries.
func decodeAll(b []byte) (header, []entry, error) {
	h, err := validate(b)
	if err != nil {
		return header{}, nil, err
	}
	var entries []entry
	r := newEntryReader(b)
	for {
		e, ok, _ := r.next()
		if !ok {
			return h, entries, nil
		}
		entries = append(entries, e)
	}
}

func fragmentOf(id uint16, index, count uint8, n int) entry {
	return entry{kind: kindFragment, id: id, index: index, count: count, data: bytes.Repeat([]byte{index}, n)}
}

func TestWireRoundTrip(t *testing.T) {
	h := header{seq: 65535, ack: 7, ackBits: 0xdeadbeef, hasAck: true}
	entries := []entry{
		{kind: kindUnreliable, data: []byte("snapshot")},
		{kind: kindReliable, id: 65535, data: []byte("chat")},
		{kind: kindUnreliable, data: []byte{}},
		fragmentOf(3, 1, 2, 17),
		{kind: kindUnordered, id: 513, data: []byte("ready")},
	}
	b := encode(h, entries...)
	assert.Equal(t, []byte{0x11, 0xff, 0xff, 7, 0, 0xef, 0xbe, 0xad, 0xde}, b[:HeaderSize], "doc.go's layout")
	assert.Equal(t, []byte{1, 0xff, 0xff, 4, 0, 'c', 'h', 'a', 't'}, b[HeaderSize+11:HeaderSize+20])
	assert.Equal(t, []byte{3, 1, 2, 5, 0, 'r', 'e', 'a', 'd', 'y'}, b[len(b)-10:], "an unordered entry: kind 3, id, length, data")
	got, gotEntries, err := decodeAll(b)
	require.NoError(t, err)
	assert.Equal(t, h, got)
	require.Len(t, gotEntries, len(entries))
	for i, e := range entries {
		assert.Equal(t, e.kind, gotEntries[i].kind)
		assert.Equal(t, e.id, gotEntries[i].id)
		assert.Equal(t, e.index, gotEntries[i].index)
		assert.Equal(t, e.count, gotEntries[i].count)
		assert.Equal(t, e.data, gotEntries[i].data)
		assert.Equal(t, e.size(), gotEntries[i].size())
	}
}

func TestWireRejectsMalformed(t *testing.T) {
	ok := encode(header{seq: 1}, entry{kind: kindUnreliable, data: []byte("x")})
	for _, tc := range []struct {
		name string
		b    []byte
		err  error
	}{
		{"empty", nil, errShort},
		{"short header", ok[:HeaderSize-1], errShort},
		{"version 2", append([]byte{0x02}, ok[1:]...), errVersion},
		{"unknown flag", append([]byte{0x21}, ok[1:]...), errVersion},
		{"ack fields without the ack flag", encode(header{seq: 1, ackBits: 1}), errVersion},
		{"unknown kind", append(bytes.Clone(ok), 4), errKind},
		{"unordered entry cut", append(bytes.Clone(ok), 3, 0, 0, 5, 0, 'a'), errTrunc},
		{"entry header cut", append(bytes.Clone(ok), 1, 0), errTrunc},
		{"data cut", ok[:len(ok)-1], errTrunc},
		{"one fragment", encode(header{}, fragmentOf(0, 0, 1, 5)), errFragment},
		{"index past count", encode(header{}, fragmentOf(0, 2, 2, 5)), errFragment},
		{"short middle fragment", encode(header{}, fragmentOf(0, 0, 2, FragmentSize-1)), errFragment},
		{"empty last fragment", encode(header{}, fragmentOf(0, 1, 2, 0)), errFragment},
		{"long last fragment", encode(header{}, fragmentOf(0, 1, 2, FragmentSize+1)), errFragment},
	} {
		_, err := validate(tc.b)
		assert.ErrorIs(t, err, tc.err, tc.name)
	}
	_, err := validate(encode(header{}, fragmentOf(0, 1, 2, FragmentSize)))
	assert.NoError(t, err, "a full last fragment is fine")
}

// FuzzDecode checks that no datagram panics the decoder and that every
// datagram it accepts re-encodes to the same bytes: one encoding per value,
// so nothing hides in slack.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{})
	f.Add(encode(header{seq: 9}))
	f.Add(encode(header{seq: 65535, ack: 65534, ackBits: 1<<32 - 1, hasAck: true},
		entry{kind: kindUnreliable, data: []byte("input")},
		entry{kind: kindReliable, id: 40000, data: []byte("event")}))
	f.Add(encode(header{seq: 3, hasAck: true}, fragmentOf(7, 0, 3, FragmentSize)))
	f.Add(encode(header{seq: 4}, fragmentOf(7, 2, 3, 100)))
	f.Add(encode(header{seq: 5}, entry{kind: kindUnordered, id: 12, data: []byte("kill feed")}))
	f.Add([]byte{0x11, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0})
	f.Add([]byte{0x01, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, entries, err := decodeAll(b)
		if err != nil {
			return
		}
		require.Equal(t, b, encode(h, entries...))
	})
}
