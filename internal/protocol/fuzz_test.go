package protocol_test

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/bitstream"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/internal/wiretest"
)

// requireDecodeError checks that a decoder's error says which kind of
// problem it met.
func requireDecodeError(t *testing.T, err error) {
	t.Helper()
	for _, kind := range []error{bitstream.ErrShortBuffer, bitstream.ErrMalformed, bitstream.ErrOutOfRange} {
		if errors.Is(err, kind) {
			return
		}
	}
	require.Fail(t, "decode error of no known kind", "error %q wraps none of ErrShortBuffer, ErrMalformed, ErrOutOfRange", err)

}

func FuzzDecodeInputs(f *testing.F) {
	headerOnly := wiretest.NewHeaderOnlySchema(f)
	rng := rand.New(rand.NewPCG(71, 72))
	for _, s := range []*codec.Schema{msgInputSchema, headerOnly} {
		for _, n := range []int{1, 2, 3, 5, 8, 16, 31, 32} {
			for _, newest := range []gw.Tick{gw.Tick(n - 1), 0, 1000, math.MaxUint32} {
				b := randomBatch(rng, s, n, newest)
				f.Add(protocol.AppendInputs(nil, s, &b))
			}
		}
	}
	f.Add(newInputPacket(100, 1).input(&[3]int64{4, 255, 2047}, &[4]uint64{128, 0, 1, 6}).bytes())
	f.Add(newInputPacket(100, 1).input(nil, &[4]uint64{129, 64, 0, 3}).bytes())
	f.Add(newInputPacket(100, 1).input(nil, &[4]uint64{64, 64, 0, 7}).bytes())
	f.Add(newInputPacket(3, 4).input(nil, zero).input(nil, nil).input(&[3]int64{1<<20 - 1, 0, 0}, nil).input(nil, zero).bytes())
	f.Add(newInputPacket(100, 1).input(nil, nil).bytes())
	f.Add(newInputPacket(100, 1).input(&[3]int64{-1, 0, 0}, zero).bytes())
	f.Add(newInputPacket(7, 2).view(nil).view(&[3]int64{3, 1, 2}).bytes())
	f.Add([]byte{protocol.ProtocolVersion, byte(protocol.MsgInputs)})

	f.Fuzz(func(t *testing.T, p []byte) {
		for _, s := range []*codec.Schema{msgInputSchema, headerOnly} {
			size := s.InputSize()
			var b protocol.InputBatch
			err := protocol.DecodeInputs(p, s, &b)
			require.LessOrEqual(t, cap(b.Heads), codec.MaxInputsPerBatch, "a packet cannot make the batch grow")
			require.LessOrEqual(t, cap(b.Data), codec.MaxInputsPerBatch*size)
			if err != nil {
				requireDecodeError(t, err)
				require.Empty(t, b.Heads)
				require.Empty(t, b.Data)
				continue
			}
			n := len(b.Heads)
			require.True(t, n >= 1 && n <= codec.MaxInputsPerBatch)
			require.Len(t, b.Data, n*size)
			for i, h := range b.Heads {
				require.Equal(t, b.Heads[n-1].Tick.Add(-(n - 1 - i)), h.Tick, "consecutive ticks")
				if h.HasView {
					d := h.Tick.Sub(h.ViewTick)
					require.True(t, d > -1<<20 && d < 1<<20, "view tick %d is %d ticks before tick %d", h.ViewTick, d, h.Tick)
				} else {
					require.Equal(t, components.InputHeader{Tick: h.Tick}, h)
				}
				require.True(t, h.ViewFraction >= 0 && h.ViewFraction < 1)
				require.True(t, h.InterpolationDelay >= 0 && h.InterpolationDelay <= codec.MaxInterpolationDelay)
				if size > 0 {
					in := wiretest.InputOf(t, b.Data[i*size:(i+1)*size])
					require.Equal(t, in, wiretest.Quantized(s, in), "a decoded input is on the wire's grid")
				}
			}

			// Re-encoding the decoded batch gives a packet that decodes to
			// the same batch, and is no longer than the original (the
			// encoding the writer picks is the shortest).
			q := protocol.AppendInputs(nil, s, &b)
			require.LessOrEqual(t, len(q), len(p))
			b2 := protocol.InputBatch{Heads: make([]components.InputHeader, 0, codec.MaxInputsPerBatch)}
			require.NoError(t, protocol.DecodeInputs(q, s, &b2))
			require.Equal(t, b.ClientTime, b2.ClientTime)
			require.Equal(t, b.AckTick, b2.AckTick)
			require.Equal(t, b.Heads, b2.Heads)
			require.Equal(t, b.Data, b2.Data)
			require.Equal(t, q, protocol.AppendInputs(nil, s, &b2), "the writer's encoding is a fixed point")
		}
	})
}

