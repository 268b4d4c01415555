package protocol_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/internal/bitstream"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/internal/wiretest"
)

// note is a game message with a number, text, a flag and bytes.
type note struct {
	Kind uint8 // 0..9
	Text [30]byte
	Len  uint32
	Loud bool
	Blob [5]byte
	N    uint32
}

func (m *note) Serialize(s *codec.Stream) {
	codec.Int(s, &m.Kind, 0, 9)
	s.Text(m.Text[:], &m.Len)
	s.Bool(&m.Loud)
	s.Bytes(m.Blob[:], &m.N)
}

func newNote(kind uint8, text string, loud bool, blob ...byte) note {
	m := note{Kind: kind, Loud: loud}
	m.Len = uint32(copy(m.Text[:], text))
	m.N = uint32(copy(m.Blob[:], blob))
	return m
}

// gameSchema declares note four times over: one type per channel, each
// with its direction and a cap of 20 bytes.
type gameSchema struct {
	*codec.Schema
	ordered, unordered, unreliable, sequenced codec.MessageID
}

type (
	noteOrdered    struct{ note }
	noteUnordered  struct{ note }
	noteUnreliable struct{ note }
	noteSequenced  struct{ note }
)

var gameMessages = func() *gameSchema {
	var b codec.SchemaBuilder
	wiretest.Component[wiretest.Team](&b)
	g := &gameSchema{
		ordered:    wiretest.Message[noteOrdered](&b, codec.MessageRules{MaxBytes: 20}),
		unordered:  wiretest.Message[noteUnordered](&b, codec.MessageRules{Channel: codec.ChannelUnordered, Direction: codec.ToServer, MaxBytes: 20}),
		unreliable: wiretest.Message[noteUnreliable](&b, codec.MessageRules{Channel: codec.ChannelUnreliable, Direction: codec.ToClient, MaxBytes: 20}),
		sequenced:  wiretest.Message[noteSequenced](&b, codec.MessageRules{Channel: codec.ChannelSequenced, MaxBytes: 20}),
	}
	s, err := b.Build()
	if err != nil {
		panic(err)
	}
	g.Schema = s
	return g
}()

func appendNote(h protocol.GameHeader, m note) ([]byte, int) {
	var st codec.Stream
	var w bitstream.Writer
	return protocol.AppendGame(nil, gameMessages.Schema, &st, &w, &h, unsafe.Pointer(&m))
}

// A game message decodes to what was sent on every channel, its header
// bytes where the wire documentation puts them; a receiver refuses what
// the schema does not allow, by reason.
func TestGameMessageRoundTrip(t *testing.T) {
	g := gameMessages
	for _, id := range []codec.MessageID{g.ordered, g.unordered, g.unreliable, g.sequenced} {
		m, _ := g.Message(id)
		h := protocol.GameHeader{ID: id, Tick: 0xfffffffe, Seq: 0xbeef}
		sent := newNote(7, "gg ✓", true, 0xff, 0)
		p, fieldBytes := appendNote(h, sent)
		n := protocol.GameHeaderBytes(m.Rules.Channel)
		assert.Equal(t, (4+5+8*int(sent.Len)+1+3+16+7)/8, fieldBytes, "type %d", id)
		assert.Len(t, p, n+fieldBytes)
		assert.Equal(t, []byte{protocol.ProtocolVersion, byte(protocol.MsgGame), byte(id), 0xfe, 0xff, 0xff, 0xff}, p[:7])
		var got protocol.GameHeader
		mt, refusal := protocol.ReadGameHeader(p, g.Schema, m.Rules.Direction != codec.ToClient, &got)
		require.Equal(t, protocol.RefuseNone, refusal)
		require.Same(t, m, mt)
		if m.Rules.Channel == codec.ChannelSequenced {
			assert.Equal(t, 9, n)
			assert.Equal(t, []byte{0xef, 0xbe}, p[protocol.GameSeqOffset:9])
			assert.Equal(t, h, got)
		} else {
			assert.Equal(t, protocol.GameHeader{ID: id, Tick: h.Tick}, got, "no sequence off the sequenced channel")
		}
		out := newNote(3, "garbage garbage garbage", false)
		var st codec.Stream
		var r bitstream.Reader
		require.NoError(t, protocol.DecodeGameFields(p, g.Schema, &st, &r, &got, unsafe.Pointer(&out)))
		assert.Equal(t, sent, out, "type %d: the rest of the text zeroed", id)
	}
}

