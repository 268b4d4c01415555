package protocol_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/bitstream"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/internal/wiretest"
)

// sharesArray reports whether two slices share their first element's memory.
func sharesArray[T any](a, b []T) bool {
	return cap(a) > 0 && cap(b) > 0 && &a[:1][0] == &b[:1][0]
}

func TestMsgTypeAndReasonStrings(t *testing.T) {
	want := map[protocol.MsgType]string{
		protocol.MsgHello: "hello", protocol.MsgWelcome: "welcome", protocol.MsgReject: "reject",
		protocol.MsgInputs: "inputs", protocol.MsgSnapshot: "snapshot", protocol.MsgDisconnect: "disconnect",
		0: "MsgType(0)", 11: "MsgType(11)", 7: "confirm", 8: "confirm-ack", 9: "events", 10: "game message",
	}
	for typ, s := range want {
		assert.Equal(t, s, typ.String())
	}
	reasons := map[protocol.RejectReason]string{
		protocol.RejectSchema: "schema mismatch", protocol.RejectTickRate: "tick rate mismatch",
		protocol.RejectFull: "server full", protocol.RejectTimeout: "timeout", protocol.RejectClosed: "closed",
		protocol.RejectSpawn: "the game refused the player", protocol.RejectMessages: "too many refused messages",
		0: "RejectReason(0)", 8: "RejectReason(8)", 200: "RejectReason(200)",
	}
	for r, s := range reasons {
		assert.Equal(t, s, r.String())
	}
}

// hashes returns n distinct component hashes.
func hashes(n int) []uint64 {
	h := make([]uint64, n)
	for i := range h {
		h[i] = uint64(i+1) * 0x9e3779b97f4a7c15
	}
	return h
}

func TestHelloRoundTrip(t *testing.T) {
	for _, h := range []protocol.Hello{
		{},
		{SchemaHash: 0xdeadbeefcafef00d, ComponentHashes: []uint64{1, 0, math.MaxUint64}, TickRate: 60, ClientTime: 123456789},
		{SchemaHash: math.MaxUint64, ComponentHashes: hashes(codec.MaxComponents), TickRate: math.MaxUint16, ClientTime: math.MaxUint32},
	} {
		buf := make([]byte, 0, 64)
		p := protocol.AppendHello(buf[:0], &h)
		assert.LessOrEqual(t, len(p), protocol.MaxDatagram, "a hello fits one datagram")
		if len(p) <= cap(buf) {
			assert.True(t, sharesArray(buf, p), "the packet is written into buf's capacity")
		}
		typ, err := protocol.PeekType(p)
		require.NoError(t, err)
		assert.Equal(t, protocol.MsgHello, typ)
		var got protocol.Hello
		require.NoError(t, protocol.DecodeHello(p, &got))
		assert.Equal(t, h, got)
	}
}

// rawHello writes a hello field by field: it announces count component
// hashes and holds the first n of them.
func rawHello(count, n int) []byte {
	var w bitstream.Writer
	w.WriteBits(protocol.ProtocolVersion, 8)
	w.WriteBits(uint64(protocol.MsgHello), 8)
	w.WriteBits(42, 64)
	w.WriteBits(60, 16)
	w.WriteBits(7, 32)
	w.WriteBits(uint64(count), 8)
	for i := range n {
		w.WriteBits(uint64(i), 64)
	}
	return w.Bytes()
}

func TestDecodeHelloRefusesHostileComponentCounts(t *testing.T) {
	kept := protocol.Hello{SchemaHash: 9, ComponentHashes: []uint64{5}}
	for _, tc := range []struct {
		name  string
		p     []byte
		want  error
		error string
	}{
		{"one beyond the bound", rawHello(codec.MaxComponents+1, codec.MaxComponents+1), bitstream.ErrOutOfRange, "129 component hashes, at most 128"},
		{"the most a byte says", rawHello(255, 0), bitstream.ErrOutOfRange, "255 component hashes"},
		{"hashes missing", rawHello(3, 2), bitstream.ErrShortBuffer, "announces 3 component hashes"},
		{"hashes beyond the count", rawHello(1, 2), bitstream.ErrMalformed, "64 bits after the end"},
	} {
		got := protocol.Hello{SchemaHash: kept.SchemaHash, ComponentHashes: append([]uint64(nil), kept.ComponentHashes...)}
		err := protocol.DecodeHello(tc.p, &got)
		require.ErrorIs(t, err, tc.want, tc.name)
		assert.Contains(t, err.Error(), tc.error, tc.name)
		assert.Equal(t, kept, got, "%s: a refused hello leaves the value alone", tc.name)
	}
	var h protocol.Hello
	require.NoError(t, protocol.DecodeHello(rawHello(codec.MaxComponents, codec.MaxComponents), &h), "the bound itself is fine")
	assert.Len(t, h.ComponentHashes, codec.MaxComponents)
}