// snapshotFuzzSeeds returns valid and nearly valid snapshots of the test
// schema.
func snapshotFuzzSeeds(t testing.TB, ts *wiretest.Schema) [][]byte {
	rng := rand.New(rand.NewPCG(73, 74))
	w, err := protocol.NewSnapshotWriter(ts.Schema, 0)
	require.NoError(t, err)
	var seeds [][]byte
	for _, n := range []int{0, 1, 2, 5, 20, 60} {
		for _, h := range []protocol.SnapshotHeader{
			{Tick: 5000, Confirmed: 4990, HasConfirmed: true, Lead: 1.5, EchoTime: 77, Hold: 3},
			{Tick: 1, Lead: -2},
			{Tick: math.MaxUint32, Confirmed: 1, HasConfirmed: true, Lead: 4096, EchoTime: math.MaxUint32, Hold: math.MaxUint16},
		} {
			ghosts := randomGhosts(t, ts, rng, n, h.Tick, 1)
			w.Begin(h.Tick)
			for i := range min(n, 3) {
				w.Despawn(components.GhostID(1000 + 7*i))
			}
			for i := range ghosts {
				w.AddGhost(ghosts[i].Ghost, i%2 == 0, ghosts[i].Values(ts))
			}
			seeds = append(seeds, append([]byte(nil), w.Finish(&h)...))
			// The same ghosts as deltas: against the default baseline, an
			// older one, and unchanged; every other one relative to the
			// values of another ghost of its type.
			w.Begin(h.Tick)
			w.DefaultBase(h.Tick.Add(-2))
			for i := range ghosts {
				eg := encodeGhost(ts, &ghosts[i])
				eg.HasBase, eg.Base, eg.Changed = true, h.Tick.Add(-2-i%3), uint32(rng.IntN(16))
				if j := (i + 2) % len(ghosts); i%2 == 0 && ghosts[j].Type == ghosts[i].Type {
					eg.BaseSrc = encodeGhost(ts, &ghosts[j]).Src
				}
				w.AddEncoded(eg)
			}
			seeds = append(seeds, append([]byte(nil), w.Finish(&h)...))
		}
	}
	i64 := func(v int64) *int64 { return &v }
	rocket := &wiretest.Ghost{Ghost: components.Ghost{Type: uint16(ts.Rocket)}, Pos: wiretest.Pos{X: 1, Y: 2, Z: 3}}
	seeds = append(seeds,
		newRawSnapshot(rawHeader{tick: 100, confirmed: i64(3), lead: 256, count: 2}).
			ghost(ts, 5, uint64(ts.Rocket), 1, 10, rocket).anon(ts, -2, uint64(ts.Marker), nil).bytes(),
		newRawSnapshot(rawHeader{tick: 100, despawns: []uint64{3, 2}}).bytes(),
		newRawSnapshot(rawHeader{tick: 100, despawns: []uint64{1, 2, 3}}).bytes()[:20],
		newRawSnapshot(rawHeader{tick: 100, baseline: 4}).bytes(),
		newRawSnapshot(rawHeader{tick: 100, count: 2}).ghost(ts, 8, uint64(ts.Marker), 0, 0, nil).ghost(ts, 0, uint64(ts.Marker), 0, 0, nil).bytes(),
	)
	return seeds
}

// stateBytes returns the bytes of a ghost of type typ as a snapshot lays
// it out: each component 8-aligned.
func stateBytes(ts *wiretest.Schema, typ uint16) int {
	gt, _ := ts.GhostType(codec.GhostTypeID(typ))
	n := 0
	for _, c := range gt.Components {
		n += (ts.ComponentSize(c) + 7) &^ 7
	}
	return n
}

// ghostBytes returns the bytes of every component value of ghost gi.
func ghostBytes(ts *wiretest.Schema, s *protocol.Snapshot, gi int) [][]byte {
	gt, _ := ts.GhostType(codec.GhostTypeID(s.Ghosts[gi].Type))
	out := make([][]byte, len(gt.Components))
	for ci, c := range gt.Components {
		out[ci] = unsafe.Slice((*byte)(s.Value(gi, ci)), ts.ComponentType(c).Size())
	}
	return out
}

