package netsync_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
)

// sharesArray reports whether two slices share their first element's memory.
func sharesArray[T any](a, b []T) bool {
	return cap(a) > 0 && cap(b) > 0 && &a[:1][0] == &b[:1][0]
}

func TestMsgTypeAndReasonStrings(t *testing.T) {
	want := map[netsync.MsgType]string{
		netsync.MsgHello: "hello", netsync.MsgWelcome: "welcome", netsync.MsgReject: "reject",
		netsync.MsgInputs: "inputs", netsync.MsgSnapshot: "snapshot", netsync.MsgDisconnect: "disconnect",
		0: "MsgType(0)", 7: "MsgType(7)",
	}
	for typ, s := range want {
		assert.Equal(t, s, typ.String())
	}
	reasons := map[netsync.RejectReason]string{
		netsync.RejectSchema: "schema mismatch", netsync.RejectTickRate: "tick rate mismatch",
		netsync.RejectFull: "server full", netsync.RejectTimeout: "timeout", netsync.RejectClosed: "closed",
		netsync.RejectSpawn: "the game refused the player", 0: "RejectReason(0)", 7: "RejectReason(7)", 200: "RejectReason(200)",
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
	for _, h := range []netsync.Hello{
		{},
		{SchemaHash: 0xdeadbeefcafef00d, ComponentHashes: []uint64{1, 0, math.MaxUint64}, TickRate: 60, ClientTime: 123456789},
		{SchemaHash: math.MaxUint64, ComponentHashes: hashes(netsync.MaxComponents), TickRate: math.MaxUint16, ClientTime: math.MaxUint32},
	} {
		buf := make([]byte, 0, 64)
		p := netsync.AppendHello(buf[:0], &h)
		assert.LessOrEqual(t, len(p), netsync.MaxDatagram, "a hello fits one datagram")
		if len(p) <= cap(buf) {
			assert.True(t, sharesArray(buf, p), "the packet is written into buf's capacity")
		}
		typ, err := netsync.PeekType(p)
		require.NoError(t, err)
		assert.Equal(t, netsync.MsgHello, typ)
		var got netsync.Hello
		require.NoError(t, netsync.DecodeHello(p, &got))
		assert.Equal(t, h, got)
	}
}

// rawHello writes a hello field by field: it announces count component
// hashes and holds the first n of them.
func rawHello(count, n int) []byte {
	var w netsync.BitWriter
	w.WriteBits(netsync.ProtocolVersion, 8)
	w.WriteBits(uint64(netsync.MsgHello), 8)
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
	kept := netsync.Hello{SchemaHash: 9, ComponentHashes: []uint64{5}}
	for _, tc := range []struct {
		name  string
		p     []byte
		want  error
		error string
	}{
		{"one beyond the bound", rawHello(netsync.MaxComponents+1, netsync.MaxComponents+1), netsync.ErrOutOfRange, "129 component hashes, at most 128"},
		{"the most a byte says", rawHello(255, 0), netsync.ErrOutOfRange, "255 component hashes"},
		{"hashes missing", rawHello(3, 2), netsync.ErrShortBuffer, "announces 3 component hashes"},
		{"hashes beyond the count", rawHello(1, 2), netsync.ErrMalformed, "64 bits after the end"},
	} {
		got := netsync.Hello{SchemaHash: kept.SchemaHash, ComponentHashes: append([]uint64(nil), kept.ComponentHashes...)}
		err := netsync.DecodeHello(tc.p, &got)
		require.ErrorIs(t, err, tc.want, tc.name)
		assert.Contains(t, err.Error(), tc.error, tc.name)
		assert.Equal(t, kept, got, "%s: a refused hello leaves the value alone", tc.name)
	}
	var h netsync.Hello
	require.NoError(t, netsync.DecodeHello(rawHello(netsync.MaxComponents, netsync.MaxComponents), &h), "the bound itself is fine")
	assert.Len(t, h.ComponentHashes, netsync.MaxComponents)
}

func TestDecodeHelloReusesCapacity(t *testing.T) {
	p := netsync.AppendHello(nil, &netsync.Hello{SchemaHash: 1, ComponentHashes: hashes(3), TickRate: 60})
	var h netsync.Hello
	require.NoError(t, netsync.DecodeHello(p, &h))
	assert.Equal(t, netsync.MaxComponents, cap(h.ComponentHashes), "grows once, to the bound")
	first := h.ComponentHashes
	allocs := testing.AllocsPerRun(100, func() {
		if err := netsync.DecodeHello(p, &h); err != nil {
			panic(err)
		}
	})
	assert.Zero(t, allocs)
	assert.True(t, sharesArray(first, h.ComponentHashes))
	assert.Equal(t, hashes(3), h.ComponentHashes)
}

func TestAppendHelloPanicsBeyondMaxComponents(t *testing.T) {
	assert.Panics(t, func() {
		netsync.AppendHello(nil, &netsync.Hello{ComponentHashes: make([]uint64, netsync.MaxComponents+1)})
	})
}

func TestWelcomeRoundTrip(t *testing.T) {
	for _, m := range []netsync.Welcome{
		{Conn: 1, TickRate: 1},
		{Conn: 7, ServerTick: 99999, TickRate: 60, EchoTime: 4242, Hold: 3},
		{Conn: math.MaxUint32, ServerTick: math.MaxUint32, TickRate: math.MaxUint16, EchoTime: math.MaxUint32, Hold: math.MaxUint16},
	} {
		p := netsync.AppendWelcome(nil, &m)
		var got netsync.Welcome
		require.NoError(t, netsync.DecodeWelcome(p, &got))
		assert.Equal(t, m, got)
	}
}

func TestWelcomeRefusesZeroConnOrTickRate(t *testing.T) {
	for _, m := range []netsync.Welcome{{Conn: 0, TickRate: 60}, {Conn: 3, TickRate: 0}} {
		p := netsync.AppendWelcome(nil, &m)
		got := netsync.Welcome{Conn: 9}
		err := netsync.DecodeWelcome(p, &got)
		require.ErrorIs(t, err, netsync.ErrOutOfRange)
		assert.Contains(t, err.Error(), "connection")
		assert.Equal(t, netsync.Welcome{Conn: 9}, got, "a refused welcome leaves the value alone")
	}
}

func TestRejectRoundTrip(t *testing.T) {
	for _, typ := range []netsync.MsgType{netsync.MsgReject, netsync.MsgDisconnect} {
		for r := netsync.RejectSchema; r <= netsync.RejectSpawn; r++ {
			for _, detail := range []string{"", "component game.Position differs", "é⌘ 🎮", strings.Repeat("x", netsync.MaxRejectDetail)} {
				m := netsync.Reject{Reason: r, Detail: detail}
				buf := make([]byte, 0, 256)
				p := netsync.AppendReject(buf[:0], typ, &m)
				assert.True(t, sharesArray(buf, p), "the packet is written into buf's capacity")
				peek, err := netsync.PeekType(p)
				require.NoError(t, err)
				assert.Equal(t, typ, peek)
				var got netsync.Reject
				require.NoError(t, netsync.DecodeReject(p, typ, &got))
				assert.Equal(t, m, got)
			}
		}
	}
	p := netsync.AppendReject(nil, netsync.MsgReject, &netsync.Reject{Reason: netsync.RejectFull})
	var m netsync.Reject
	assert.ErrorIs(t, netsync.DecodeReject(p, netsync.MsgDisconnect, &m), netsync.ErrMalformed, "a reject is not a disconnect")
	for _, bad := range []netsync.RejectReason{0, netsync.RejectSpawn + 1, 255} {
		err := netsync.DecodeReject(netsync.AppendReject(nil, netsync.MsgDisconnect, &netsync.Reject{Reason: bad}), netsync.MsgDisconnect, &m)
		require.ErrorIs(t, err, netsync.ErrOutOfRange, "reason %d", bad)
	}
	assert.Panics(t, func() { netsync.AppendReject(nil, netsync.MsgHello, &netsync.Reject{Reason: netsync.RejectFull}) })
}

// rawReject writes a reject field by field: a detail length and the
// detail bytes, which need not agree.
func rawReject(reason byte, length int, detail []byte) []byte {
	var w netsync.BitWriter
	w.WriteBits(netsync.ProtocolVersion, 8)
	w.WriteBits(uint64(netsync.MsgReject), 8)
	w.WriteBits(uint64(reason), 8)
	w.WriteBits(uint64(length), 8)
	w.WriteBytes(detail)
	return w.Bytes()
}

func TestDecodeRejectRefusesHostileDetails(t *testing.T) {
	long := bytes.Repeat([]byte("a"), 255)
	kept := netsync.Reject{Reason: netsync.RejectFull, Detail: "kept"}
	for _, tc := range []struct {
		name  string
		p     []byte
		want  error
		error string
	}{
		{"one beyond the bound", rawReject(1, netsync.MaxRejectDetail+1, long[:netsync.MaxRejectDetail+1]), netsync.ErrOutOfRange, "201 bytes, at most 200"},
		{"the most a byte says", rawReject(1, 255, long), netsync.ErrOutOfRange, "255 bytes"},
		{"truncated detail", rawReject(1, 10, []byte("abc")), netsync.ErrShortBuffer, "reading 10 bytes"},
		{"detail without its length byte", rawReject(1, 0, nil)[:3], netsync.ErrShortBuffer, ""},
		{"longer than its length", rawReject(1, 2, []byte("abc")), netsync.ErrMalformed, "8 bits after the end"},
		{"invalid UTF-8", rawReject(1, 3, []byte{'a', 0xff, 'b'}), netsync.ErrMalformed, "at byte 1 of 3"},
		{"cut inside a character", rawReject(1, 1, []byte("é")[:1]), netsync.ErrMalformed, "at byte 0 of 1"},
		{"a lone continuation byte", rawReject(1, 2, []byte{'a', 0x80}), netsync.ErrMalformed, "at byte 1 of 2"},
		{"a terminal escape", rawReject(1, 5, []byte("\x1b[2Jx")), netsync.ErrMalformed, "control character at byte 0"},
		{"a newline", rawReject(1, 3, []byte("a\nb")), netsync.ErrMalformed, "at byte 1"},
	} {
		got := kept
		err := netsync.DecodeReject(tc.p, netsync.MsgReject, &got)
		require.ErrorIs(t, err, tc.want, tc.name)
		assert.Contains(t, err.Error(), tc.error, tc.name)
		assert.Equal(t, kept, got, "%s: a refused reject leaves the value alone", tc.name)
	}
}

func TestAppendRejectClipsTheDetail(t *testing.T) {
	for _, tc := range []struct{ detail, want string }{
		{strings.Repeat("x", 300), strings.Repeat("x", netsync.MaxRejectDetail)},
		// 3-byte characters: 66 fit in 200 bytes, the 67th would be cut.
		{strings.Repeat("⌘", 100), strings.Repeat("⌘", 66)},
		{"x" + strings.Repeat("🎮", 60), "x" + strings.Repeat("🎮", 49)},
		{"line\none\x1b[0m\tend", "line one [0m end"},
		{"bad \xff byte", "bad \uFFFD byte"},
	} {
		p := netsync.AppendReject(nil, netsync.MsgReject, &netsync.Reject{Reason: netsync.RejectSchema, Detail: tc.detail})
		var got netsync.Reject
		require.NoError(t, netsync.DecodeReject(p, netsync.MsgReject, &got), "%q", tc.detail)
		assert.Equal(t, tc.want, got.Detail)
		assert.True(t, utf8.ValidString(got.Detail))
		assert.LessOrEqual(t, len(got.Detail), netsync.MaxRejectDetail)
	}
	d := "component game.Position differs"
	buf := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		buf = netsync.AppendReject(buf[:0], netsync.MsgReject, &netsync.Reject{Reason: netsync.RejectSchema, Detail: d})
	})
	assert.Zero(t, allocs, "a valid detail is not copied")
}