func TestDecodeHelloReusesCapacity(t *testing.T) {
	p := protocol.AppendHello(nil, &protocol.Hello{SchemaHash: 1, ComponentHashes: hashes(3), TickRate: 60})
	var h protocol.Hello
	require.NoError(t, protocol.DecodeHello(p, &h))
	assert.Equal(t, codec.MaxComponents, cap(h.ComponentHashes), "grows once, to the bound")
	first := h.ComponentHashes
	allocs := testing.AllocsPerRun(100, func() {
		if err := protocol.DecodeHello(p, &h); err != nil {
			panic(err)
		}
	})
	assert.Zero(t, allocs)
	assert.True(t, sharesArray(first, h.ComponentHashes))
	assert.Equal(t, hashes(3), h.ComponentHashes)
}

func TestAppendHelloPanicsBeyondMaxComponents(t *testing.T) {
	assert.Panics(t, func() {
		protocol.AppendHello(nil, &protocol.Hello{ComponentHashes: make([]uint64, codec.MaxComponents+1)})
	})
}

func TestWelcomeRoundTrip(t *testing.T) {
	for _, m := range []protocol.Welcome{
		{Conn: 1, TickRate: 1},
		{Conn: 7, Player: 12, ServerTick: 99999, TickRate: 60, EchoTime: 4242, Hold: 3},
		{Conn: math.MaxUint32, Player: math.MaxUint32, ServerTick: math.MaxUint32, TickRate: math.MaxUint16, EchoTime: math.MaxUint32, Hold: math.MaxUint16},
	} {
		p := protocol.AppendWelcome(nil, &m)
		var got protocol.Welcome
		require.NoError(t, protocol.DecodeWelcome(p, &got))
		assert.Equal(t, m, got)
	}
}

func TestWelcomeRefusesZeroConnOrTickRate(t *testing.T) {
	for _, m := range []protocol.Welcome{{Conn: 0, TickRate: 60}, {Conn: 3, TickRate: 0}} {
		p := protocol.AppendWelcome(nil, &m)
		got := protocol.Welcome{Conn: 9}
		err := protocol.DecodeWelcome(p, &got)
		require.ErrorIs(t, err, bitstream.ErrOutOfRange)
		assert.Contains(t, err.Error(), "connection")
		assert.Equal(t, protocol.Welcome{Conn: 9}, got, "a refused welcome leaves the value alone")
	}
}

func TestRejectRoundTrip(t *testing.T) {
	for _, typ := range []protocol.MsgType{protocol.MsgReject, protocol.MsgDisconnect} {
		for r := protocol.RejectSchema; r <= protocol.RejectMessages; r++ {
			for _, detail := range []string{"", "component game.Position differs", "é⌘ 🎮", strings.Repeat("x", protocol.MaxRejectDetail)} {
				m := protocol.Reject{Reason: r, Detail: detail}
				buf := make([]byte, 0, 256)
				p := protocol.AppendReject(buf[:0], typ, &m)
				assert.True(t, sharesArray(buf, p), "the packet is written into buf's capacity")
				peek, err := protocol.PeekType(p)
				require.NoError(t, err)
				assert.Equal(t, typ, peek)
				var got protocol.Reject
				require.NoError(t, protocol.DecodeReject(p, typ, &got))
				assert.Equal(t, m, got)
			}
		}
	}
	p := protocol.AppendReject(nil, protocol.MsgReject, &protocol.Reject{Reason: protocol.RejectFull})
	var m protocol.Reject
	assert.ErrorIs(t, protocol.DecodeReject(p, protocol.MsgDisconnect, &m), bitstream.ErrMalformed, "a reject is not a disconnect")
	for _, bad := range []protocol.RejectReason{0, protocol.RejectMessages + 1, 255} {
		err := protocol.DecodeReject(protocol.AppendReject(nil, protocol.MsgDisconnect, &protocol.Reject{Reason: bad}), protocol.MsgDisconnect, &m)
		require.ErrorIs(t, err, bitstream.ErrOutOfRange, "reason %d", bad)
	}
	assert.Panics(t, func() { protocol.AppendReject(nil, protocol.MsgHello, &protocol.Reject{Reason: protocol.RejectFull}) })
}

// rawReject writes a reject field by field: a detail length and the
// detail bytes, which need not agree.
func rawReject(reason byte, length int, detail []byte) []byte {
	var w bitstream.Writer
	w.WriteBits(protocol.ProtocolVersion, 8)
	w.WriteBits(uint64(protocol.MsgReject), 8)
	w.WriteBits(uint64(reason), 8)
	w.WriteBits(uint64(length), 8)
	w.WriteBytes(detail)
	return w.Bytes()
}

