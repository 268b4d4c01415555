package ghostreg_test

import (
	"fmt"
	"math"
	"testing"
	"unsafe"

	"github.com/mlange-42/arche/ecs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/ghostreg"
	"github.com/ghostwire/ghostwire/internal/wiretest"
)

// Pos is a replicated position, quantized to 1/64 unit in [-100, 100].
type Pos struct{ X, Y float32 }

// HP is replicated health, a zigzag varint.
type HP struct{ V int32 }

// Unrelated components a client world registers before binding, so its
// arche IDs differ from the server's.
type (
	clientOnlyA struct{ A, B uint64 }
	clientOnlyB struct{ C float64 }
)

var posQ = codec.Range(-100, 100, 1.0/64)

func (p *Pos) Serialize(s *codec.Stream) { s.Float(&p.X, posQ); s.Float(&p.Y, posQ) }

func (h *HP) Serialize(s *codec.Stream) { codec.Int(s, &h.V, math.MinInt32, math.MaxInt32) }

// Ctl is the test game's input type.
type Ctl struct{ Turn float32 }

func (c *Ctl) Serialize(s *codec.Stream) { s.Float(&c.Turn, posQ) }

// testSchema is the schema every test builds, the same way on both ends.
type testSchema struct {
	*codec.Schema
	pos, hp codec.ComponentID
	// player replicates (Pos, HP); crate replicates (HP, Pos), the other
	// order, so component indexes within a ghost type matter.
	player, crate codec.GhostTypeID
}

func newTestSchema(tb testing.TB) *testSchema {
	tb.Helper()
	var b codec.SchemaBuilder
	pos := wiretest.Component[Pos](&b)
	hp := wiretest.Component[HP](&b)
	player := b.GhostType("player", pos, hp)
	crate := b.GhostType("crate", hp, pos)
	wiretest.DeclareInput[Ctl](&b, wiretest.InputRulesOf[Ctl]{})
	s, err := b.Build()
	require.NoError(tb, err)
	return &testSchema{Schema: s, pos: pos, hp: hp, player: player, crate: crate}
}

// newServerWorld returns a server world bound to a fresh schema.
func newServerWorld(tb testing.TB, s *testSchema) (*gw.World, *ghostreg.Binding) {
	tb.Helper()
	w := gw.NewWorld(gw.WorldOptions{})
	return w, ghostreg.Bind(w, s.Schema)
}

// newClientWorld returns a client world that registered unrelated
// components (and the schema's in reverse order) before binding, so no
// replicated component has the arche ID it has on the server.
func newClientWorld(tb testing.TB, s *testSchema) (*gw.World, *ghostreg.Binding) {
	tb.Helper()
	w := gw.NewWorld(gw.WorldOptions{})
	a := w.Arche()
	ecs.ComponentID[clientOnlyA](a)
	ecs.ComponentID[clientOnlyB](a)
	ecs.ComponentID[HP](a)
	return w, ghostreg.Bind(w, s.Schema)
}

// newEntity creates an entity holding Pos p and HP h: the components of
// both ghost types.
func newEntity(w *gw.World, p Pos, h HP) ecs.Entity {
	a := w.Arche()
	pid, hid := ecs.ComponentID[Pos](a), ecs.ComponentID[HP](a)
	return a.NewEntityWith(ecs.Component{ID: pid, Comp: &p}, ecs.Component{ID: hid, Comp: &h})
}

func getPos(w *gw.World, e ecs.Entity) *Pos {
	return (*Pos)(w.Arche().Get(e, ecs.ComponentID[Pos](w.Arche())))
}

func getHP(w *gw.World, e ecs.Entity) *HP {
	return (*HP)(w.Arche().Get(e, ecs.ComponentID[HP](w.Arche())))
}

func getGhost(w *gw.World, e ecs.Entity) components.Ghost {
	return *(*components.Ghost)(w.Arche().Get(e, ecs.ComponentID[components.Ghost](w.Arche())))
}

func has[T any](w *gw.World, e ecs.Entity) bool {
	return w.Arche().Has(e, ecs.ComponentID[T](w.Arche()))
}

// bitsOf returns the raw bytes of a plain value, for bitwise comparison.
func bitsOf[T any](v *T) string {
	return string(unsafe.Slice((*byte)(unsafe.Pointer(v)), unsafe.Sizeof(*v)))
}

// bytesAt returns the size bytes at p.
func bytesAt(p unsafe.Pointer, size uintptr) string {
	return string(unsafe.Slice((*byte)(p), size))
}

// componentSize returns the size of the Go type arche registered as id.
func componentSize(a *ecs.World, id ecs.ID) uintptr {
	info, ok := ecs.ComponentInfo(a, id)
	if !ok {
		panic(fmt.Sprintf("component %d not registered", id))
	}
	return info.Type.Size()
}

