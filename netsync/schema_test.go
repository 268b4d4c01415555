package netsync_test

import (
	"fmt"
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/netsync"
)

// The replicated components of the test schema. Their sizes differ (12, 8,
// 6 and 1 bytes) so that snapshot storage alignment is exercised.
type (
	tPos    struct{ X, Y, Z float32 }
	tVel    struct{ X, Y float32 }
	tHealth struct {
		HP    uint8
		Armor uint16 // 0..1000
		Alive bool
	}
	tTeam struct{ ID uint8 } // 0..2
)

// testSchema is the schema most tests of this package share: four
// components and four ghost types, one of them with no component at all.
type testSchema struct {
	*netsync.Schema
	PosQ, VelQ                     netsync.Quantizer
	Pos, Vel, Health, Team         netsync.ComponentID
	Player, Rocket, Pickup, Marker netsync.GhostTypeID
}

func newTestSchema(t testing.TB) *testSchema {
	t.Helper()
	ts := &testSchema{
		Schema: netsync.NewSchema(),
		PosQ:   mustQuantizer(t, -500, 500, 0.01),
		VelQ:   mustQuantizer(t, -50, 50, 0.01),
	}
	add := func(c netsync.Codec) netsync.ComponentID {
		id, err := ts.AddComponent(c)
		require.NoError(t, err)
		return id
	}
	ts.Pos = add(posCodec(ts.PosQ))
	ts.Vel = add(velCodec(ts.VelQ))
	ts.Health = add(healthCodec())
	ts.Team = add(teamCodec())
	typ := func(name string, comps ...netsync.ComponentID) netsync.GhostTypeID {
		id, err := ts.AddGhostType(name, comps...)
		require.NoError(t, err)
		return id
	}
	ts.Player = typ("player", ts.Pos, ts.Vel, ts.Health, ts.Team)
	ts.Rocket = typ("rocket", ts.Pos, ts.Vel)
	ts.Pickup = typ("pickup", ts.Team, ts.Pos) // not in registration order
	ts.Marker = typ("marker")
	return ts
}

func posCodec(q netsync.Quantizer) netsync.Codec {
	return netsync.NewCodec(
		func(w *netsync.BitWriter, v *tPos) {
			q.Write(w, v.X)
			q.Write(w, v.Y)
			q.Write(w, v.Z)
		},
		func(r *netsync.BitReader, v *tPos) error {
			x, _ := q.Read(r)
			y, _ := q.Read(r)
			z, err := q.Read(r) // reader errors are sticky
			if err != nil {
				return err
			}
			*v = tPos{x, y, z}
			return nil
		})
}

func velCodec(q netsync.Quantizer) netsync.Codec {
	return netsync.NewCodec(
		func(w *netsync.BitWriter, v *tVel) {
			q.Write(w, v.X)
			q.Write(w, v.Y)
		},
		func(r *netsync.BitReader, v *tVel) error {
			x, _ := q.Read(r)
			y, err := q.Read(r)
			if err != nil {
				return err
			}
			*v = tVel{x, y}
			return nil
		})
}

func healthCodec() netsync.Codec {
	return netsync.NewCodec(
		func(w *netsync.BitWriter, v *tHealth) {
			w.WriteBits(uint64(v.HP), 8)
			w.WriteBits(uint64(min(v.Armor, 1000)), 10)
			w.WriteBool(v.Alive)
		},
		func(r *netsync.BitReader, v *tHealth) error {
			hp, _ := r.ReadBits(8)
			armor, _ := r.ReadBits(10)
			alive, err := r.ReadBool()
			if err != nil {
				return err
			}
			if armor > 1000 {
				return fmt.Errorf("armor %d outside 0..1000: %w", armor, netsync.ErrOutOfRange)
			}
			*v = tHealth{HP: uint8(hp), Armor: uint16(armor), Alive: alive}
			return nil
		})
}

func teamCodec() netsync.Codec {
	return netsync.NewCodec(
		func(w *netsync.BitWriter, v *tTeam) { w.WriteBits(uint64(min(v.ID, 2)), 2) },
		func(r *netsync.BitReader, v *tTeam) error {
			id, err := r.ReadBits(2)
			if err != nil {
				return err
			}
			if id > 2 {
				return fmt.Errorf("team %d outside 0..2: %w", id, netsync.ErrOutOfRange)
			}
			v.ID = uint8(id)
			return nil
		})
}

// testGhost is a ghost's identity and the values of every test component;
// values returns pointers to the ones its type replicates, in order.
type testGhost struct {
	components.Ghost
	Pos    tPos
	Vel    tVel
	Health tHealth
	Team   tTeam
}