func TestDecodeRejectRefusesHostileDetails(t *testing.T) {
	long := bytes.Repeat([]byte("a"), 255)
	kept := protocol.Reject{Reason: protocol.RejectFull, Detail: "kept"}
	for _, tc := range []struct {
		name  string
		p     []byte
		want  error
		error string
	}{
		{"one beyond the bound", rawReject(1, protocol.MaxRejectDetail+1, long[:protocol.MaxRejectDetail+1]), bitstream.ErrOutOfRange, "201 bytes, at most 200"},
		{"the most a byte says", rawReject(1, 255, long), bitstream.ErrOutOfRange, "255 bytes"},
		{"truncated detail", rawReject(1, 10, []byte("abc")), bitstream.ErrShortBuffer, "reading 10 bytes"},
		{"detail without its length byte", rawReject(1, 0, nil)[:3], bitstream.ErrShortBuffer, ""},
		{"longer than its length", rawReject(1, 2, []byte("abc")), bitstream.ErrMalformed, "8 bits after the end"},
		{"invalid UTF-8", rawReject(1, 3, []byte{'a', 0xff, 'b'}), bitstream.ErrMalformed, "at byte 1 of 3"},
		{"cut inside a character", rawReject(1, 1, []byte("é")[:1]), bitstream.ErrMalformed, "at byte 0 of 1"},
		{"a lone continuation byte", rawReject(1, 2, []byte{'a', 0x80}), bitstream.ErrMalformed, "at byte 1 of 2"},
		{"a terminal escape", rawReject(1, 5, []byte("\x1b[2Jx")), bitstream.ErrMalformed, "control character at byte 0"},
		{"a newline", rawReject(1, 3, []byte("a\nb")), bitstream.ErrMalformed, "at byte 1"},
	} {
		got := kept
		err := protocol.DecodeReject(tc.p, protocol.MsgReject, &got)
		require.ErrorIs(t, err, tc.want, tc.name)
		assert.Contains(t, err.Error(), tc.error, tc.name)
		assert.Equal(t, kept, got, "%s: a refused reject leaves the value alone", tc.name)
	}
}

func TestAppendRejectClipsTheDetail(t *testing.T) {
	for _, tc := range []struct{ detail, want string }{
		{strings.Repeat("x", 300), strings.Repeat("x", protocol.MaxRejectDetail)},
		// 3-byte characters: 66 fit in 200 bytes, the 67th would be cut.
		{strings.Repeat("⌘", 100), strings.Repeat("⌘", 66)},
		{"x" + strings.Repeat("🎮", 60), "x" + strings.Repeat("🎮", 49)},
		{"line\none\x1b[0m\tend", "line one [0m end"},
		{"bad \xff byte", "bad \uFFFD byte"},
	} {
		p := protocol.AppendReject(nil, protocol.MsgReject, &protocol.Reject{Reason: protocol.RejectSchema, Detail: tc.detail})
		var got protocol.Reject
		require.NoError(t, protocol.DecodeReject(p, protocol.MsgReject, &got), "%q", tc.detail)
		assert.Equal(t, tc.want, got.Detail)
		assert.True(t, utf8.ValidString(got.Detail))
		assert.LessOrEqual(t, len(got.Detail), protocol.MaxRejectDetail)
	}
	d := "component game.Position differs"
	buf := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		buf = protocol.AppendReject(buf[:0], protocol.MsgReject, &protocol.Reject{Reason: protocol.RejectSchema, Detail: d})
	})
	assert.Zero(t, allocs, "a valid detail is not copied")
}

func TestPeekTypeErrors(t *testing.T) {
	_, err := protocol.PeekType(nil)
	assert.ErrorIs(t, err, bitstream.ErrShortBuffer)
	_, err = protocol.PeekType([]byte{protocol.ProtocolVersion})
	assert.ErrorIs(t, err, bitstream.ErrShortBuffer)
	_, err = protocol.PeekType([]byte{protocol.ProtocolVersion + 1, byte(protocol.MsgHello)})
	require.ErrorIs(t, err, bitstream.ErrOutOfRange)
	assert.Contains(t, err.Error(), fmt.Sprintf("version %d", protocol.ProtocolVersion+1))
	for _, typ := range []byte{0, 11, 255} {
		_, err := protocol.PeekType([]byte{protocol.ProtocolVersion, typ})
		assert.ErrorIs(t, err, bitstream.ErrOutOfRange, "type %d", typ)
	}
	for typ := protocol.MsgHello; typ <= protocol.MsgGame; typ++ {
		got, err := protocol.PeekType([]byte{protocol.ProtocolVersion, byte(typ)})
		require.NoError(t, err)
		assert.Equal(t, typ, got)
	}
}

// msgInputSchema is the schema the inputs packets of the decoder tests
// use: wiretest.Input without rules (the decoder never runs them). It is built in
// init, after the quantizers its types use are.
var msgInputSchema *codec.Schema

func init() {
	var b codec.SchemaBuilder
	wiretest.Component[wiretest.Pos](&b)
	wiretest.DeclareInput[wiretest.Input](&b, wiretest.InputRulesOf[wiretest.Input]{})
	s, err := b.Build()
	if err != nil {
		panic(err)
	}
	msgInputSchema = s
}

// validPackets returns one valid packet of every message type but
// snapshots, by name.
func validPackets(t testing.TB) map[string][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	b := randomBatch(rng, msgInputSchema, 5, 1000)
	return map[string][]byte{
		"hello":      protocol.AppendHello(nil, &protocol.Hello{SchemaHash: 42, ComponentHashes: []uint64{1, 2}, TickRate: 60, ClientTime: 7}),
		"welcome":    protocol.AppendWelcome(nil, &protocol.Welcome{Conn: 1, ServerTick: 5, TickRate: 60, EchoTime: 7, Hold: 2}),
		"reject":     protocol.AppendReject(nil, protocol.MsgReject, &protocol.Reject{Reason: protocol.RejectSchema, Detail: "component game.Position differs"}),
		"disconnect": protocol.AppendReject(nil, protocol.MsgDisconnect, &protocol.Reject{Reason: protocol.RejectClosed}),
		"inputs":     protocol.AppendInputs(nil, msgInputSchema, &b),
	}
}

