package netsync_test

import (
	"bytes"
	"errors"
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
		netsync.RejectFull: "server full", netsync.ReasonTimeout: "timeout", netsync.ReasonClosed: "closed",
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
		p := netsync.AppendHello(buf, &h)
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
		{Conn: math.MaxUint16, ServerTick: math.MaxUint32, TickRate: math.MaxUint16, EchoTime: math.MaxUint32, Hold: math.MaxUint16},
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
				p := netsync.AppendReject(buf, typ, &m)
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
		buf = netsync.AppendReject(buf, netsync.MsgReject, &netsync.Reject{Reason: netsync.RejectSchema, Detail: d})
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
	assert.Contains(t, err.Error(), "version 2")
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

// validPackets returns one valid packet of every message type but
// snapshots, by name.
func validPackets(t testing.TB) map[string][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	b := randomBatch(rng, 5, 1000)
	return map[string][]byte{
		"hello":      netsync.AppendHello(nil, &netsync.Hello{SchemaHash: 42, ComponentHashes: []uint64{1, 2}, TickRate: 60, ClientTime: 7}),
		"welcome":    netsync.AppendWelcome(nil, &netsync.Welcome{Conn: 1, ServerTick: 5, TickRate: 60, EchoTime: 7, Hold: 2}),
		"reject":     netsync.AppendReject(nil, netsync.MsgReject, &netsync.Reject{Reason: netsync.RejectSchema, Detail: "component game.Position differs"}),
		"disconnect": netsync.AppendReject(nil, netsync.MsgDisconnect, &netsync.Reject{Reason: netsync.ReasonClosed}),
		"inputs":     netsync.AppendInputs(nil, &b),
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
		return netsync.DecodeInputs(p, &b)
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

// randomBatch returns a batch of n quantized commands ending at tick newest
// (starting before tick 0, wrapped, when newest < n-1), with every field varied and, half the time, carried over
// from the previous command so the "unchanged" encodings are used too.
func randomBatch(rng *rand.Rand, n int, newest gw.Tick) netsync.InputBatch {
	b := netsync.InputBatch{ClientTime: rng.Uint32(), AckTick: gw.Tick(rng.Uint32()), Inputs: make([]components.InputCommand, n)}
	var prev components.InputCommand
	for i := range b.Inputs {
		tick := newest.Add(-(n - 1 - i))
		c := prev
		c.Tick = tick
		keep := func() bool { return i > 0 && rng.IntN(2) == 0 }
		if !keep() {
			c.Buttons = rng.Uint32() >> rng.IntN(32)
		}
		if !keep() {
			c.MoveX, c.MoveY = float32(rng.NormFloat64()), float32(rng.NormFloat64())
		}
		if !keep() {
			c.Aim = float32((rng.Float64() - 0.5) * 20)
		}
		if tick == 0 || rng.IntN(3) == 0 {
			// No view tick; a sampler may still fill in the rest.
			c.ViewTick, c.ViewFraction, c.InterpolationDelay = 0, 0, 0
			if rng.IntN(2) == 0 {
				c.ViewFraction, c.InterpolationDelay = rng.Float32(), rng.Float32()*10
			}
		} else {
			// 0..299 ticks before, across the wrap too; tick 0 means none.
			c.ViewTick = tick.Add(-rng.IntN(300))
			if c.ViewTick == 0 {
				c.ViewTick = tick
			}
			c.ViewFraction = rng.Float32()
			c.InterpolationDelay = rng.Float32() * 140 // beyond the maximum too
		}
		switch rng.IntN(4) {
		case 0:
			c.OriginX, c.OriginY, c.OriginZ = 0, 0, 0
		case 1:
			negZero := float32(math.Copysign(0, -1))
			c.OriginX, c.OriginY, c.OriginZ = float32(rng.NormFloat64()*100), negZero, float32(rng.NormFloat64())
			if rng.IntN(2) == 0 {
				c.OriginX, c.OriginZ = negZero, 0 // -0 only: "no origin" on the wire
			}
		default:
			c.OriginX, c.OriginY, c.OriginZ = float32(rng.NormFloat64()*1e3), float32(rng.NormFloat64()*1e-3), float32(rng.NormFloat64()*1e6)
		}
		netsync.QuantizeInput(&c)
		b.Inputs[i] = c
		prev = c
	}
	return b
}

// requireSameCommands checks that two command lists are equal bit for bit.
func requireSameCommands(t testing.TB, want, got []components.InputCommand) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		w, g := want[i], got[i]
		require.Equal(t, w, g, "command %d", i)
		for j, pair := range [][2]float32{
			{w.MoveX, g.MoveX}, {w.MoveY, g.MoveY}, {w.Aim, g.Aim}, {w.ViewFraction, g.ViewFraction},
			{w.InterpolationDelay, g.InterpolationDelay}, {w.OriginX, g.OriginX}, {w.OriginY, g.OriginY}, {w.OriginZ, g.OriginZ},
		} {
			require.Equal(t, math.Float32bits(pair[0]), math.Float32bits(pair[1]), "command %d float field %d: %v vs %v", i, j, pair[0], pair[1])
		}
	}
}

func TestInputBatchRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var got netsync.InputBatch
	buf := make([]byte, 0, 64)
	for n := 1; n <= netsync.MaxInputsPerBatch; n++ {
		for _, newest := range []gw.Tick{gw.Tick(n - 1), gw.Tick(n), 0, 1000, gw.Tick(rng.Int64N(math.MaxUint32)), math.MaxUint32} {
			for range 20 {
				b := randomBatch(rng, n, newest)
				buf = netsync.AppendInputs(buf, &b)
				typ, err := netsync.PeekType(buf)
				require.NoError(t, err)
				require.Equal(t, netsync.MsgInputs, typ)
				require.NoError(t, netsync.DecodeInputs(buf, &got), "n=%d newest=%d", n, newest)
				assert.Equal(t, b.ClientTime, got.ClientTime)
				assert.Equal(t, b.AckTick, got.AckTick)
				requireSameCommands(t, b.Inputs, got.Inputs)
			}
		}
	}
}