func TestPeekTypeErrors(t *testing.T) {
	_, err := netsync.PeekType(nil)
	assert.ErrorIs(t, err, netsync.ErrShortBuffer)
	_, err = netsync.PeekType([]byte{netsync.ProtocolVersion})
	assert.ErrorIs(t, err, netsync.ErrShortBuffer)
	_, err = netsync.PeekType([]byte{netsync.ProtocolVersion + 1, byte(netsync.MsgHello)})
	require.ErrorIs(t, err, netsync.ErrOutOfRange)
	assert.Contains(t, err.Error(), fmt.Sprintf("version %d", netsync.ProtocolVersion+1))
	for _, typ := range []byte{0, 7, 255} {
		_, err := netsync.PeekType([]byte{netsync.ProtocolVersion, typ})
		assert.ErrorIs(t, err, netsync.ErrOutOfRange, "type %d", typ)
	}
	for typ := netsync.MsgHello; typ <= netsync.MsgDisconnect; typ++ {
		got, err := netsync.PeekType([]byte{netsync.ProtocolVersion, byte(typ)})
		require.NoError(t, err)
		assert.Equal(t, typ, got)
	}
}

// msgInputSchema is the schema the inputs packets of the decoder tests
// use: tInput without rules (the decoder never runs them). It is built in
// init, after the quantizers its types use are.
var msgInputSchema *netsync.Schema