// decodeAny decodes p as the message named kind.
func decodeAny(kind string, p []byte) error {
	switch kind {
	case "hello":
		var h protocol.Hello
		return protocol.DecodeHello(p, &h)
	case "welcome":
		var m protocol.Welcome
		return protocol.DecodeWelcome(p, &m)
	case "reject":
		var m protocol.Reject
		return protocol.DecodeReject(p, protocol.MsgReject, &m)
	case "disconnect":
		var m protocol.Reject
		return protocol.DecodeReject(p, protocol.MsgDisconnect, &m)
	case "inputs":
		var b protocol.InputBatch
		return protocol.DecodeInputs(p, msgInputSchema, &b)
	}
	panic("unknown kind " + kind)
}

func TestDecodersRefuseTruncatedPackets(t *testing.T) {
	for kind, p := range validPackets(t) {
		require.NoError(t, decodeAny(kind, p), kind)
		for n := range len(p) {
			err := decodeAny(kind, p[:n])
			require.Error(t, err, "%s cut to %d of %d bytes", kind, n, len(p))
			assert.ErrorIs(t, err, bitstream.ErrShortBuffer, "%s cut to %d of %d bytes", kind, n, len(p))
		}
	}
}

func TestDecodersRefuseTrailingGarbage(t *testing.T) {
	for kind, p := range validPackets(t) {
		for _, extra := range [][]byte{{0}, {0xff}, make([]byte, 100)} {
			q := append(append([]byte(nil), p...), extra...)
			err := decodeAny(kind, q)
			require.Error(t, err, "%s with %d extra bytes", kind, len(extra))
			assert.ErrorIs(t, err, bitstream.ErrMalformed, "%s with %d extra bytes", kind, len(extra))
		}
	}
}

func TestDecodersRefuseWrongVersionAndType(t *testing.T) {
	for kind, p := range validPackets(t) {
		q := append([]byte(nil), p...)
		q[0] = protocol.ProtocolVersion + 1
		assert.ErrorIs(t, decodeAny(kind, q), bitstream.ErrOutOfRange, "%s of another version", kind)
		for _, typ := range []byte{0, 99} {
			q := append([]byte(nil), p...)
			q[1] = typ
			assert.ErrorIs(t, decodeAny(kind, q), bitstream.ErrOutOfRange, "%s with type %d", kind, typ)
		}
		for other, op := range validPackets(t) {
			if other == kind {
				continue
			}
			err := decodeAny(kind, op)
			require.Error(t, err, "%s decoded as %s", other, kind)
			assert.ErrorIs(t, err, bitstream.ErrMalformed, "%s decoded as %s", other, kind)
		}
	}
}

func TestDecodersNeverPanicOnRandomBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	kinds := []string{"hello", "welcome", "reject", "disconnect", "inputs"}
	for i := range 20000 {
		p := make([]byte, rng.IntN(80))
		for j := range p {
			p[j] = byte(rng.Uint32())
		}
		if len(p) >= 2 && i%2 == 0 { // get past the header half the time
			p[0] = protocol.ProtocolVersion
			p[1] = byte(1 + rng.IntN(6))
		}
		for _, kind := range kinds {
			require.NotPanics(t, func() { _ = decodeAny(kind, p) }, "%s: % x", kind, p)
		}
		_, _ = protocol.PeekType(p)
	}
}

// randomBatch returns a batch of n inputs ending at tick newest (starting
// before tick 0, wrapped, when newest < n-1), as the client's stream
// stores them: headers on the wire's grid and quantized records. Fields
// are varied and, half the time, carried over from the previous input so
// the "same as previous" encodings are used too.
func randomBatch(rng *rand.Rand, s *codec.Schema, n int, newest gw.Tick) protocol.InputBatch {
	b := protocol.InputBatch{ClientTime: rng.Uint32(), AckTick: gw.Tick(rng.Uint32()), AckParts: uint8(rng.IntN(16)), Resync: rng.IntN(4) == 0, Heads: make([]components.InputHeader, n)}
	var prev components.InputHeader
	var in wiretest.Input
	for i := range b.Heads {
		tick := newest.Add(-(n - 1 - i))
		keep := func() bool { return i > 0 && rng.IntN(2) == 0 }
		h := components.InputHeader{Tick: tick}
		if rng.IntN(3) > 0 {
			h.HasView = true
			d := rng.IntN(300)
			if keep() && prev.HasView {
				d = int(prev.Tick.Sub(prev.ViewTick))
			} else if rng.IntN(10) == 0 {
				d = 1<<20 - 1 - rng.IntN(3)
			}
			h.ViewTick = tick.Add(-d)
			h.ViewFraction = float32(rng.IntN(256)) / 256
			h.InterpolationDelay = float32(rng.IntN(1<<11)) / 16
			if keep() && prev.HasView {
				h.InterpolationDelay = prev.InterpolationDelay
			}
		}
		b.Heads[i] = h
		prev = h
		if !keep() {
			in = wiretest.Quantized(s, wiretest.Input{X: float32(rng.NormFloat64()), Y: float32(rng.NormFloat64()),
				Jump: components.Press(rng.IntN(2)), Steer: int8(rng.IntN(7) - 3)})
		}
		b.Data = append(b.Data, wiretest.RecOf(&in)[:s.InputSize()]...)
	}
	return b
}

func TestInputBatchRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, s := range []*codec.Schema{msgInputSchema, wiretest.NewHeaderOnlySchema(t)} {
		var got protocol.InputBatch
		buf := make([]byte, 0, 64)
		for n := 1; n <= codec.MaxInputsPerBatch; n++ {
			for _, newest := range []gw.Tick{gw.Tick(n - 1), gw.Tick(n), 0, 1000, gw.Tick(rng.Int64N(math.MaxUint32)), math.MaxUint32} {
				for range 20 {
					b := randomBatch(rng, s, n, newest)
					buf = protocol.AppendInputs(buf[:0], s, &b)
					typ, err := protocol.PeekType(buf)
					require.NoError(t, err)
					require.Equal(t, protocol.MsgInputs, typ)
					require.NoError(t, protocol.DecodeInputs(buf, s, &got), "n=%d newest=%d", n, newest)
					assert.Equal(t, b.ClientTime, got.ClientTime)
					assert.Equal(t, b.AckTick, got.AckTick)
					assert.Equal(t, b.AckParts, got.AckParts)
					assert.Equal(t, b.Resync, got.Resync)
					require.Equal(t, b.Heads, got.Heads)
					wiretest.RequireSameInputs(t, s, b.Data, got.Data)
				}
			}
		}
	}
}

func TestInputBatchWithoutAnInputTypeCarriesHeadersOnly(t *testing.T) {
	s := wiretest.NewHeaderOnlySchema(t)
	heads := []components.InputHeader{{Tick: 9}, {Tick: 10, HasView: true, ViewTick: 7, ViewFraction: 0.5, InterpolationDelay: 1.5}}
	p := protocol.AppendInputs(nil, s, &protocol.InputBatch{ClientTime: 3, AckTick: 8, AckParts: 1, Heads: heads})
	var got protocol.InputBatch
	require.NoError(t, protocol.DecodeInputs(p, s, &got))
	assert.Equal(t, heads, got.Heads)
	assert.Empty(t, got.Data)
	assert.Equal(t, uint32(3), got.ClientTime)
	assert.Equal(t, gw.Tick(8), got.AckTick)
	assert.Equal(t, uint8(1), got.AckParts)
	// 14 bytes and 6 bits of header (one says only part 0 is
	// acknowledged), 1 bit for the first input, 1+1+8+8+1+11 for the
	// second: no "same record" bits.
	assert.Len(t, p, (14*8+6+1+30+7)/8)

	assert.Panics(t, func() {
		protocol.AppendInputs(nil, s, &protocol.InputBatch{Heads: heads, Data: make([]byte, 1)})
	}, "a header-only batch has no record bytes")
}

func TestInputBatchEncodesOnlyWhatChanged(t *testing.T) {
	s := msgInputSchema
	b := protocol.InputBatch{}
	in := wiretest.Quantized(s, wiretest.Input{X: 1, Y: 0.5, Jump: 1, Steer: 2})
	for i := range 32 {
		b.Heads = append(b.Heads, components.InputHeader{Tick: gw.Tick(100 + i)})
		b.Data = append(b.Data, wiretest.RecOf(&in)...)
	}
	one := protocol.AppendInputs(nil, s, &protocol.InputBatch{Heads: b.Heads[:1], Data: b.Data[:s.InputSize()]})
	all := protocol.AppendInputs(nil, s, &b)
	// Each repeated input costs 2 bits: no view, same record.
	assert.LessOrEqual(t, len(all)-len(one), (31*2+7)/8+1)
}

func TestAppendInputsPanicsOnBatchesTheClientNeverBuilds(t *testing.T) {
	s := msgInputSchema
	size := s.InputSize()
	assert.Panics(t, func() { protocol.AppendInputs(nil, s, &protocol.InputBatch{}) })
	assert.Panics(t, func() {
		n := codec.MaxInputsPerBatch + 1
		heads := make([]components.InputHeader, n)
		for i := range heads {
			heads[i].Tick = gw.Tick(i)
		}
		protocol.AppendInputs(nil, s, &protocol.InputBatch{Heads: heads, Data: make([]byte, n*size)})
	})
	assert.Panics(t, func() {
		protocol.AppendInputs(nil, s, &protocol.InputBatch{Heads: []components.InputHeader{{Tick: 5}, {Tick: 7}}, Data: make([]byte, 2*size)})
	})
	assert.Panics(t, func() {
		protocol.AppendInputs(nil, s, &protocol.InputBatch{Heads: []components.InputHeader{{Tick: 5}, {Tick: 5}}, Data: make([]byte, 2*size)})
	})
	assert.Panics(t, func() {
		protocol.AppendInputs(nil, s, &protocol.InputBatch{Heads: []components.InputHeader{{Tick: 5}, {Tick: 6}}, Data: make([]byte, 2*size-1)})
	}, "records that do not match the headers")
	assert.NotPanics(t, func() {
		protocol.AppendInputs(nil, s, &protocol.InputBatch{Heads: []components.InputHeader{{Tick: 5}, {Tick: 6}}, Data: make([]byte, 2*size)})
	})
}

