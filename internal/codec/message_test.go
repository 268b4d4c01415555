package codec_test

import (
	"math"
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/internal/bitstream"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/wiretest"
)

// chat is a message with text, a number and raw bytes.
type chat struct {
	Team uint8
	Text [40]byte
	Len  uint32
	Blob [5]byte
	N    uint32
}

func (m *chat) Serialize(s *codec.Stream) {
	codec.Int(s, &m.Team, 0, 3)
	s.Text(m.Text[:], &m.Len)
	s.Bytes(m.Blob[:], &m.N)
}

func newChat(team uint8, text string, blob ...byte) chat {
	var m chat
	m.Team = team
	m.Len = uint32(copy(m.Text[:], text))
	m.N = uint32(copy(m.Blob[:], blob))
	return m
}

func messageSchema(t testing.TB, rules codec.MessageRules) (*codec.Schema, codec.MessageID) {
	var b codec.SchemaBuilder
	wiretest.Component[wiretest.Team](&b)
	id := wiretest.Message[chat](&b, rules)
	s, err := b.Build()
	require.NoError(t, err)
	return s, id
}

// roundTrip encodes m after skip bits (so fields start off a byte
// boundary) and decodes it into a value full of garbage.
func roundTrip(t *testing.T, s *codec.Schema, id codec.MessageID, m chat, skip int) (chat, int, error) {
	t.Helper()
	var w bitstream.Writer
	w.WriteBits(0, skip)
	var st codec.Stream
	s.EncodeMessage(&st, id, &w, unsafe.Pointer(&m))
	bits := w.BitLen() - skip
	var r bitstream.Reader
	r.Reset(w.Bytes())
	_, _ = r.ReadBits(skip)
	var got chat
	for i := range got.Text {
		got.Text[i] = 'x'
	}
	got.Blob = [5]byte{9, 9, 9, 9, 9}
	err := s.DecodeMessage(&st, id, &r, unsafe.Pointer(&got))
	return got, bits, err
}

func TestBytesAndTextRoundTrip(t *testing.T) {
	s, id := messageSchema(t, codec.MessageRules{})
	for skip := range 9 {
		m := newChat(2, "gg wp, ünïcödé ✓", 1, 2, 3)
		got, bits, err := roundTrip(t, s, id, m, skip)
		require.NoError(t, err)
		assert.Equal(t, m, got, "the rest of each buffer is zeroed")
		assert.Equal(t, 2+6+8*int(m.Len)+3+8*3, bits, "a length in the bits of the buffer's size, then the bytes")
	}
	// Empty fields cost their length.
	got, bits, err := roundTrip(t, s, id, chat{}, 3)
	require.NoError(t, err)
	assert.Equal(t, chat{}, got)
	assert.Equal(t, 2+6+3, bits)
	// A length past the buffer is clamped when encoding.
	m := newChat(0, "abc", 7)
	m.Len, m.N = 1000, 99
	got, _, err = roundTrip(t, s, id, m, 0)
	require.NoError(t, err)
	assert.Equal(t, uint32(40), got.Len)
	assert.Equal(t, uint32(5), got.N)
}

// Encoding sanitizes text so that it decodes: invalid UTF-8 becomes '?'
// and control characters spaces, byte for byte; decoding refuses what a
// hostile peer sends otherwise.
func TestTextIsValidOnTheWire(t *testing.T) {
	s, id := messageSchema(t, codec.MessageRules{})
	m := newChat(1, "a\nb\x00c\xffd\u0085e\tf")
	got, _, err := roundTrip(t, s, id, m, 1)
	require.NoError(t, err)
	assert.Equal(t, "a b c?d  e f", string(got.Text[:got.Len]))
	assert.Equal(t, "a\nb\x00c\xffd\u0085e\tf", string(m.Text[:m.Len]), "the value itself is untouched")

	for _, bad := range []string{"\n", "ok\x7f", "\xc3", "\xed\xa0\x80", "x\u009f"} {
		var w bitstream.Writer
		w.WriteBits(0, 2)
		w.WriteBits(uint64(len(bad)), 6)
		w.WriteBytes([]byte(bad))
		w.WriteBits(0, 3)
		var r bitstream.Reader
		r.Reset(w.Bytes())
		var got chat
		var st codec.Stream
		err := s.DecodeMessage(&st, id, &r, unsafe.Pointer(&got))
		require.ErrorIs(t, err, bitstream.ErrMalformed, "%q", bad)
		assert.Contains(t, err.Error(), "field Text: netsync: text has invalid UTF-8 or a control character")
	}
	// A length beyond the buffer is refused, naming the field.
	var w bitstream.Writer
	w.WriteBits(0, 2)
	w.WriteBits(41, 6)
	var r bitstream.Reader
	r.Reset(w.Bytes())
	var st codec.Stream
	err = s.DecodeMessage(&st, id, &r, unsafe.Pointer(&got))
	require.ErrorIs(t, err, bitstream.ErrOutOfRange)
	assert.EqualError(t, err, "field Text: netsync: 41 bytes in a field of 40: value out of range")
}