func init() {
	var b netsync.SchemaBuilder
	netsync.Component[tPos](&b)
	netsync.Input[tInput](&b, netsync.InputRules[tInput]{})
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
		"hello":      netsync.AppendHello(nil, &netsync.Hello{SchemaHash: 42, ComponentHashes: []uint64{1, 2}, TickRate: 60, ClientTime: 7}),
		"welcome":    netsync.AppendWelcome(nil, &netsync.Welcome{Conn: 1, ServerTick: 5, TickRate: 60, EchoTime: 7, Hold: 2}),
		"reject":     netsync.AppendReject(nil, netsync.MsgReject, &netsync.Reject{Reason: netsync.RejectSchema, Detail: "component game.Position differs"}),
		"disconnect": netsync.AppendReject(nil, netsync.MsgDisconnect, &netsync.Reject{Reason: netsync.RejectClosed}),
		"inputs":     netsync.AppendInputs(nil, msgInputSchema, &b),
	}
}

// decodeAny decodes p as the message named kind.
func decodeAny(kind string, p []byte) error {
	switch kind {
	case "hello":
		var h netsync.Hello
		return netsync.DecodeHello(p, &h)
	case "welcome":
		var m netsync.Welcome
		return netsync.DecodeWelcome(p, &m)
	case "reject":
		var m netsync.Reject
		return netsync.DecodeReject(p, netsync.MsgReject, &m)
	case "disconnect":
		var m netsync.Reject
		return netsync.DecodeReject(p, netsync.MsgDisconnect, &m)
	case "inputs":
		var b netsync.InputBatch
		return netsync.DecodeInputs(p, msgInputSchema, &b)
	}
	panic("unknown kind " + kind)
}