func (g *testGhost) values(ts *testSchema) []unsafe.Pointer {
	gt, ok := ts.GhostType(netsync.GhostTypeID(g.Type))
	if !ok {
		panic(fmt.Sprintf("ghost type %d not in the test schema", g.Type))
	}
	out := make([]unsafe.Pointer, len(gt.Components))
	for i, c := range gt.Components {
		switch c {
		case ts.Pos:
			out[i] = unsafe.Pointer(&g.Pos)
		case ts.Vel:
			out[i] = unsafe.Pointer(&g.Vel)
		case ts.Health:
			out[i] = unsafe.Pointer(&g.Health)
		case ts.Team:
			out[i] = unsafe.Pointer(&g.Team)
		}
	}
	return out
}

// quantize applies every replicated component's round trip in place, as
// the server does at the end of its tick.
func (g *testGhost) quantize(ts *testSchema, q *netsync.RoundTrip) {
	gt, _ := ts.GhostType(netsync.GhostTypeID(g.Type))
	for i, p := range g.values(ts) {
		q.Quantize(ts.Codec(gt.Components[i]), p)
	}
}

// requireGhostState checks that ghost gi of s has g's identity and the
// (already quantized) values of g, bit for bit.
func requireGhostState(t testing.TB, ts *testSchema, g *testGhost, s *netsync.Snapshot, gi int) {
	t.Helper()
	require.Equal(t, g.Ghost, s.Ghosts[gi].Ghost, "ghost %d identity", gi)
	gt, _ := ts.GhostType(netsync.GhostTypeID(g.Type))
	for ci, p := range g.values(ts) {
		size := ts.ComponentType(gt.Components[ci]).Size()
		want := unsafe.Slice((*byte)(p), size)
		got := unsafe.Slice((*byte)(s.Value(gi, ci)), size)
		require.Equal(t, want, got, "ghost %d (ID %d) component %d (%v)", gi, g.ID, ci, ts.ComponentType(gt.Components[ci]))
	}
}

func TestSchemaRegistersComponentsAndGhostTypes(t *testing.T) {
	ts := newTestSchema(t)
	assert.Equal(t, 4, ts.NumComponents())
	assert.Equal(t, 4, ts.NumGhostTypes())
	assert.Equal(t, []netsync.ComponentID{0, 1, 2, 3}, []netsync.ComponentID{ts.Pos, ts.Vel, ts.Health, ts.Team})
	assert.Equal(t, reflect.TypeFor[tHealth](), ts.ComponentType(ts.Health))
	assert.Equal(t, reflect.TypeFor[tVel](), ts.Codec(ts.Vel).Type())

	gt, ok := ts.GhostType(ts.Pickup)
	require.True(t, ok)
	assert.Equal(t, "pickup", gt.Name)
	assert.Equal(t, []netsync.ComponentID{ts.Team, ts.Pos}, gt.Components)
	gt, ok = ts.GhostType(ts.Marker)
	require.True(t, ok)
	assert.Empty(t, gt.Components)

	_, ok = ts.GhostType(4)
	assert.False(t, ok, "a ghost type beyond the schema is unknown")
	_, ok = ts.GhostType(65535)
	assert.False(t, ok)
	assert.Panics(t, func() { ts.Codec(4) })
	assert.Panics(t, func() { ts.ComponentType(99) })
}

func TestSchemaGhostTypeKeepsItsOwnCopyOfTheComponentList(t *testing.T) {
	s := netsync.NewSchema()
	a, err := s.AddComponent(teamCodec())
	require.NoError(t, err)
	b, err := s.AddComponent(healthCodec())
	require.NoError(t, err)
	comps := []netsync.ComponentID{a, b}
	id, err := s.AddGhostType("x", comps...)
	require.NoError(t, err)
	comps[0] = b // the caller reuses its slice
	gt, _ := s.GhostType(id)
	assert.Equal(t, []netsync.ComponentID{a, b}, gt.Components)
}