func TestBindMapsTypesPerWorld(t *testing.T) {
	s := newTestSchema(t)
	sw, sb := newServerWorld(t, s)
	cw, cb := newClientWorld(t, s)

	require.Same(t, s.Schema, sb.Schema(), "Schema returns what Bind got")
	require.Same(t, sw, sb.World(), "World returns what Bind got")

	sa, ca := sw.Arche(), cw.Arche()
	// Precondition: the two worlds number the replicated types differently,
	// otherwise this test proves nothing.
	require.NotEqual(t, ecs.ComponentID[Pos](sa), ecs.ComponentID[Pos](ca), "test setup: Pos's arche IDs agree between worlds")
	require.NotEqual(t, ecs.ComponentID[HP](sa), ecs.ComponentID[HP](ca), "test setup: HP's arche IDs agree between worlds")

	for _, side := range []struct {
		name string
		a    *ecs.World
		b    *ghostreg.Binding
	}{{"server", sa, sb}, {"client", ca, cb}} {
		pid, hid := ecs.ComponentID[Pos](side.a), ecs.ComponentID[HP](side.a)
		for _, tt := range []struct {
			typ  codec.GhostTypeID
			want []ecs.ID
		}{{s.player, []ecs.ID{pid, hid}}, {s.crate, []ecs.ID{hid, pid}}} {
			ids, ok := side.b.ComponentIDs(tt.typ)
			assert.Truef(t, ok, "%s: ComponentIDs(%d)", side.name, tt.typ)
			assert.Equalf(t, tt.want, ids, "%s: ComponentIDs(%d)", side.name, tt.typ)
			// Every arche ID really is the Go type the schema names.
			gt, _ := s.GhostType(tt.typ)
			for j, id := range ids {
				info, ok := ecs.ComponentInfo(side.a, id)
				assert.Truef(t, ok, "%s: ghost type %d component %d: arche ID %d is not registered", side.name, tt.typ, j, id)
				assert.Equalf(t, s.ComponentType(gt.Components[j]), info.Type, "%s: ghost type %d component %d: arche ID %d", side.name, tt.typ, j, id)
			}
		}
		for _, m := range []struct {
			name      string
			got, want ecs.ID
		}{
			{"Ghost", side.b.Ghost, ecs.ComponentID[components.Ghost](side.a)},
			{"Predicted", side.b.Predicted, ecs.ComponentID[components.Predicted](side.a)},
			{"Interpolated", side.b.Interpolated, ecs.ComponentID[components.Interpolated](side.a)},
			{"Header", side.b.Header, ecs.ComponentID[components.InputHeader](side.a)},
			{"Input", side.b.Input, ecs.ComponentID[Ctl](side.a)},
		} {
			assert.Equalf(t, m.want, m.got, "%s: Binding.%s", side.name, m.name)
		}
	}
}

func TestComponentIDsUnknownType(t *testing.T) {
	s := newTestSchema(t)
	_, b := newServerWorld(t, s)
	for _, typ := range []codec.GhostTypeID{codec.GhostTypeID(s.NumGhostTypes()), 99, math.MaxUint16} {
		ids, ok := b.ComponentIDs(typ)
		assert.Falsef(t, ok, "ComponentIDs(%d)", typ)
		assert.Nilf(t, ids, "ComponentIDs(%d)", typ)
	}
}

func TestBindingQuantize(t *testing.T) {
	s := newTestSchema(t)
	w, b := newClientWorld(t, s)
	raw := []Pos{
		{1.0 / 3, -2.718281828},
		{99.99, -99.99},
		{1e6, -1e6}, // clamped to the range
		{float32(math.NaN()), 0.0078125},
		{0.5 / 64, -0.5 / 64}, // ties
	}
	for _, p := range raw {
		for _, typ := range []codec.GhostTypeID{s.player, s.crate} {
			e := newEntity(w, p, HP{V: -12345})
			b.Quantize(e, typ)
			got := *getPos(w, e)
			want := Pos{posQ.Quantize(p.X), posQ.Quantize(p.Y)}
			assert.Equalf(t, bitsOf(&want), bitsOf(&got), "type %d: Quantize(%v) = %v, want %v", typ, p, got, want)
			assert.Equalf(t, int32(-12345), getHP(w, e).V, "type %d: Quantize changed HP (the full int32 range is lossless)", typ)
			// Idempotent, bit for bit.
			b.Quantize(e, typ)
			again := *getPos(w, e)
			assert.Equalf(t, bitsOf(&got), bitsOf(&again), "type %d: Quantize twice = %v, once = %v", typ, again, got)
		}
	}
}

func TestBindingQuantizeAllocs(t *testing.T) {
	s := newTestSchema(t)
	w, b := newServerWorld(t, s)
	e := newEntity(w, Pos{1.1, 2.2}, HP{V: 3})
	b.Quantize(e, s.player) // grows the scratch buffers
	n := testing.AllocsPerRun(100, func() {
		getPos(w, e).X += 0.37
		b.Quantize(e, s.player)
	})
	assert.Zero(t, n, "Binding.Quantize allocs per call in steady state")
}