func TestDecodeInputsReusesCapacityAndNeverGrowsBeyondABatch(t *testing.T) {
	s := msgInputSchema
	size := s.InputSize()
	rng := rand.New(rand.NewPCG(5, 6))
	b := randomBatch(rng, s, codec.MaxInputsPerBatch, 5000)
	p := protocol.AppendInputs(nil, s, &b)

	var got protocol.InputBatch
	require.NoError(t, protocol.DecodeInputs(p, s, &got))
	assert.Equal(t, codec.MaxInputsPerBatch, cap(got.Heads), "a nil slice grows to one batch")
	assert.Equal(t, codec.MaxInputsPerBatch*size, cap(got.Data))
	firstHeads, firstData := got.Heads, got.Data
	require.NoError(t, protocol.DecodeInputs(p, s, &got))
	assert.True(t, sharesArray(firstHeads, got.Heads), "the second decode reuses the first's arrays")
	assert.True(t, sharesArray(firstData, got.Data))

	small := protocol.InputBatch{Heads: make([]components.InputHeader, 0, 3), Data: make([]byte, 0, 3*size)}
	require.NoError(t, protocol.DecodeInputs(p, s, &small))
	assert.Equal(t, codec.MaxInputsPerBatch, cap(small.Heads))
	assert.Equal(t, codec.MaxInputsPerBatch*size, cap(small.Data))

	big := protocol.InputBatch{Heads: make([]components.InputHeader, 0, 100), Data: make([]byte, 0, 100*size)}
	bigHeads, bigData := big.Heads, big.Data
	require.NoError(t, protocol.DecodeInputs(p, s, &big))
	assert.True(t, sharesArray(bigHeads, big.Heads), "a larger array is reused, not replaced")
	assert.True(t, sharesArray(bigData, big.Data))
	assert.Len(t, big.Heads, codec.MaxInputsPerBatch)
	assert.Len(t, big.Data, codec.MaxInputsPerBatch*size)

	allocs := testing.AllocsPerRun(100, func() {
		if err := protocol.DecodeInputs(p, s, &got); err != nil {
			panic(err)
		}
	})
	assert.Zero(t, allocs)
	buf := make([]byte, 0, 512)
	allocs = testing.AllocsPerRun(100, func() { buf = protocol.AppendInputs(buf[:0], s, &b) })
	assert.Zero(t, allocs)
}

// inputPacket writes an inputs packet field by field, so tests can put
// values in it that AppendInputs never writes.
type inputPacket struct {
	w bitstream.Writer
}

func newInputPacket(newest gw.Tick, n int) *inputPacket {
	p := &inputPacket{}
	p.w.WriteBits(protocol.ProtocolVersion, 8)
	p.w.WriteBits(uint64(protocol.MsgInputs), 8)
	p.w.WriteBits(1, 32) // client time
	p.w.WriteBits(2, 32) // ack
	p.w.WriteBool(true)  // part 0 acknowledged
	p.w.WriteBits(uint64(newest), 32)
	p.w.WriteBits(uint64(n-1), 5)
	return p
}

// view writes an input's view part: none when view is nil, else the
// distance to the input's tick, the fraction code and the delay code, all
// sent in full.
func (p *inputPacket) view(view *[3]int64) *inputPacket {
	p.w.WriteBool(view != nil)
	if view != nil {
		p.w.WriteBool(false) // not the previous input's view distance
		p.w.WriteVarint(view[0])
		p.w.WriteBits(uint64(view[1]), 8)
		p.w.WriteBool(false) // not the previous input's delay
		p.w.WriteBits(uint64(view[2]), 11)
	}
	return p
}

// record writes a wiretest.Input record: "same as the previous record" when codes
// is nil, else its codes (X, Y, Jump, Steer-(-3)).
func (p *inputPacket) record(codes *[4]uint64) *inputPacket {
	p.w.WriteBool(codes == nil)
	if codes != nil {
		p.w.WriteBits(codes[0], wiretest.InputQ.Bits())
		p.w.WriteBits(codes[1], wiretest.InputQ.Bits())
		p.w.WriteBits(codes[2], 1)
		p.w.WriteBits(codes[3], 3)
	}
	return p
}

// input writes one whole input of the wiretest.Input schema.
func (p *inputPacket) input(view *[3]int64, codes *[4]uint64) *inputPacket {
	return p.view(view).record(codes)
}

func (p *inputPacket) bytes() []byte { return p.w.Bytes() }

// zero codes a neutral wiretest.Input: both axes at 0, no jump, no steering.
var zero = &[4]uint64{64, 64, 0, 3}

// A client that fell behind the server shows remote ghosts newer than its
// own tick: a view after its input decodes, for lag compensation to judge.
func TestDecodeInputsAcceptsAViewAfterTheInput(t *testing.T) {
	p := newInputPacket(100, 1).input(&[3]int64{-5, 0, 0}, zero).bytes()
	var b protocol.InputBatch
	require.NoError(t, protocol.DecodeInputs(p, msgInputSchema, &b))
	assert.Equal(t, gw.Tick(105), b.Heads[0].ViewTick)
}