func TestSchemaErrors(t *testing.T) {
	s := netsync.NewSchema()
	_, err := s.AddGhostType("empty-schema", 0)
	require.Error(t, err, "no component registered yet")
	assert.Contains(t, err.Error(), "component ID 0")

	pos, err := s.AddComponent(posCodec(mustQuantizer(t, -1, 1, 0.5)))
	require.NoError(t, err)
	_, err = s.AddComponent(posCodec(mustQuantizer(t, -9, 9, 0.5)))
	require.Error(t, err, "a second codec for the same type")
	assert.Contains(t, err.Error(), "tPos")
	assert.Contains(t, err.Error(), "ID 0")
	assert.Equal(t, 1, s.NumComponents(), "the refused codec is not added")

	team, err := s.AddComponent(teamCodec())
	require.NoError(t, err)

	_, err = s.AddGhostType("a", pos, 7)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "component ID 7")
	assert.Contains(t, err.Error(), `"a"`)

	_, err = s.AddGhostType("b", team, pos, team)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "twice")
	assert.Contains(t, err.Error(), "tTeam")

	many := make([]netsync.ComponentID, netsync.MaxComponentsPerGhost+1)
	_, err = s.AddGhostType("c", many...)
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprint(netsync.MaxComponentsPerGhost+1))

	_, err = s.AddGhostType("d", pos)
	require.NoError(t, err)
	_, err = s.AddGhostType("d", team)
	require.Error(t, err, "a name already used")
	assert.Contains(t, err.Error(), `"d"`)
	assert.Equal(t, 1, s.NumGhostTypes(), "refused types are not added")
}

func TestSchemaHash(t *testing.T) {
	type build func(s *netsync.Schema) error
	comps := func(cs ...netsync.Codec) build {
		return func(s *netsync.Schema) error {
			for _, c := range cs {
				if _, err := s.AddComponent(c); err != nil {
					return err
				}
			}
			return nil
		}
	}
	typ := func(name string, ids ...netsync.ComponentID) build {
		return func(s *netsync.Schema) error {
			_, err := s.AddGhostType(name, ids...)
			return err
		}
	}
	q := mustQuantizer(t, -1, 1, 0.01)
	hash := func(steps ...build) uint64 {
		s := netsync.NewSchema()
		for _, step := range steps {
			require.NoError(t, step(s))
		}
		return s.Hash()
	}

	base := hash(comps(posCodec(q), velCodec(q), teamCodec()), typ("a", 0, 1), typ("b", 2))
	assert.Equal(t, base, hash(comps(posCodec(q), velCodec(q), teamCodec()), typ("a", 0, 1), typ("b", 2)),
		"schemas built by the same code hash the same")
	assert.Equal(t, newTestSchema(t).Hash(), newTestSchema(t).Hash())

	different := map[string]uint64{
		"empty":                   hash(),
		"component order":         hash(comps(velCodec(q), posCodec(q), teamCodec()), typ("a", 0, 1), typ("b", 2)),
		"extra component":         hash(comps(posCodec(q), velCodec(q), teamCodec(), healthCodec()), typ("a", 0, 1), typ("b", 2)),
		"ghost type order":        hash(comps(posCodec(q), velCodec(q), teamCodec()), typ("b", 2), typ("a", 0, 1)),
		"ghost type name":         hash(comps(posCodec(q), velCodec(q), teamCodec()), typ("A", 0, 1), typ("b", 2)),
		"components of a type":    hash(comps(posCodec(q), velCodec(q), teamCodec()), typ("a", 1, 0), typ("b", 2)),
		"component moved between": hash(comps(posCodec(q), velCodec(q), teamCodec()), typ("a", 0), typ("b", 1, 2)),
		"missing ghost type":      hash(comps(posCodec(q), velCodec(q), teamCodec()), typ("a", 0, 1)),
		"extra ghost type":        hash(comps(posCodec(q), velCodec(q), teamCodec()), typ("a", 0, 1), typ("b", 2), typ("c")),
	}
	seen := map[uint64]string{base: "base"}
	for name, h := range different {
		if other, dup := seen[h]; dup {
			t.Errorf("schemas %q and %q hash the same (%#x)", name, other, h)
		}
		seen[h] = name
	}
}

func TestSchemaHashSeesCodecPrecision(t *testing.T) {
	build := func(res float32) uint64 {
		q, err := netsync.NewQuantizer(-100, 100, res)
		require.NoError(t, err)
		s := netsync.NewSchema()
		id, err := s.AddComponent(netsync.NewCodec(
			func(w *netsync.BitWriter, v *hashPos) { q.Write(w, v.X) },
			func(r *netsync.BitReader, v *hashPos) (err error) { v.X, err = q.Read(r); return err }))
		require.NoError(t, err)
		_, err = s.AddGhostType("p", id)
		require.NoError(t, err)
		return s.Hash()
	}
	assert.Equal(t, build(1.0/64), build(1.0/64))
	assert.NotEqual(t, build(1.0/64), build(1.0/256), "a client with another precision must be refused")
}

type hashPos struct{ X float32 }