func TestDecodersRefuseTruncatedPackets(t *testing.T) {
	for kind, p := range validPackets(t) {
		require.NoError(t, decodeAny(kind, p), kind)
		for n := range len(p) {
			err := decodeAny(kind, p[:n])
			require.Error(t, err, "%s cut to %d of %d bytes", kind, n, len(p))
			assert.ErrorIs(t, err, netsync.ErrShortBuffer, "%s cut to %d of %d bytes", kind, n, len(p))
		}
	}
}

func TestDecodersRefuseTrailingGarbage(t *testing.T) {
	for kind, p := range validPackets(t) {
		for _, extra := range [][]byte{{0}, {0xff}, make([]byte, 100)} {
			q := append(append([]byte(nil), p...), extra...)
			err := decodeAny(kind, q)
			require.Error(t, err, "%s with %d extra bytes", kind, len(extra))
			assert.ErrorIs(t, err, netsync.ErrMalformed, "%s with %d extra bytes", kind, len(extra))
		}
	}
}

func TestDecodersRefuseWrongVersionAndType(t *testing.T) {
	for kind, p := range validPackets(t) {
		q := append([]byte(nil), p...)
		q[0] = netsync.ProtocolVersion + 1
		assert.ErrorIs(t, decodeAny(kind, q), netsync.ErrOutOfRange, "%s of another version", kind)
		for _, typ := range []byte{0, 99} {
			q := append([]byte(nil), p...)
			q[1] = typ
			assert.ErrorIs(t, decodeAny(kind, q), netsync.ErrOutOfRange, "%s with type %d", kind, typ)
		}
		for other, op := range validPackets(t) {
			if other == kind {
				continue
			}
			err := decodeAny(kind, op)
			require.Error(t, err, "%s decoded as %s", other, kind)
			assert.ErrorIs(t, err, netsync.ErrMalformed, "%s decoded as %s", other, kind)
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
			p[0] = netsync.ProtocolVersion
			p[1] = byte(1 + rng.IntN(6))
		}
		for _, kind := range kinds {
			require.NotPanics(t, func() { _ = decodeAny(kind, p) }, "%s: % x", kind, p)
		}
		_, _ = netsync.PeekType(p)
	}
}

// randomBatch returns a batch of n inputs ending at tick newest (starting
// before tick 0, wrapped, when newest < n-1), as the client's stream
// stores them: headers on the wire's grid and quantized records. Fields
// are varied and, half the time, carried over from the previous input so
// the "same as previous" encodings are used too.
func randomBatch(rng *rand.Rand, s *netsync.Schema, n int, newest gw.Tick) netsync.InputBatch {
	b := netsync.InputBatch{ClientTime: rng.Uint32(), AckTick: gw.Tick(rng.Uint32()), Heads: make([]components.InputHeader, n)}
	var prev components.InputHeader
	var in tInput
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
			in = quantized(s, tInput{X: float32(rng.NormFloat64()), Y: float32(rng.NormFloat64()),
				Jump: components.Press(rng.IntN(2)), Steer: int8(rng.IntN(7) - 3)})
		}
		b.Data = append(b.Data, recOf(&in)[:s.InputSize()]...)
	}
	return b
}

func TestInputBatchRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, s := range []*netsync.Schema{msgInputSchema, newHeaderOnlySchema(t)} {
		var got netsync.InputBatch
		buf := make([]byte, 0, 64)
		for n := 1; n <= netsync.MaxInputsPerBatch; n++ {
			for _, newest := range []gw.Tick{gw.Tick(n - 1), gw.Tick(n), 0, 1000, gw.Tick(rng.Int64N(math.MaxUint32)), math.MaxUint32} {
				for range 20 {
					b := randomBatch(rng, s, n, newest)
					buf = netsync.AppendInputs(buf[:0], s, &b)
					typ, err := netsync.PeekType(buf)
					require.NoError(t, err)
					require.Equal(t, netsync.MsgInputs, typ)
					require.NoError(t, netsync.DecodeInputs(buf, s, &got), "n=%d newest=%d", n, newest)
					assert.Equal(t, b.ClientTime, got.ClientTime)
					assert.Equal(t, b.AckTick, got.AckTick)
					require.Equal(t, b.Heads, got.Heads)
					requireSameInputs(t, s, b.Data, got.Data)
				}
			}
		}
	}
}

func TestInputBatchWithoutAnInputTypeCarriesHeadersOnly(t *testing.T) {
	s := newHeaderOnlySchema(t)
	heads := []components.InputHeader{{Tick: 9}, {Tick: 10, HasView: true, ViewTick: 7, ViewFraction: 0.5, InterpolationDelay: 1.5}}
	p := netsync.AppendInputs(nil, s, &netsync.InputBatch{ClientTime: 3, AckTick: 8, Heads: heads})
	var got netsync.InputBatch
	require.NoError(t, netsync.DecodeInputs(p, s, &got))
	assert.Equal(t, heads, got.Heads)
	assert.Empty(t, got.Data)
	assert.Equal(t, uint32(3), got.ClientTime)
	assert.Equal(t, gw.Tick(8), got.AckTick)
	// 14 bytes and 5 bits of header, 1 bit for the first input, 1+1+8+8+1+11
	// for the second: no "same record" bits.
	assert.Len(t, p, (14*8+5+1+30+7)/8)

	assert.Panics(t, func() {
		netsync.AppendInputs(nil, s, &netsync.InputBatch{Heads: heads, Data: make([]byte, 1)})
	}, "a header-only batch has no record bytes")
}

func TestInputBatchEncodesOnlyWhatChanged(t *testing.T) {
	s := msgInputSchema
	b := netsync.InputBatch{}
	in := quantized(s, tInput{X: 1, Y: 0.5, Jump: 1, Steer: 2})
	for i := range 32 {
		b.Heads = append(b.Heads, components.InputHeader{Tick: gw.Tick(100 + i)})
		b.Data = append(b.Data, recOf(&in)...)
	}
	one := netsync.AppendInputs(nil, s, &netsync.InputBatch{Heads: b.Heads[:1], Data: b.Data[:s.InputSize()]})
	all := netsync.AppendInputs(nil, s, &b)
	// Each repeated input costs 2 bits: no view, same record.
	assert.LessOrEqual(t, len(all)-len(one), (31*2+7)/8+1)
}

func TestAppendInputsPanicsOnBatchesTheClientNeverBuilds(t *testing.T) {
	s := msgInputSchema
	size := s.InputSize()
	assert.Panics(t, func() { netsync.AppendInputs(nil, s, &netsync.InputBatch{}) })
	assert.Panics(t, func() {
		n := netsync.MaxInputsPerBatch + 1
		heads := make([]components.InputHeader, n)
		for i := range heads {
			heads[i].Tick = gw.Tick(i)
		}
		netsync.AppendInputs(nil, s, &netsync.InputBatch{Heads: heads, Data: make([]byte, n*size)})
	})
	assert.Panics(t, func() {
		netsync.AppendInputs(nil, s, &netsync.InputBatch{Heads: []components.InputHeader{{Tick: 5}, {Tick: 7}}, Data: make([]byte, 2*size)})
	})
	assert.Panics(t, func() {
		netsync.AppendInputs(nil, s, &netsync.InputBatch{Heads: []components.InputHeader{{Tick: 5}, {Tick: 5}}, Data: make([]byte, 2*size)})
	})
	assert.Panics(t, func() {
		netsync.AppendInputs(nil, s, &netsync.InputBatch{Heads: []components.InputHeader{{Tick: 5}, {Tick: 6}}, Data: make([]byte, 2*size-1)})
	}, "records that do not match the headers")
	assert.NotPanics(t, func() {
		netsync.AppendInputs(nil, s, &netsync.InputBatch{Heads: []components.InputHeader{{Tick: 5}, {Tick: 6}}, Data: make([]byte, 2*size)})
	})
}