func TestInputBatchEncodesOnlyWhatChanged(t *testing.T) {
	same := make([]components.InputCommand, 32)
	for i := range same {
		same[i] = components.InputCommand{Tick: gw.Tick(100 + i), Buttons: 5, MoveX: 1, Aim: 1}
		netsync.QuantizeInput(&same[i])
	}
	one := netsync.AppendInputs(nil, &netsync.InputBatch{Inputs: same[:1]})
	all := netsync.AppendInputs(nil, &netsync.InputBatch{Inputs: same})
	// Each repeated command costs 5 "unchanged" bits.
	assert.LessOrEqual(t, len(all)-len(one), (31*5+7)/8+1)
}

func TestAppendInputsPanicsOnBatchesTheClientNeverBuilds(t *testing.T) {
	assert.Panics(t, func() { netsync.AppendInputs(nil, &netsync.InputBatch{}) })
	assert.Panics(t, func() {
		netsync.AppendInputs(nil, &netsync.InputBatch{Inputs: make([]components.InputCommand, netsync.MaxInputsPerBatch+1)})
	})
	assert.Panics(t, func() {
		netsync.AppendInputs(nil, &netsync.InputBatch{Inputs: []components.InputCommand{{Tick: 5}, {Tick: 7}}})
	})
	assert.Panics(t, func() {
		netsync.AppendInputs(nil, &netsync.InputBatch{Inputs: []components.InputCommand{{Tick: 5}, {Tick: 5}}})
	})
}

func TestDecodeInputsReusesCapacityAndNeverGrowsBeyondABatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	b := randomBatch(rng, netsync.MaxInputsPerBatch, 5000)
	p := netsync.AppendInputs(nil, &b)

	var got netsync.InputBatch
	require.NoError(t, netsync.DecodeInputs(p, &got))
	assert.Equal(t, netsync.MaxInputsPerBatch, cap(got.Inputs), "a nil slice grows to one batch")
	first := got.Inputs
	require.NoError(t, netsync.DecodeInputs(p, &got))
	assert.True(t, sharesArray(first, got.Inputs), "the second decode reuses the first's array")

	small := netsync.InputBatch{Inputs: make([]components.InputCommand, 0, 3)}
	require.NoError(t, netsync.DecodeInputs(p, &small))
	assert.Equal(t, netsync.MaxInputsPerBatch, cap(small.Inputs))

	big := netsync.InputBatch{Inputs: make([]components.InputCommand, 0, 100)}
	bigData := big.Inputs
	require.NoError(t, netsync.DecodeInputs(p, &big))
	assert.True(t, sharesArray(bigData, big.Inputs), "a larger array is reused, not replaced")
	assert.Len(t, big.Inputs, netsync.MaxInputsPerBatch)

	allocs := testing.AllocsPerRun(100, func() {
		if err := netsync.DecodeInputs(p, &got); err != nil {
			panic(err)
		}
	})
	assert.Zero(t, allocs)
	buf := make([]byte, 0, 512)
	allocs = testing.AllocsPerRun(100, func() { buf = netsync.AppendInputs(buf, &b) })
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

