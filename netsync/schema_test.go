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

// The test components' wire forms.
var (
	testPosQ = netsync.Range(-500, 500, 0.01)
	testVelQ = netsync.Range(-50, 50, 0.01)
)

func (v *tPos) Serialize(s *netsync.Stream) {
	s.Float(&v.X, testPosQ)
	s.Float(&v.Y, testPosQ)
	s.Float(&v.Z, testPosQ)
}

func (v *tVel) Serialize(s *netsync.Stream) { s.Float(&v.X, testVelQ); s.Float(&v.Y, testVelQ) }

func (v *tHealth) Serialize(s *netsync.Stream) {
	netsync.Int(s, &v.HP, 0, 255)
	netsync.Int(s, &v.Armor, 0, 1000)
	s.Bool(&v.Alive)
}

func (v *tTeam) Serialize(s *netsync.Stream) { netsync.Int(s, &v.ID, 0, 2) }

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
	ts := &testSchema{PosQ: testPosQ, VelQ: testVelQ}
	var b netsync.SchemaBuilder
	ts.Pos = netsync.Component[tPos](&b)
	ts.Vel = netsync.Component[tVel](&b)
	ts.Health = netsync.Component[tHealth](&b)
	ts.Team = netsync.Component[tTeam](&b)
	ts.Player = b.GhostType("player", ts.Pos, ts.Vel, ts.Health, ts.Team)
	ts.Rocket = b.GhostType("rocket", ts.Pos, ts.Vel)
	ts.Pickup = b.GhostType("pickup", ts.Team, ts.Pos) // not in declaration order
	ts.Marker = b.GhostType("marker")
	s, err := b.Build()
	require.NoError(t, err)
	ts.Schema = s
	return ts
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
func (g *testGhost) quantize(ts *testSchema, q *netsync.Coder) {
	gt, _ := ts.GhostType(netsync.GhostTypeID(g.Type))
	for i, p := range g.values(ts) {
		q.Quantize(ts.Schema, gt.Components[i], p)
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
	assert.Panics(t, func() { ts.ComponentType(99) })
}

func TestSchemaGhostTypeKeepsItsOwnCopyOfTheComponentList(t *testing.T) {
	var b netsync.SchemaBuilder
	x := netsync.Component[tTeam](&b)
	y := netsync.Component[tHealth](&b)
	comps := []netsync.ComponentID{x, y}
	id := b.GhostType("x", comps...)
	comps[0] = y // the caller reuses its slice
	s, err := b.Build()
	require.NoError(t, err)
	gt, _ := s.GhostType(id)
	assert.Equal(t, []netsync.ComponentID{x, y}, gt.Components)
}

// buildErr declares with f and returns Build's error.
func buildErr(f func(b *netsync.SchemaBuilder)) error {
	var b netsync.SchemaBuilder
	f(&b)
	_, err := b.Build()
	return err
}

func TestSchemaBuildReturnsTheFirstDeclarationError(t *testing.T) {
	tests := map[string]struct {
		declare func(b *netsync.SchemaBuilder)
		want    []string
	}{
		"unknown component in a ghost type": {func(b *netsync.SchemaBuilder) { b.GhostType("empty-schema", 0) }, []string{"component ID 0", `"empty-schema"`}},
		"a type declared twice": {func(b *netsync.SchemaBuilder) {
			netsync.Component[tPos](b)
			netsync.Component[tPos](b)
		}, []string{"tPos", "twice"}},
		"component listed twice": {func(b *netsync.SchemaBuilder) {
			team := netsync.Component[tTeam](b)
			pos := netsync.Component[tPos](b)
			b.GhostType("b", team, pos, team)
		}, []string{"twice", "tTeam"}},
		"too many components": {func(b *netsync.SchemaBuilder) {
			netsync.Component[tPos](b)
			b.GhostType("c", make([]netsync.ComponentID, netsync.MaxComponentsPerGhost+1)...)
		}, []string{fmt.Sprint(netsync.MaxComponentsPerGhost + 1)}},
		"a name already used": {func(b *netsync.SchemaBuilder) {
			pos := netsync.Component[tPos](b)
			b.GhostType("d", pos)
			b.GhostType("d", pos)
		}, []string{`"d"`, "already"}},
		"unconfigured quantizer":                {func(b *netsync.SchemaBuilder) { netsync.Component[zeroQuantized](b) }, []string{"zeroQuantized", "field 1", "unconfigured"}},
		"invalid quantizer":                     {func(b *netsync.SchemaBuilder) { netsync.Component[badRange](b) }, []string{"badRange", "field 0", "min 5 must be less than max 1"}},
		"invalid angle":                         {func(b *netsync.SchemaBuilder) { netsync.Component[badAngle](b) }, []string{"badAngle", "bits 40"}},
		"empty integer range":                   {func(b *netsync.SchemaBuilder) { netsync.Component[badInt](b) }, []string{"badInt", "5..1"}},
		"interpolation of an unknown component": {func(b *netsync.SchemaBuilder) { b.Interpolate(3, netsync.Interpolation{}) }, []string{"component ID 3"}},
		"negative teleport": {func(b *netsync.SchemaBuilder) {
			b.Interpolate(netsync.Component[tPos](b), netsync.Interpolation{Teleport: -1})
		}, []string{"tPos", "-1"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			err := buildErr(tt.declare)
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
	var b netsync.SchemaBuilder
	netsync.Component[tPos](&b)
	_, err := b.Build()
	require.NoError(t, err)
	_, err = b.Build()
	require.Error(t, err, "a builder builds once: the schema cannot change after")
}

type (
	zeroQuantized struct{ A, B float32 }
	badRange      struct{ A float32 }
	badAngle      struct{ A float32 }
	badInt        struct{ A int16 }
)

func (v *zeroQuantized) Serialize(s *netsync.Stream) {
	s.Float(&v.A, testPosQ)
	s.Float(&v.B, netsync.Quantizer{})
}
func (v *badRange) Serialize(s *netsync.Stream) { s.Float(&v.A, netsync.Range(5, 1, 0.1)) }
func (v *badAngle) Serialize(s *netsync.Stream) { s.Angle(&v.A, netsync.Angle(40)) }
func (v *badInt) Serialize(s *netsync.Stream)   { netsync.Int(s, &v.A, 5, 1) }

func TestSchemaHash(t *testing.T) {
	type step func(b *netsync.SchemaBuilder)
	all := func(b *netsync.SchemaBuilder) {
		netsync.Component[tPos](b)
		netsync.Component[tVel](b)
		netsync.Component[tTeam](b)
	}
	typ := func(name string, ids ...netsync.ComponentID) step {
		return func(b *netsync.SchemaBuilder) { b.GhostType(name, ids...) }
	}
	hash := func(steps ...step) uint64 {
		var b netsync.SchemaBuilder
		for _, s := range steps {
			s(&b)
		}
		s, err := b.Build()
		require.NoError(t, err)
		return s.Hash()
	}

	base := hash(all, typ("a", 0, 1), typ("b", 2))
	assert.Equal(t, base, hash(all, typ("a", 0, 1), typ("b", 2)), "schemas built by the same code hash the same")
	assert.Equal(t, newTestSchema(t).Hash(), newTestSchema(t).Hash())

	different := map[string]uint64{
		"empty": hash(),
		"component order": hash(func(b *netsync.SchemaBuilder) {
			netsync.Component[tVel](b)
			netsync.Component[tPos](b)
			netsync.Component[tTeam](b)
		}, typ("a", 0, 1), typ("b", 2)),
		"extra component":         hash(all, func(b *netsync.SchemaBuilder) { netsync.Component[tHealth](b) }, typ("a", 0, 1), typ("b", 2)),
		"ghost type order":        hash(all, typ("b", 2), typ("a", 0, 1)),
		"ghost type name":         hash(all, typ("A", 0, 1), typ("b", 2)),
		"components of a type":    hash(all, typ("a", 1, 0), typ("b", 2)),
		"component moved between": hash(all, typ("a", 0), typ("b", 1, 2)),
		"missing ghost type":      hash(all, typ("a", 0, 1)),
		"extra ghost type":        hash(all, typ("a", 0, 1), typ("b", 2), typ("c")),
	}
	seen := map[uint64]string{base: "base"}
	for name, h := range different {
		other, dup := seen[h]
		assert.False(t, dup, "schemas %q and %q hash the same (%#x)", name, other, h)

		seen[h] = name
	}
}

// hashQ is what hashPos codes its field with; tests change it between
// builds, as two builds of a game with other ranges would.
var hashQ netsync.Quantizer

type hashPos struct {
	X float32
	N int16
}

var hashLo, hashHi int16 = -10, 10

func (p *hashPos) Serialize(s *netsync.Stream) {
	s.Float(&p.X, hashQ)
	netsync.Int(s, &p.N, hashLo, hashHi)
}

func TestSchemaHashCoversEveryParameterThatChangesTheBits(t *testing.T) {
	build := func(q netsync.Quantizer, lo, hi int16) (uint64, uint64) {
		hashQ, hashLo, hashHi = q, lo, hi
		var b netsync.SchemaBuilder
		id := netsync.Component[hashPos](&b)
		b.GhostType("p", id)
		s, err := b.Build()
		require.NoError(t, err)
		return s.Hash(), s.ComponentHash(id)
	}
	base, baseComp := build(netsync.Range(-100, 100, 1.0/64), -10, 10)
	same, _ := build(netsync.Range(-100, 100, 1.0/64), -10, 10)
	assert.Equal(t, base, same)
	for name, h := range map[string][2]uint64{
		"precision":     pair(build(netsync.Range(-100, 100, 1.0/256), -10, 10)),
		"range min":     pair(build(netsync.Range(-99, 100, 1.0/64), -10, 10)),
		"range max":     pair(build(netsync.Range(-100, 99, 1.0/64), -10, 10)),
		"integer range": pair(build(netsync.Range(-100, 100, 1.0/64), -10, 11)),
	} {
		assert.NotEqual(t, base, h[0], "a client with another %s must be refused", name)
		assert.NotEqual(t, baseComp, h[1], "the component hash sees the %s", name)
	}
}

func pair(a, b uint64) [2]uint64 { return [2]uint64{a, b} }

func TestSchemaMismatchNamesTheComponent(t *testing.T) {
	ts := newTestSchema(t)
	hashes := make([]uint64, ts.NumComponents())
	for i := range hashes {
		hashes[i] = ts.ComponentHash(netsync.ComponentID(i))
	}
	assert.Empty(t, ts.Mismatch(hashes))
	assert.Equal(t, "5 components received, 4 declared", ts.Mismatch(append(hashes, 1)))
	hashes[ts.Health]++
	assert.Equal(t, "component netsync_test.tHealth differs", ts.Mismatch(hashes))
	assert.Equal(t, "component netsync_test.tHealth differs", ts.Mismatch(append(hashes, 1)), "a differing component is named before the count")
	assert.Equal(t, "2 components received, 4 declared", ts.Mismatch(hashes[:2]))
}