func TestDecodeInputsReusesCapacityAndNeverGrowsBeyondABatch(t *testing.T) {
	s := msgInputSchema
	size := s.InputSize()
	rng := rand.New(rand.NewPCG(5, 6))
	b := randomBatch(rng, s, netsync.MaxInputsPerBatch, 5000)
	p := netsync.AppendInputs(nil, s, &b)

	var got netsync.InputBatch
	require.NoError(t, netsync.DecodeInputs(p, s, &got))
	assert.Equal(t, netsync.MaxInputsPerBatch, cap(got.Heads), "a nil slice grows to one batch")
	assert.Equal(t, netsync.MaxInputsPerBatch*size, cap(got.Data))
	firstHeads, firstData := got.Heads, got.Data
	require.NoError(t, netsync.DecodeInputs(p, s, &got))
	assert.True(t, sharesArray(firstHeads, got.Heads), "the second decode reuses the first's arrays")
	assert.True(t, sharesArray(firstData, got.Data))

	small := netsync.InputBatch{Heads: make([]components.InputHeader, 0, 3), Data: make([]byte, 0, 3*size)}
	require.NoError(t, netsync.DecodeInputs(p, s, &small))
	assert.Equal(t, netsync.MaxInputsPerBatch, cap(small.Heads))
	assert.Equal(t, netsync.MaxInputsPerBatch*size, cap(small.Data))

	big := netsync.InputBatch{Heads: make([]components.InputHeader, 0, 100), Data: make([]byte, 0, 100*size)}
	bigHeads, bigData := big.Heads, big.Data
	require.NoError(t, netsync.DecodeInputs(p, s, &big))
	assert.True(t, sharesArray(bigHeads, big.Heads), "a larger array is reused, not replaced")
	assert.True(t, sharesArray(bigData, big.Data))
	assert.Len(t, big.Heads, netsync.MaxInputsPerBatch)
	assert.Len(t, big.Data, netsync.MaxInputsPerBatch*size)

	allocs := testing.AllocsPerRun(100, func() {
		if err := netsync.DecodeInputs(p, s, &got); err != nil {
			panic(err)
		}
	})
	assert.Zero(t, allocs)
	buf := make([]byte, 0, 512)
	allocs = testing.AllocsPerRun(100, func() { buf = netsync.AppendInputs(buf[:0], s, &b) })
	assert.Zero(t, allocs)
}

// inputPacket writes an inputs packet field by field, so tests can put
// values in it that AppendInputs never writes.
type inputPacket struct {
	w netsync.BitWriter
}