func TestDecodeInputsRefusesOutOfRangeValues(t *testing.T) {
	s := msgInputSchema
	valid := newInputPacket(100, 1).input(&[3]int64{4, 255, 2047}, &[4]uint64{128, 0, 1, 6}).bytes()
	var b protocol.InputBatch
	require.NoError(t, protocol.DecodeInputs(valid, s, &b), "the hand-built packet is valid")
	assert.Equal(t, []components.InputHeader{{Tick: 100, HasView: true, ViewTick: 96, ViewFraction: 255.0 / 256, InterpolationDelay: 2047.0 / 16}}, b.Heads)
	assert.Equal(t, wiretest.Input{X: 1, Y: -1, Jump: 1, Steer: 3}, wiretest.InputOf(t, b.Data))

	// Ticks wrap: a batch and a view may start before tick 0, and a view
	// may be up to 2^20-1 ticks back.
	wrapped := newInputPacket(2, 4).input(&[3]int64{5, 0, 0}, zero).input(nil, nil).input(nil, nil).
		input(&[3]int64{1<<20 - 1, 0, 0}, nil).bytes()
	require.NoError(t, protocol.DecodeInputs(wrapped, s, &b), "4 inputs ending at tick 2")
	require.Len(t, b.Heads, 4)
	for i, want := range []gw.Tick{math.MaxUint32, 0, 1, 2} {
		assert.Equal(t, want, b.Heads[i].Tick)
		assert.Equal(t, wiretest.Input{}, wiretest.InputOf(t, b.Data[i*s.InputSize():(i+1)*s.InputSize()]), "input %d repeats the first record", i)
	}
	assert.Equal(t, gw.Tick(math.MaxUint32-5), b.Heads[0].ViewTick)
	assert.Equal(t, gw.Tick(2).Add(-(1<<20 - 1)), b.Heads[3].ViewTick)

	// A view whose distance is "same as previous" but whose previous input
	// has no view; a delay likewise.
	sameView := newInputPacket(100, 2).input(nil, zero)
	sameView.w.WriteBool(true) // view present
	sameView.w.WriteBool(true) // same distance as the previous input's: it has none
	sameView.w.WriteBits(0, 8)
	sameView.w.WriteBool(false)
	sameView.w.WriteBits(0, 11)
	sameView.record(nil)
	sameDelay := newInputPacket(100, 1)
	sameDelay.w.WriteBool(true)
	sameDelay.w.WriteBool(false)
	sameDelay.w.WriteVarint(3)
	sameDelay.w.WriteBits(0, 8)
	sameDelay.w.WriteBool(true) // same delay as the previous input's: there is none
	sameDelay.record(zero)

	tests := map[string]struct {
		p    []byte
		want error
		text string
	}{
		"X code 129":               {newInputPacket(100, 1).input(nil, &[4]uint64{129, 64, 0, 3}).bytes(), bitstream.ErrOutOfRange, "code 129 out of range 0..128"},
		"Y code 255":               {newInputPacket(100, 1).input(nil, &[4]uint64{64, 255, 0, 3}).bytes(), bitstream.ErrOutOfRange, "code 255"},
		"steering code 7":          {newInputPacket(100, 1).input(nil, &[4]uint64{64, 64, 0, 7}).bytes(), bitstream.ErrOutOfRange, "integer 4 outside -3..3"},
		"view 2^20 ticks ahead":    {newInputPacket(100, 1).input(&[3]int64{-1 << 20, 0, 0}, zero).bytes(), bitstream.ErrOutOfRange, "-1048576 ticks before"},
		"view 2^20 ticks back":     {newInputPacket(1<<21, 1).input(&[3]int64{1 << 20, 0, 0}, zero).bytes(), bitstream.ErrOutOfRange, "1048576 ticks before the input's tick 2097152, outside ±1048575"},
		"view delta max int64":     {newInputPacket(100, 1).input(&[3]int64{math.MaxInt64, 0, 0}, zero).bytes(), bitstream.ErrOutOfRange, "view tick"},
		"view delta min int64":     {newInputPacket(100, 1).input(&[3]int64{math.MinInt64, 0, 0}, zero).bytes(), bitstream.ErrOutOfRange, "view tick"},
		"second input bad X":       {newInputPacket(100, 2).input(nil, zero).input(nil, &[4]uint64{200, 0, 0, 0}).bytes(), bitstream.ErrOutOfRange, "200"},
		"first record repeats":     {newInputPacket(100, 1).input(nil, nil).bytes(), bitstream.ErrMalformed, "first input of a batch repeats"},
		"view repeats none":        {sameView.bytes(), bitstream.ErrMalformed, "view tick repeats a previous one that has none"},
		"delay repeats none":       {sameDelay.bytes(), bitstream.ErrMalformed, "delay repeats a previous one that has none"},
		"count beyond data":        {newInputPacket(100, 32).input(nil, zero).bytes(), bitstream.ErrShortBuffer, ""},
		"trailing garbage":         {append(newInputPacket(100, 1).input(nil, zero).bytes(), 0, 0), bitstream.ErrMalformed, "bits after the end"},
		"names the input type":     {newInputPacket(100, 1).input(nil, &[4]uint64{129, 0, 0, 0}).bytes(), bitstream.ErrOutOfRange, "input wiretest.Input"},
		"count of a header packet": {newInputPacket(100, 2).view(nil).view(nil).bytes(), bitstream.ErrShortBuffer, ""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			b := protocol.InputBatch{Heads: make([]components.InputHeader, 0, codec.MaxInputsPerBatch)}
			err := protocol.DecodeInputs(tt.p, s, &b)
			require.Error(t, err)
			assert.True(t, errors.Is(err, tt.want), "%v is not %v", err, tt.want)
			assert.Contains(t, err.Error(), tt.text)
			assert.Empty(t, b.Heads, "a refused batch holds no input")
			assert.Empty(t, b.Data)
		})
	}
}