func TestMessageRulesDefaultsAndBounds(t *testing.T) {
	s, id := messageSchema(t, codec.MessageRules{})
	m, ok := s.Message(id)
	require.True(t, ok)
	assert.Equal(t, "codec_test.chat", m.Name())
	assert.Equal(t, codec.MessageRules{MaxBytes: (2 + 6 + 320 + 3 + 40 + 7) / 8, PerSecond: 10, Burst: 10}, m.Rules,
		"the description's most, 10 a second")
	got, ok := s.MessageOf(m.Type())
	assert.True(t, ok)
	assert.Equal(t, id, got)
	_, ok = s.Message(1)
	assert.False(t, ok)
	assert.Equal(t, 1, s.NumMessages())

	s, id = messageSchema(t, codec.MessageRules{Channel: codec.ChannelSequenced, Direction: codec.ToServer, MaxBytes: 20, PerSecond: 0.5})
	m, _ = s.Message(id)
	assert.Equal(t, codec.MessageRules{Channel: codec.ChannelSequenced, Direction: codec.ToServer, MaxBytes: 20, PerSecond: 0.5, Burst: 1}, m.Rules)
	s, id = messageSchema(t, codec.MessageRules{MaxBytes: 100_000})
	m, _ = s.Message(id)
	assert.Equal(t, 47, m.Rules.MaxBytes, "never above what the description encodes")

	for _, tc := range []struct {
		rules codec.MessageRules
		want  string
	}{
		{codec.MessageRules{Channel: 4}, "channel 4 outside 0..3"},
		{codec.MessageRules{Direction: 3}, "direction 3 outside 0..2"},
		{codec.MessageRules{MaxBytes: -1}, "MaxBytes -1 outside 0..256000"},
		{codec.MessageRules{MaxBytes: 256_001}, "MaxBytes 256001 outside 0..256000"},
		{codec.MessageRules{PerSecond: -1}, "PerSecond -1 outside 0..10000"},
		{codec.MessageRules{PerSecond: math.NaN()}, "PerSecond NaN outside 0..10000"},
		{codec.MessageRules{PerSecond: 10_001}, "PerSecond 10001 outside 0..10000"},
		{codec.MessageRules{Burst: -1}, "Burst -1 outside 0..100000"},
	} {
		err := buildErr(func(b *codec.SchemaBuilder) { wiretest.Message[chat](b, tc.rules) })
		assert.EqualError(t, err, "netsync: message codec_test.chat: "+tc.want)
	}
}

// big holds more than one packet.
type big struct {
	Data [2000]byte
	N    uint32
}

func (m *big) Serialize(s *codec.Stream) { s.Bytes(m.Data[:], &m.N) }

// huge holds more than MaxMessageBytes.
type huge struct {
	Data [codec.MaxFieldBytes]byte
	N    uint32
	X    uint32
}

func (m *huge) Serialize(s *codec.Stream) {
	s.Bytes(m.Data[:], &m.N)
	codec.Int(s, &m.X, 0, 1<<20)
}

type withText struct {
	T [8]byte
	N uint32
}

func (v *withText) Serialize(s *codec.Stream) { s.Text(v.T[:], &v.N) }

type emptyText struct{ N uint32 }

func (v *emptyText) Serialize(s *codec.Stream) { s.Text(nil, &v.N) }

type lengthOutside struct {
	T [8]byte
}

var outsideLength uint32

func (v *lengthOutside) Serialize(s *codec.Stream) { s.Bytes(v.T[:], &outsideLength) }

type withPointer struct{ P *int }

func (*withPointer) Serialize(*codec.Stream) {}