func newInputPacket(newest gw.Tick, n int) *inputPacket {
	p := &inputPacket{}
	p.w.WriteBits(netsync.ProtocolVersion, 8)
	p.w.WriteBits(uint64(netsync.MsgInputs), 8)
	p.w.WriteBits(1, 32) // client time
	p.w.WriteBits(2, 32) // ack
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

// record writes a tInput record: "same as the previous record" when codes
// is nil, else its codes (X, Y, Jump, Steer-(-3)).
func (p *inputPacket) record(codes *[4]uint64) *inputPacket {
	p.w.WriteBool(codes == nil)
	if codes != nil {
		p.w.WriteBits(codes[0], testInputQ.Bits())
		p.w.WriteBits(codes[1], testInputQ.Bits())
		p.w.WriteBits(codes[2], 1)
		p.w.WriteBits(codes[3], 3)
	}
	return p
}

// input writes one whole input of the tInput schema.
func (p *inputPacket) input(view *[3]int64, codes *[4]uint64) *inputPacket {
	return p.view(view).record(codes)
}

func (p *inputPacket) bytes() []byte { return p.w.Bytes() }

// zero codes a neutral tInput: both axes at 0, no jump, no steering.
var zero = &[4]uint64{64, 64, 0, 3}

// A client that fell behind the server shows remote ghosts newer than its
// own tick: a view after its input decodes, for lag compensation to judge.
func TestDecodeInputsAcceptsAViewAfterTheInput(t *testing.T) {
	p := newInputPacket(100, 1).input(&[3]int64{-5, 0, 0}, zero).bytes()
	var b netsync.InputBatch
	require.NoError(t, netsync.DecodeInputs(p, msgInputSchema, &b))
	assert.Equal(t, gw.Tick(105), b.Heads[0].ViewTick)
}

func TestDecodeInputsRefusesOutOfRangeValues(t *testing.T) {
	s := msgInputSchema
	valid := newInputPacket(100, 1).input(&[3]int64{4, 255, 2047}, &[4]uint64{128, 0, 1, 6}).bytes()
	var b netsync.InputBatch
	require.NoError(t, netsync.DecodeInputs(valid, s, &b), "the hand-built packet is valid")
	assert.Equal(t, []components.InputHeader{{Tick: 100, HasView: true, ViewTick: 96, ViewFraction: 255.0 / 256, InterpolationDelay: 2047.0 / 16}}, b.Heads)
	assert.Equal(t, tInput{X: 1, Y: -1, Jump: 1, Steer: 3}, inputOf(t, b.Data))

	// Ticks wrap: a batch and a view may start before tick 0, and a view
	// may be up to 2^20-1 ticks back.
	wrapped := newInputPacket(2, 4).input(&[3]int64{5, 0, 0}, zero).input(nil, nil).input(nil, nil).
		input(&[3]int64{1<<20 - 1, 0, 0}, nil).bytes()
	require.NoError(t, netsync.DecodeInputs(wrapped, s, &b), "4 inputs ending at tick 2")
	require.Len(t, b.Heads, 4)
	for i, want := range []gw.Tick{math.MaxUint32, 0, 1, 2} {
		assert.Equal(t, want, b.Heads[i].Tick)
		assert.Equal(t, tInput{}, inputOf(t, b.Data[i*s.InputSize():(i+1)*s.InputSize()]), "input %d repeats the first record", i)
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
		"X code 129":               {newInputPacket(100, 1).input(nil, &[4]uint64{129, 64, 0, 3}).bytes(), netsync.ErrOutOfRange, "code 129 out of range 0..128"},
		"Y code 255":               {newInputPacket(100, 1).input(nil, &[4]uint64{64, 255, 0, 3}).bytes(), netsync.ErrOutOfRange, "code 255"},
		"steering code 7":          {newInputPacket(100, 1).input(nil, &[4]uint64{64, 64, 0, 7}).bytes(), netsync.ErrOutOfRange, "integer 4 outside -3..3"},
		"view 2^20 ticks ahead":    {newInputPacket(100, 1).input(&[3]int64{-1 << 20, 0, 0}, zero).bytes(), netsync.ErrOutOfRange, "-1048576 ticks before"},
		"view 2^20 ticks back":     {newInputPacket(1<<21, 1).input(&[3]int64{1 << 20, 0, 0}, zero).bytes(), netsync.ErrOutOfRange, "1048576 ticks before the input's tick 2097152, outside ±1048575"},
		"view delta max int64":     {newInputPacket(100, 1).input(&[3]int64{math.MaxInt64, 0, 0}, zero).bytes(), netsync.ErrOutOfRange, "view tick"},
		"view delta min int64":     {newInputPacket(100, 1).input(&[3]int64{math.MinInt64, 0, 0}, zero).bytes(), netsync.ErrOutOfRange, "view tick"},
		"second input bad X":       {newInputPacket(100, 2).input(nil, zero).input(nil, &[4]uint64{200, 0, 0, 0}).bytes(), netsync.ErrOutOfRange, "200"},
		"first record repeats":     {newInputPacket(100, 1).input(nil, nil).bytes(), netsync.ErrMalformed, "first input of a batch repeats"},
		"view repeats none":        {sameView.bytes(), netsync.ErrMalformed, "view tick repeats a previous one that has none"},
		"delay repeats none":       {sameDelay.bytes(), netsync.ErrMalformed, "delay repeats a previous one that has none"},
		"count beyond data":        {newInputPacket(100, 32).input(nil, zero).bytes(), netsync.ErrShortBuffer, ""},
		"trailing garbage":         {append(newInputPacket(100, 1).input(nil, zero).bytes(), 0, 0), netsync.ErrMalformed, "bits after the end"},
		"names the input type":     {newInputPacket(100, 1).input(nil, &[4]uint64{129, 0, 0, 0}).bytes(), netsync.ErrOutOfRange, "input netsync_test.tInput"},
		"count of a header packet": {newInputPacket(100, 2).view(nil).view(nil).bytes(), netsync.ErrShortBuffer, ""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			b := netsync.InputBatch{Heads: make([]components.InputHeader, 0, netsync.MaxInputsPerBatch)}
			err := netsync.DecodeInputs(tt.p, s, &b)
			require.Error(t, err)
			assert.True(t, errors.Is(err, tt.want), "%v is not %v", err, tt.want)
			assert.Contains(t, err.Error(), tt.text)
			assert.Empty(t, b.Heads, "a refused batch holds no input")
			assert.Empty(t, b.Data)
		})
	}
}