func TestDecodeHeaderOnlyInputsRefusesHostilePackets(t *testing.T) {
	s := wiretest.NewHeaderOnlySchema(t)
	var b protocol.InputBatch
	require.NoError(t, protocol.DecodeInputs(newInputPacket(7, 2).view(nil).view(&[3]int64{3, 1, 2}).bytes(), s, &b))
	assert.Equal(t, []components.InputHeader{{Tick: 6}, {Tick: 7, HasView: true, ViewTick: 4, ViewFraction: 1.0 / 256, InterpolationDelay: 2.0 / 16}}, b.Heads)

	for name, tt := range map[string]struct {
		p    []byte
		want error
		text string
	}{
		"view 2^20 after the input": {newInputPacket(100, 1).view(&[3]int64{-1 << 20, 0, 0}).bytes(), bitstream.ErrOutOfRange, "-1048576 ticks before"},
		"count beyond data":         {newInputPacket(100, 9).view(nil).bytes(), bitstream.ErrShortBuffer, ""},
		"trailing garbage":          {append(newInputPacket(100, 1).view(nil).bytes(), 1), bitstream.ErrMalformed, "after the end"},
	} {
		err := protocol.DecodeInputs(tt.p, s, &b)
		require.Error(t, err, name)
		assert.ErrorIs(t, err, tt.want, name)
		assert.Contains(t, err.Error(), tt.text, name)
		assert.Empty(t, b.Heads, name)
	}
}

func TestInputViewRepeatsCostOneBit(t *testing.T) {
	s := wiretest.NewHeaderOnlySchema(t)
	batch := protocol.InputBatch{AckParts: 1}
	for tick := gw.Tick(200); tick < 208; tick++ {
		h := components.InputHeader{Tick: tick, HasView: true, ViewTick: tick - 9, ViewFraction: float32(tick%4) / 4, InterpolationDelay: 5.5}
		if tick == 204 {
			h.ViewTick, h.InterpolationDelay = tick-11, 6 // the delay changed: sent in full once
		}
		batch.Heads = append(batch.Heads, h)
	}
	p := protocol.AppendInputs(nil, s, &batch)
	var got protocol.InputBatch
	require.NoError(t, protocol.DecodeInputs(p, s, &got))
	assert.Equal(t, batch.Heads, got.Heads)
	// 14 bytes and a bit of header, then 8 inputs: three full view encodings (the first, 204 and 205, back
	// to the old distance and delay) at 1+1+8+8+1+11 bits, the other five
	// at 1+1+8+1 bits.
	assert.Len(t, p, (14*8+1+5+3*30+5*11+7)/8, "repeated view distances and delays must be cheap")
	assert.Equal(t, gw.Tick(197), got.Heads[6].ViewTick)
	assert.Equal(t, float32(5.5), got.Heads[6].InterpolationDelay)
}

// The Append functions follow append: what buf held stays in front.
func TestAppendKeepsWhatTheBufferHeld(t *testing.T) {
	prefix := []byte("ab")
	p := protocol.AppendWelcome(append([]byte(nil), prefix...), &protocol.Welcome{Conn: 3, ServerTick: 9, TickRate: 60})
	require.Equal(t, prefix, p[:2])
	var w protocol.Welcome
	require.NoError(t, protocol.DecodeWelcome(p[2:], &w))
	assert.Equal(t, protocol.Welcome{Conn: 3, ServerTick: 9, TickRate: 60}, w)
	p = protocol.AppendReject(append([]byte(nil), prefix...), protocol.MsgReject, &protocol.Reject{Reason: protocol.RejectFull})
	require.Equal(t, prefix, p[:2])
	var r protocol.Reject
	require.NoError(t, protocol.DecodeReject(p[2:], protocol.MsgReject, &r))
	assert.Equal(t, protocol.RejectFull, r.Reason)
}

// The welcome's bytes are those docs/wire.md shows.
func TestWelcomeBytesAreTheDocumentedOnes(t *testing.T) {
	doc, err := os.ReadFile("../../docs/wire.md")
	require.NoError(t, err)
	p := protocol.AppendWelcome(nil, &protocol.Welcome{Conn: 1, Player: 1, ServerTick: 500, TickRate: 60, EchoTime: 1000, Hold: 3})
	want := fmt.Sprintf("%02x %02x |", p[0], p[1])
	for line := range strings.Lines(string(doc)) {
		if strings.HasPrefix(line, want) {
			shown := strings.NewReplacer(" ", "", "|", "", "\n", "").Replace(line)
			assert.Equal(t, hex.EncodeToString(p), strings.TrimSpace(shown))
			return
		}
	}
	t.Fatalf("docs/wire.md shows no welcome starting %q", want)
}