// command writes one command: optional buttons, move codes, aim code,
// view (delta, fraction code, delay code) and origin.
func (p *inputPacket) command(buttons *uint64, move *[2]uint64, aim *uint64, view *[3]int64, origin *[3]float32) *inputPacket {
	w := &p.w
	w.WriteBool(buttons != nil)
	if buttons != nil {
		w.WriteUvarint(*buttons)
	}
	w.WriteBool(move != nil)
	if move != nil {
		w.WriteBits(move[0], 8)
		w.WriteBits(move[1], 8)
	}
	w.WriteBool(aim != nil)
	if aim != nil {
		w.WriteBits(*aim, 16)
	}
	w.WriteBool(view != nil)
	if view != nil {
		w.WriteBool(false) // not the previous command's view distance
		w.WriteVarint(view[0])
		w.WriteBits(uint64(view[1]), 8)
		w.WriteBool(false) // not the previous command's delay
		w.WriteBits(uint64(view[2]), 11)
	}
	w.WriteBool(origin != nil)
	if origin != nil {
		w.WriteFloat32(origin[0])
		w.WriteFloat32(origin[1])
		w.WriteFloat32(origin[2])
	}
	return p
}

func (p *inputPacket) bytes() []byte { return p.w.Bytes() }

func TestDecodeInputsRefusesOutOfRangeValues(t *testing.T) {
	u := func(v uint64) *uint64 { return &v }
	nan := float32(math.NaN())
	inf := float32(math.Inf(-1))
	valid := newInputPacket(100, 1).command(u(3), &[2]uint64{127 + 127, 0}, u(65535), &[3]int64{4, 255, 2047}, &[3]float32{1, 2, 3}).bytes()
	var b netsync.InputBatch
	require.NoError(t, netsync.DecodeInputs(valid, &b), "the hand-built packet is valid")
	assert.Equal(t, components.InputCommand{Tick: 100, Buttons: 3, MoveX: 1, MoveY: -1, Aim: b.Inputs[0].Aim,
		ViewTick: 96, ViewFraction: 255.0 / 256, InterpolationDelay: 2047.0 / 16, OriginX: 1, OriginY: 2, OriginZ: 3}, b.Inputs[0])

	// Ticks wrap: a batch and a view may start before tick 0, and a view
	// may be up to 2^20-1 ticks back.
	wrapped := newInputPacket(2, 4).command(nil, nil, nil, &[3]int64{5, 0, 0}, nil).command(nil, nil, nil, nil, nil).command(nil, nil, nil, nil, nil).
		command(nil, nil, nil, &[3]int64{1<<20 - 1, 0, 0}, nil).bytes()
	require.NoError(t, netsync.DecodeInputs(wrapped, &b), "4 inputs ending at tick 2")
	require.Len(t, b.Inputs, 4)
	for i, want := range []gw.Tick{math.MaxUint32, 0, 1, 2} {
		assert.Equal(t, want, b.Inputs[i].Tick)
	}
	assert.Equal(t, gw.Tick(math.MaxUint32-5), b.Inputs[0].ViewTick)
	assert.Equal(t, gw.Tick(2).Add(-(1<<20 - 1)), b.Inputs[3].ViewTick)

	tests := map[string]struct {
		p    []byte
		want error
		text string
	}{
		"move x code 255":         {newInputPacket(100, 1).command(nil, &[2]uint64{255, 127}, nil, nil, nil).bytes(), netsync.ErrOutOfRange, "255"},
		"move y code 255":         {newInputPacket(100, 1).command(nil, &[2]uint64{127, 255}, nil, nil, nil).bytes(), netsync.ErrOutOfRange, "255"},
		"buttons beyond 32 bits":  {newInputPacket(100, 1).command(u(1<<32), nil, nil, nil, nil).bytes(), netsync.ErrOutOfRange, "4294967296"},
		"view tick after input":   {newInputPacket(100, 1).command(nil, nil, nil, &[3]int64{-1, 0, 0}, nil).bytes(), netsync.ErrOutOfRange, "-1 ticks before"},
		"view after the input":    {newInputPacket(100, 1).command(nil, nil, nil, &[3]int64{-1, 0, 0}, nil).bytes(), netsync.ErrOutOfRange, "view tick"},
		"view 2^20 ticks back":    {newInputPacket(1<<21, 1).command(nil, nil, nil, &[3]int64{1 << 20, 0, 0}, nil).bytes(), netsync.ErrOutOfRange, "1048576 ticks before"},
		"view delta max int64":    {newInputPacket(100, 1).command(nil, nil, nil, &[3]int64{math.MaxInt64, 0, 0}, nil).bytes(), netsync.ErrOutOfRange, "view tick"},
		"view delta min int64":    {newInputPacket(100, 1).command(nil, nil, nil, &[3]int64{math.MinInt64, 0, 0}, nil).bytes(), netsync.ErrOutOfRange, "view tick"},
		"NaN origin":              {newInputPacket(100, 1).command(nil, nil, nil, nil, &[3]float32{0, nan, 0}).bytes(), netsync.ErrOutOfRange, "NaN"},
		"infinite origin":         {newInputPacket(100, 1).command(nil, nil, nil, nil, &[3]float32{0, 0, inf}).bytes(), netsync.ErrOutOfRange, "-Inf"},
		"second command bad move": {newInputPacket(100, 2).command(nil, nil, nil, nil, nil).command(nil, &[2]uint64{0, 255}, nil, nil, nil).bytes(), netsync.ErrOutOfRange, "255"},
		"count beyond data":       {newInputPacket(100, 32).command(nil, nil, nil, nil, nil).bytes(), netsync.ErrShortBuffer, ""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			b := netsync.InputBatch{Inputs: make([]components.InputCommand, 0, netsync.MaxInputsPerBatch)}
			err := netsync.DecodeInputs(tt.p, &b)
			require.Error(t, err)
			assert.True(t, errors.Is(err, tt.want), "%v is not %v", err, tt.want)
			assert.Contains(t, err.Error(), tt.text)
			assert.Empty(t, b.Inputs, "a refused batch holds no command")
		})
	}
}