func FuzzDecodeSnapshot(f *testing.F) {
	ts := wiretest.NewSchema(f)
	for _, p := range snapshotFuzzSeeds(f, ts) {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		var s protocol.Snapshot
		err := protocol.DecodeSnapshot(p, ts.Schema, &s)
		if err != nil {
			requireDecodeError(t, err)
			return
		}
		require.LessOrEqual(t, len(s.Ghosts), protocol.MaxGhostsPerSnapshot)
		require.LessOrEqual(t, len(s.Ghosts)*2, len(p), "every ghost takes 17 bits at least")
		require.LessOrEqual(t, len(s.Despawned), protocol.MaxDespawnsPerSnapshot)
		require.LessOrEqual(t, len(s.Despawned)*4, len(p), "every despawn takes 4 bytes")
		for i, id := range s.Despawned {
			require.NotZero(t, id)
			require.True(t, i == 0 || id > s.Despawned[i-1], "despawns ascend")
		}
		seen := make(map[components.GhostID]bool, len(s.Ghosts))
		for _, g := range s.Ghosts {
			require.NotZero(t, g.ID)
			require.False(t, seen[g.ID], "ghost %d twice", g.ID)
			seen[g.ID] = true
			_, ok := ts.GhostType(codec.GhostTypeID(g.Type))
			require.True(t, ok)
			if !g.Identity {
				require.Zero(t, g.Owner)
				require.Zero(t, g.Spawned)
			}
		}

		// Resolve the records coded relative to a baseline against a state
		// of zeros, as a client would against its own: a value out of range
		// is an error, never a panic.
		relative := false
		for gi := range s.Ghosts {
			if g := &s.Ghosts[gi]; g.Relative {
				relative = true
				if err := s.Resolve(gi, make([]byte, stateBytes(ts, g.Type))); err != nil {
					requireDecodeError(t, err)
					return
				}
				require.False(t, g.Relative)
			}
		}

		// Re-encode what was decoded, as far as it fits in a datagram, and
		// decode it again: the same header and ghosts come back.
		w, err := protocol.NewSnapshotWriter(ts.Schema, 0)
		require.NoError(t, err)
		w.Begin(s.Tick)
		if s.HasDefaultBase {
			w.DefaultBase(s.DefaultBase)
		}
		for _, id := range s.Despawned {
			require.True(t, w.Despawn(id), "a decoded despawn fits again")
		}
		for gi := range s.Ghosts {
			gs := &s.Ghosts[gi]
			gt, _ := ts.GhostType(codec.GhostTypeID(gs.Type))
			var bw bitstream.Writer
			var st codec.Stream
			eg := &protocol.EncodedGhost{Ghost: gs.Ghost, Identity: gs.Identity, HasBase: gs.HasBase, Base: gs.Base, Changed: gs.Present}
			for ci, c := range gt.Components {
				start := bw.BitLen()
				protocol.EncodeComponent(ts.Schema, &st, &bw, c, s.Value(gi, ci))
				eg.Bits = append(eg.Bits, int32(start), int32(bw.BitLen()-start))
			}
			eg.Src = bw.Bytes()
			if !w.AddEncoded(eg) {
				break
			}
		}
		fits := w.Count() == len(s.Ghosts)
		h := s.SnapshotHeader
		q := w.Finish(&h)
		require.LessOrEqual(t, len(q), protocol.MaxDatagram)
		var s2 protocol.Snapshot
		require.NoError(t, protocol.DecodeSnapshot(q, ts.Schema, &s2))
		require.Equal(t, s.SnapshotHeader, s2.SnapshotHeader)
		require.Equal(t, s.Despawned, s2.Despawned)
		require.Len(t, s2.Ghosts, w.Count())
		for gi := range s2.Ghosts {
			require.Equal(t, s.Ghosts[gi].Ghost, s2.Ghosts[gi].Ghost)
			require.Equal(t, s.Ghosts[gi].Identity, s2.Ghosts[gi].Identity)
			require.Equal(t, s.Ghosts[gi].HasBase, s2.Ghosts[gi].HasBase)
			require.Equal(t, s.Ghosts[gi].Base, s2.Ghosts[gi].Base)
			require.Equal(t, s.Ghosts[gi].Present, s2.Ghosts[gi].Present)
			require.Equal(t, ghostBytes(ts, &s, gi), ghostBytes(ts, &s2, gi), "ghost %d", gi)
		}
		if fits && !relative { // relative values come back plain: longer
			require.LessOrEqual(t, len(q), len(p), "the writer's encoding is the shortest")
		}
	})
}

