package codec_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/wiretest"
)

func TestSchemaRegistersComponentsAndGhostTypes(t *testing.T) {
	ts := wiretest.NewSchema(t)
	assert.Equal(t, 4, ts.NumComponents())
	assert.Equal(t, 4, ts.NumGhostTypes())
	assert.Equal(t, []codec.ComponentID{0, 1, 2, 3}, []codec.ComponentID{ts.Pos, ts.Vel, ts.Health, ts.Team})
	assert.Equal(t, reflect.TypeFor[wiretest.Health](), ts.ComponentType(ts.Health))

	gt, ok := ts.GhostType(ts.Pickup)
	require.True(t, ok)
	assert.Equal(t, "pickup", gt.Name)
	assert.Equal(t, []codec.ComponentID{ts.Team, ts.Pos}, gt.Components)
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
	var b codec.SchemaBuilder
	x := wiretest.Component[wiretest.Team](&b)
	y := wiretest.Component[wiretest.Health](&b)
	comps := []codec.ComponentID{x, y}
	id := b.GhostType("x", comps...)
	comps[0] = y // the caller reuses its slice
	s, err := b.Build()
	require.NoError(t, err)
	gt, _ := s.GhostType(id)
	assert.Equal(t, []codec.ComponentID{x, y}, gt.Components)
}

// buildErr declares with f and returns Build's error.
func buildErr(f func(b *codec.SchemaBuilder)) error {
	var b codec.SchemaBuilder
	f(&b)
	_, err := b.Build()
	return err
}