func TestDecodeHeaderOnlyInputsRefusesHostilePackets(t *testing.T) {
	s := newHeaderOnlySchema(t)
	var b netsync.InputBatch
	require.NoError(t, netsync.DecodeInputs(newInputPacket(7, 2).view(nil).view(&[3]int64{3, 1, 2}).bytes(), s, &b))
	assert.Equal(t, []components.InputHeader{{Tick: 6}, {Tick: 7, HasView: true, ViewTick: 4, ViewFraction: 1.0 / 256, InterpolationDelay: 2.0 / 16}}, b.Heads)

	for name, tt := range map[string]struct {
		p    []byte
		want error
		text string
	}{
		"view 2^20 after the input": {newInputPacket(100, 1).view(&[3]int64{-1 << 20, 0, 0}).bytes(), netsync.ErrOutOfRange, "-1048576 ticks before"},
		"count beyond data":         {newInputPacket(100, 9).view(nil).bytes(), netsync.ErrShortBuffer, ""},
		"trailing garbage":          {append(newInputPacket(100, 1).view(nil).bytes(), 1), netsync.ErrMalformed, "after the end"},
	} {
		err := netsync.DecodeInputs(tt.p, s, &b)
		require.Error(t, err, name)
		assert.ErrorIs(t, err, tt.want, name)
		assert.Contains(t, err.Error(), tt.text, name)
		assert.Empty(t, b.Heads, name)
	}
}

func TestInputViewRepeatsCostOneBit(t *testing.T) {
	s := newHeaderOnlySchema(t)
	batch := netsync.InputBatch{}
	for tick := gw.Tick(200); tick < 208; tick++ {
		h := components.InputHeader{Tick: tick, HasView: true, ViewTick: tick - 9, ViewFraction: float32(tick%4) / 4, InterpolationDelay: 5.5}
		if tick == 204 {
			h.ViewTick, h.InterpolationDelay = tick-11, 6 // the delay changed: sent in full once
		}
		batch.Heads = append(batch.Heads, h)
	}
	p := netsync.AppendInputs(nil, s, &batch)
	var got netsync.InputBatch
	require.NoError(t, netsync.DecodeInputs(p, s, &got))
	assert.Equal(t, batch.Heads, got.Heads)
	// 8 inputs: three full view encodings (the first, 204 and 205, back
	// to the old distance and delay) at 1+1+8+8+1+11 bits, the other five
	// at 1+1+8+1 bits.
	assert.Len(t, p, (14*8+5+3*30+5*11+7)/8, "repeated view distances and delays must be cheap")
	assert.Equal(t, gw.Tick(197), got.Heads[6].ViewTick)
	assert.Equal(t, float32(5.5), got.Heads[6].InterpolationDelay)
}

// The Append functions follow append: what buf held stays in front.
func TestAppendKeepsWhatTheBufferHeld(t *testing.T) {
	prefix := []byte("ab")
	p := netsync.AppendWelcome(append([]byte(nil), prefix...), &netsync.Welcome{Conn: 3, ServerTick: 9, TickRate: 60})
	require.Equal(t, prefix, p[:2])
	var w netsync.Welcome
	require.NoError(t, netsync.DecodeWelcome(p[2:], &w))
	assert.Equal(t, netsync.Welcome{Conn: 3, ServerTick: 9, TickRate: 60}, w)
	p = netsync.AppendReject(append([]byte(nil), prefix...), netsync.MsgReject, &netsync.Reject{Reason: netsync.RejectFull})
	require.Equal(t, prefix, p[:2])
	var r netsync.Reject
	require.NoError(t, netsync.DecodeReject(p[2:], netsync.MsgReject, &r))
	assert.Equal(t, netsync.RejectFull, r.Reason)
}