func FuzzDecodeHandshake(f *testing.F) {
	f.Add(protocol.AppendHello(nil, &protocol.Hello{SchemaHash: 42, TickRate: 60, ClientTime: 7}))
	f.Add(protocol.AppendHello(nil, &protocol.Hello{SchemaHash: 42, ComponentHashes: []uint64{1, 2, 3}, TickRate: 60, ClientTime: 7}))
	f.Add(protocol.AppendHello(nil, &protocol.Hello{SchemaHash: math.MaxUint64, ComponentHashes: make([]uint64, codec.MaxComponents), TickRate: math.MaxUint16, ClientTime: math.MaxUint32}))
	f.Add(rawHello(codec.MaxComponents+1, codec.MaxComponents+1))
	f.Add(rawHello(3, 2))
	f.Add(protocol.AppendWelcome(nil, &protocol.Welcome{Conn: 1, ServerTick: 5, TickRate: 60, EchoTime: 7, Hold: 2}))
	f.Add(protocol.AppendWelcome(nil, &protocol.Welcome{Conn: 0, TickRate: 60}))
	f.Add(protocol.AppendReject(nil, protocol.MsgReject, &protocol.Reject{Reason: protocol.RejectSchema, Detail: "component game.Position differs"}))
	f.Add(protocol.AppendReject(nil, protocol.MsgReject, &protocol.Reject{Reason: protocol.RejectSpawn, Detail: strings.Repeat("⌘", 70)}))
	f.Add(protocol.AppendReject(nil, protocol.MsgDisconnect, &protocol.Reject{Reason: protocol.RejectClosed}))
	f.Add(protocol.AppendReject(nil, protocol.MsgDisconnect, &protocol.Reject{Reason: 9}))
	f.Add(rawReject(1, protocol.MaxRejectDetail+1, bytes.Repeat([]byte("a"), protocol.MaxRejectDetail+1)))
	f.Add(rawReject(1, 10, []byte("abc")))
	f.Add(rawReject(1, 3, []byte{'a', 0xff, 'b'}))
	f.Add(rawReject(1, 3, []byte("a\nb")))
	f.Add([]byte{protocol.ProtocolVersion, byte(protocol.MsgSnapshot)})
	f.Add([]byte{})

	f.Fuzz(func(t *testing.T, p []byte) {
		typ, peekErr := protocol.PeekType(p)
		if peekErr != nil {
			requireDecodeError(t, peekErr)
		}
		decoded := 0
		check := func(want protocol.MsgType, err error, reencode func() []byte) {
			t.Helper()
			if err != nil {
				requireDecodeError(t, err)
				return
			}
			decoded++
			require.NoError(t, peekErr)
			require.Equal(t, want, typ)
			q := reencode()
			require.True(t, bytes.Equal(p, q), "re-encoded % x, was % x", q, p)
		}

		var h protocol.Hello
		check(protocol.MsgHello, protocol.DecodeHello(p, &h), func() []byte {
			require.LessOrEqual(t, len(h.ComponentHashes), codec.MaxComponents)
			require.LessOrEqual(t, cap(h.ComponentHashes), codec.MaxComponents, "a packet cannot make the hashes grow")
			q := protocol.AppendHello(nil, &h)
			var h2 protocol.Hello
			require.NoError(t, protocol.DecodeHello(q, &h2))
			require.Equal(t, h, h2)
			return q
		})
		var m protocol.Welcome
		check(protocol.MsgWelcome, protocol.DecodeWelcome(p, &m), func() []byte {
			require.NotZero(t, m.Conn)
			require.NotZero(t, m.TickRate)
			q := protocol.AppendWelcome(nil, &m)
			var m2 protocol.Welcome
			require.NoError(t, protocol.DecodeWelcome(q, &m2))
			require.Equal(t, m, m2)
			return q
		})
		for _, mt := range []protocol.MsgType{protocol.MsgReject, protocol.MsgDisconnect} {
			var r protocol.Reject
			check(mt, protocol.DecodeReject(p, mt, &r), func() []byte {
				require.True(t, r.Reason >= protocol.RejectSchema && r.Reason <= protocol.RejectMessages)
				require.LessOrEqual(t, len(r.Detail), protocol.MaxRejectDetail)
				require.True(t, utf8.ValidString(r.Detail))
				for _, c := range r.Detail {
					require.False(t, unicode.IsControl(c), "control character %U in the detail", c)
				}
				q := protocol.AppendReject(nil, mt, &r)
				var r2 protocol.Reject
				require.NoError(t, protocol.DecodeReject(q, mt, &r2))
				require.Equal(t, r, r2)
				return q
			})
		}
		require.LessOrEqual(t, decoded, 1, "a packet is one message")
	})
}