func TestSchemaBuildReturnsTheFirstDeclarationError(t *testing.T) {
	tests := map[string]struct {
		declare func(b *codec.SchemaBuilder)
		want    []string
	}{
		"unknown component in a ghost type": {func(b *codec.SchemaBuilder) { b.GhostType("empty-schema", 0) }, []string{"component ID 0", `"empty-schema"`}},
		"a type declared twice": {func(b *codec.SchemaBuilder) {
			wiretest.Component[wiretest.Pos](b)
			wiretest.Component[wiretest.Pos](b)
		}, []string{"wiretest.Pos", "twice"}},
		"component listed twice": {func(b *codec.SchemaBuilder) {
			team := wiretest.Component[wiretest.Team](b)
			pos := wiretest.Component[wiretest.Pos](b)
			b.GhostType("b", team, pos, team)
		}, []string{"twice", "wiretest.Team"}},
		"too many components": {func(b *codec.SchemaBuilder) {
			wiretest.Component[wiretest.Pos](b)
			b.GhostType("c", make([]codec.ComponentID, codec.MaxComponentsPerGhost+1)...)
		}, []string{fmt.Sprint(codec.MaxComponentsPerGhost + 1)}},
		"a name already used": {func(b *codec.SchemaBuilder) {
			pos := wiretest.Component[wiretest.Pos](b)
			b.GhostType("d", pos)
			b.GhostType("d", pos)
		}, []string{`"d"`, "already"}},
		"unconfigured quantizer":                {func(b *codec.SchemaBuilder) { wiretest.Component[zeroQuantized](b) }, []string{"zeroQuantized", "field 1", "unconfigured"}},
		"invalid quantizer":                     {func(b *codec.SchemaBuilder) { wiretest.Component[badRange](b) }, []string{"badRange", "field 0", "min 5 must be less than max 1"}},
		"invalid angle":                         {func(b *codec.SchemaBuilder) { wiretest.Component[badAngle](b) }, []string{"badAngle", "bits 40"}},
		"empty integer range":                   {func(b *codec.SchemaBuilder) { wiretest.Component[badInt](b) }, []string{"badInt", "5..1"}},
		"interpolation of an unknown component": {func(b *codec.SchemaBuilder) { b.Interpolate(3, codec.Interpolation{}) }, []string{"component ID 3"}},
		"negative teleport": {func(b *codec.SchemaBuilder) {
			b.Interpolate(wiretest.Component[wiretest.Pos](b), codec.Interpolation{Teleport: -1})
		}, []string{"wiretest.Pos", "-1"}},
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
	var b codec.SchemaBuilder
	wiretest.Component[wiretest.Pos](&b)
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

func (v *zeroQuantized) Serialize(s *codec.Stream) {
	s.Float(&v.A, wiretest.PosQ)
	s.Float(&v.B, codec.Quantizer{})
}
func (v *badRange) Serialize(s *codec.Stream) { s.Float(&v.A, codec.Range(5, 1, 0.1)) }
func (v *badAngle) Serialize(s *codec.Stream) { s.Angle(&v.A, codec.Angle(40)) }
func (v *badInt) Serialize(s *codec.Stream)   { codec.Int(s, &v.A, 5, 1) }

func TestSchemaHash(t *testing.T) {
	type step func(b *codec.SchemaBuilder)
	all := func(b *codec.SchemaBuilder) {
		wiretest.Component[wiretest.Pos](b)
		wiretest.Component[wiretest.Vel](b)
		wiretest.Component[wiretest.Team](b)
	}
	typ := func(name string, ids ...codec.ComponentID) step {
		return func(b *codec.SchemaBuilder) { b.GhostType(name, ids...) }
	}
	hash := func(steps ...step) uint64 {
		var b codec.SchemaBuilder
		for _, s := range steps {
			s(&b)
		}
		s, err := b.Build()
		require.NoError(t, err)
		return s.Hash()
	}

	base := hash(all, typ("a", 0, 1), typ("b", 2))
	assert.Equal(t, base, hash(all, typ("a", 0, 1), typ("b", 2)), "schemas built by the same code hash the same")
	assert.Equal(t, wiretest.NewSchema(t).Hash(), wiretest.NewSchema(t).Hash())

	different := map[string]uint64{
		"empty": hash(),
		"component order": hash(func(b *codec.SchemaBuilder) {
			wiretest.Component[wiretest.Vel](b)
			wiretest.Component[wiretest.Pos](b)
			wiretest.Component[wiretest.Team](b)
		}, typ("a", 0, 1), typ("b", 2)),
		"extra component":         hash(all, func(b *codec.SchemaBuilder) { wiretest.Component[wiretest.Health](b) }, typ("a", 0, 1), typ("b", 2)),
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
var hashQ codec.Quantizer

type hashPos struct {
	X float32
	N int16
}

var hashLo, hashHi int16 = -10, 10

func (p *hashPos) Serialize(s *codec.Stream) {
	s.Float(&p.X, hashQ)
	codec.Int(s, &p.N, hashLo, hashHi)
}

func TestSchemaHashCoversEveryParameterThatChangesTheBits(t *testing.T) {
	build := func(q codec.Quantizer, lo, hi int16) (uint64, uint64) {
		hashQ, hashLo, hashHi = q, lo, hi
		var b codec.SchemaBuilder
		id := wiretest.Component[hashPos](&b)
		b.GhostType("p", id)
		s, err := b.Build()
		require.NoError(t, err)
		return s.Hash(), s.ComponentHash(id)
	}
	base, baseComp := build(codec.Range(-100, 100, 1.0/64), -10, 10)
	same, _ := build(codec.Range(-100, 100, 1.0/64), -10, 10)
	assert.Equal(t, base, same)
	for name, h := range map[string][2]uint64{
		"precision":     pair(build(codec.Range(-100, 100, 1.0/256), -10, 10)),
		"range min":     pair(build(codec.Range(-99, 100, 1.0/64), -10, 10)),
		"range max":     pair(build(codec.Range(-100, 99, 1.0/64), -10, 10)),
		"integer range": pair(build(codec.Range(-100, 100, 1.0/64), -10, 11)),
	} {
		assert.NotEqual(t, base, h[0], "a client with another %s must be refused", name)
		assert.NotEqual(t, baseComp, h[1], "the component hash sees the %s", name)
	}
}

func pair(a, b uint64) [2]uint64 { return [2]uint64{a, b} }

func TestSchemaMismatchNamesTheComponent(t *testing.T) {
	ts := wiretest.NewSchema(t)
	hashes := make([]uint64, ts.NumComponents())
	for i := range hashes {
		hashes[i] = ts.ComponentHash(codec.ComponentID(i))
	}
	assert.Empty(t, ts.Mismatch(hashes))
	assert.Equal(t, "5 components received, 4 declared", ts.Mismatch(append(hashes, 1)))
	hashes[ts.Health]++
	assert.Equal(t, "component wiretest.Health differs", ts.Mismatch(hashes))
	assert.Equal(t, "component wiretest.Health differs", ts.Mismatch(append(hashes, 1)), "a differing component is named before the count")
	assert.Equal(t, "2 components received, 4 declared", ts.Mismatch(hashes[:2]))
}