func TestMessageDeclarationErrors(t *testing.T) {
	err := buildErr(func(b *codec.SchemaBuilder) {
		wiretest.Message[big](b, codec.MessageRules{Channel: codec.ChannelUnreliable})
	})
	assert.EqualError(t, err, "netsync: message codec_test.big: up to 2002 bytes on the unreliable channel, which carries at most 1179: lower MaxBytes or use a reliable channel")
	assert.NoError(t, buildErr(func(b *codec.SchemaBuilder) {
		wiretest.Message[big](b, codec.MessageRules{Channel: codec.ChannelSequenced, MaxBytes: 1179})
	}), "a lower cap rides one packet")
	err = buildErr(func(b *codec.SchemaBuilder) { wiretest.Message[huge](b, codec.MessageRules{}) })
	assert.EqualError(t, err, "netsync: message codec_test.huge: up to 256005 bytes on the reliable-ordered channel, which carries at most 256000: lower MaxBytes or use a reliable channel")
	err = buildErr(func(b *codec.SchemaBuilder) {
		wiretest.Message[chat](b, codec.MessageRules{})
		wiretest.Message[chat](b, codec.MessageRules{})
	})
	assert.EqualError(t, err, "netsync: message codec_test.chat: declared twice")
	err = buildErr(func(b *codec.SchemaBuilder) { wiretest.Message[withPointer](b, codec.MessageRules{}) })
	assert.ErrorContains(t, err, "netsync: message codec_test.withPointer: ")
	assert.ErrorContains(t, err, "field P")
	err = buildErr(func(b *codec.SchemaBuilder) { wiretest.Message[emptyText](b, codec.MessageRules{}) })
	assert.EqualError(t, err, "netsync: message codec_test.emptyText: field 0: netsync: a byte field of 0 bytes; allowed 1..256000")
	err = buildErr(func(b *codec.SchemaBuilder) { wiretest.Message[lengthOutside](b, codec.MessageRules{}) })
	assert.ErrorContains(t, err, "field 0 keeps its length outside the value")

	// Components and inputs have fields of one width.
	err = buildErr(func(b *codec.SchemaBuilder) { wiretest.Component[withText](b) })
	assert.EqualError(t, err, "netsync: component codec_test.withText: field T codes a variable number of bytes, which only message types may (netsync.Message)")
	err = buildErr(func(b *codec.SchemaBuilder) { wiretest.DeclareInput[withText](b, wiretest.InputRulesOf[withText]{}) })
	assert.EqualError(t, err, "netsync: input type codec_test.withText: field T codes a variable number of bytes, which only message types may (netsync.Message)")

	var b codec.SchemaBuilder
	for i := 0; i <= codec.MaxMessages; i++ {
		// Arrays of different lengths are different types.
		b.AddMessage(reflect.ArrayOf(i+1, reflect.TypeFor[byte]()), func(unsafe.Pointer, *codec.Stream) {}, codec.MessageRules{})
	}
	_, err = b.Build()
	assert.ErrorContains(t, err, "would be the 257th message type; a schema holds at most 256")
}

// The message types are in the schema hash, with their rules: two ends
// agree only when they declare the same types the same way. A schema
// without message types hashes as before they existed.
func TestSchemaHashCoversMessageTypes(t *testing.T) {
	hash := func(f func(b *codec.SchemaBuilder)) uint64 {
		var b codec.SchemaBuilder
		wiretest.Component[wiretest.Team](&b)
		if f != nil {
			f(&b)
		}
		s, err := b.Build()
		require.NoError(t, err)
		return s.Hash()
	}
	none := hash(nil)
	base := hash(func(b *codec.SchemaBuilder) { wiretest.Message[chat](b, codec.MessageRules{}) })
	assert.NotEqual(t, none, base)
	assert.Equal(t, base, hash(func(b *codec.SchemaBuilder) { wiretest.Message[chat](b, codec.MessageRules{}) }))
	assert.Equal(t, base, hash(func(b *codec.SchemaBuilder) {
		wiretest.Message[chat](b, codec.MessageRules{PerSecond: 10, Burst: 10, MaxBytes: 47})
	}), "the defaults spelled out")
	seen := map[uint64]string{none: "none", base: "base"}
	for name, r := range map[string]codec.MessageRules{
		"channel": {Channel: codec.ChannelUnordered}, "direction": {Direction: codec.ToClient},
		"max bytes": {MaxBytes: 46}, "rate": {PerSecond: 11}, "burst": {Burst: 3},
	} {
		h := hash(func(b *codec.SchemaBuilder) { wiretest.Message[chat](b, r) })
		require.NotContains(t, seen, h, "%s: %s hashes alike", name, seen[h])
		seen[h] = name
	}
	h := hash(func(b *codec.SchemaBuilder) { wiretest.Message[withText](b, codec.MessageRules{}) })
	require.NotContains(t, seen, h, "another type")
}