func TestGameMessageRefusals(t *testing.T) {
	g := gameMessages
	ordered, _ := appendNote(protocol.GameHeader{ID: g.ordered, Tick: 5}, newNote(1, "hi", false))
	toServer, _ := appendNote(protocol.GameHeader{ID: g.unordered}, newNote(1, "hi", false))
	toClient, _ := appendNote(protocol.GameHeader{ID: g.unreliable}, newNote(1, "hi", false))
	long, fieldBytes := appendNote(protocol.GameHeader{ID: g.ordered}, newNote(1, "twenty-one bytes of text", false))
	require.Greater(t, fieldBytes, 20)
	unknown := bytes.Clone(ordered)
	unknown[2] = 4
	for name, tc := range map[string]struct {
		p        []byte
		toServer bool
		want     protocol.Refusal
	}{
		"accepted by the server":   {ordered, true, protocol.RefuseNone},
		"accepted by a client":     {ordered, false, protocol.RefuseNone},
		"to the server only":       {toServer, false, protocol.RefuseUnknown},
		"to clients only":          {toClient, true, protocol.RefuseUnknown},
		"unknown type":             {unknown, true, protocol.RefuseUnknown},
		"oversized":                {long, true, protocol.RefuseOversized},
		"short":                    {ordered[:6], true, protocol.RefuseMalformed},
		"no type":                  {ordered[:2], true, protocol.RefuseMalformed},
		"another version":          {append([]byte{protocol.ProtocolVersion + 1}, ordered[1:]...), true, protocol.RefuseMalformed},
		"another protocol message": {append([]byte{protocol.ProtocolVersion, byte(protocol.MsgInputs)}, ordered[2:]...), true, protocol.RefuseMalformed},
	} {
		var h protocol.GameHeader
		_, got := protocol.ReadGameHeader(tc.p, g.Schema, tc.toServer, &h)
		assert.Equal(t, tc.want, got, name)
	}
	sequenced, _ := appendNote(protocol.GameHeader{ID: g.sequenced, Seq: 9}, note{})
	var h protocol.GameHeader
	_, got := protocol.ReadGameHeader(sequenced[:8], g.Schema, true, &h)
	assert.Equal(t, protocol.RefuseMalformed, got, "a sequence cut short")

	// Fields that do not decode, or bits after them, are malformed.
	decode := func(p []byte) error {
		var h protocol.GameHeader
		_, refusal := protocol.ReadGameHeader(p, g.Schema, true, &h)
		require.Equal(t, protocol.RefuseNone, refusal)
		var st codec.Stream
		var r bitstream.Reader
		var out note
		return protocol.DecodeGameFields(p, g.Schema, &st, &r, &h, unsafe.Pointer(&out))
	}
	assert.ErrorIs(t, decode(append(bytes.Clone(ordered), 0)), bitstream.ErrMalformed, "a byte after the fields")
	bad := bytes.Clone(ordered)
	bad[7] = 0x0f // kind 15 of 0..9
	assert.ErrorIs(t, decode(bad), bitstream.ErrOutOfRange)
	assert.ErrorIs(t, decode(ordered[:8]), bitstream.ErrShortBuffer)
	assert.Panics(t, func() { appendNote(protocol.GameHeader{ID: 4}, note{}) }, "an ID the schema lacks")
}

func FuzzDecodeGame(f *testing.F) {
	g := gameMessages
	for _, id := range []codec.MessageID{g.ordered, g.unordered, g.unreliable, g.sequenced} {
		p, _ := appendNote(protocol.GameHeader{ID: id, Tick: 77, Seq: 3}, newNote(9, "ab\u00e9", true, 1, 2, 3))
		f.Add(p)
	}
	f.Add([]byte{protocol.ProtocolVersion, byte(protocol.MsgGame), 3, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, p []byte) {
		for _, toServer := range []bool{true, false} {
			var h protocol.GameHeader
			m, refusal := protocol.ReadGameHeader(p, g.Schema, toServer, &h)
			if refusal != protocol.RefuseNone {
				require.Nil(t, m)
				continue
			}
			require.True(t, m.Rules.Direction.Allows(toServer))
			require.LessOrEqual(t, len(p)-protocol.GameHeaderBytes(m.Rules.Channel), m.Rules.MaxBytes)
			var st codec.Stream
			var r bitstream.Reader
			var out note
			if err := protocol.DecodeGameFields(p, g.Schema, &st, &r, &h, unsafe.Pointer(&out)); err != nil {
				requireDecodeError(t, err)
				continue
			}
			// What decodes encodes to a message that decodes to the same.
			again, _ := appendNote(h, out)
			var h2 protocol.GameHeader
			_, refusal = protocol.ReadGameHeader(again, g.Schema, toServer, &h2)
			require.Equal(t, protocol.RefuseNone, refusal)
			require.Equal(t, h, h2)
			var out2 note
			require.NoError(t, protocol.DecodeGameFields(again, g.Schema, &st, &r, &h2, unsafe.Pointer(&out2)))
			require.Equal(t, out, out2)
		}
	})
}

// chatLine is docs/wire.md's example game message.
type chatLine struct {
	From uint32
	Text [64]byte
	Len  uint32
}

func (m *chatLine) Serialize(s *codec.Stream) {
	codec.Int(s, &m.From, 0, 1<<32-1)
	s.Text(m.Text[:], &m.Len)
}

// docs/wire.md shows a game message byte for byte: these bytes.
func TestGameMessageBytesAreTheDocumentedOnes(t *testing.T) {
	var b codec.SchemaBuilder
	id := wiretest.Message[chatLine](&b, codec.MessageRules{})
	s, err := b.Build()
	require.NoError(t, err)
	m := chatLine{From: 2, Len: 2}
	copy(m.Text[:], "gg")
	var st codec.Stream
	var w bitstream.Writer
	p, _ := protocol.AppendGame(nil, s, &st, &w, &protocol.GameHeader{ID: id, Tick: 500}, unsafe.Pointer(&m))
	doc, err := os.ReadFile("../../docs/wire.md")
	require.NoError(t, err)
	want := fmt.Sprintf("%02x %02x |", p[0], p[1])
	for line := range strings.Lines(string(doc)) {
		if strings.HasPrefix(line, want) {
			shown := strings.NewReplacer(" ", "", "|", "", "\n", "").Replace(line)
			assert.Equal(t, hex.EncodeToString(p), strings.TrimSpace(shown))
			return
		}
	}
	t.Fatalf("docs/wire.md shows no game message starting %q", want)
}