func TestDecodeInputsKeepsLongMoveVectorsForTheBuffer(t *testing.T) {
	// (1, 1) is longer than 1; the decoder passes it on and the input
	// buffer clamps and counts it.
	p := newInputPacket(10, 1).command(nil, &[2]uint64{254, 254}, nil, nil, nil).bytes()
	var b netsync.InputBatch
	require.NoError(t, netsync.DecodeInputs(p, &b))
	assert.Equal(t, float32(1), b.Inputs[0].MoveX)
	assert.Equal(t, float32(1), b.Inputs[0].MoveY)
}

func TestInputViewRepeatsCostOneBit(t *testing.T) {
	batch := netsync.InputBatch{}
	for tick := gw.Tick(200); tick < 208; tick++ {
		c := components.InputCommand{Tick: tick, ViewTick: tick - 9, ViewFraction: float32(tick%4) / 4, InterpolationDelay: 5.5}
		if tick == 204 {
			c.ViewTick, c.InterpolationDelay = tick-11, 6 // the delay changed: sent in full once
		}
		netsync.QuantizeInput(&c)
		batch.Inputs = append(batch.Inputs, c)
	}
	p := netsync.AppendInputs(nil, &batch)
	var got netsync.InputBatch
	require.NoError(t, netsync.DecodeInputs(p, &got))
	assert.Equal(t, batch.Inputs, got.Inputs)
	// 8 inputs: two full view encodings, six at 1+1+1+8+1 bits.
	assert.Less(t, len(p), 2+4+4+4+1+2*7+8*3, "repeated view distances and delays must be cheap")

	// A first command cannot repeat a view it does not have.
	w := newInputPacket(100, 1)
	w.w.WriteBool(false)
	w.w.WriteBool(false)
	w.w.WriteBool(false)
	w.w.WriteBool(true) // view present
	w.w.WriteBool(true) // "same as previous": there is none
	w.w.WriteBits(0, 8)
	w.w.WriteBool(false)
	w.w.WriteBits(0, 11)
	w.w.WriteBool(false)
	err := netsync.DecodeInputs(w.bytes(), &got)
	assert.ErrorIs(t, err, netsync.ErrMalformed)
}
