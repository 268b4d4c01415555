package ghostreg_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/wiretest"
)

// The arena example's player, as the uptime tests replicate it: the same
// components and wire forms (examples/arena/game), so their snapshot
// sizes are those of a real shooter's players.
type (
	arPosition struct{ X, Y float32 }
	arVelocity struct{ X, Y float32 }
	arFacing   struct{ Yaw float32 }
	arHealth   struct {
		HP      int16
		Respawn gw.Tick
	}
)

const arMaxHP = 100

var (
	arCoord = codec.Range(-16, 16, 1.0/256)
	arYaw   = codec.Angle(14)
)

func (p *arPosition) Serialize(s *codec.Stream) { s.Float(&p.X, arCoord); s.Float(&p.Y, arCoord) }
func (v *arVelocity) Serialize(s *codec.Stream) { s.Float(&v.X, arCoord); s.Float(&v.Y, arCoord) }
func (f *arFacing) Serialize(s *codec.Stream)   { s.Angle(&f.Yaw, arYaw) }
func (h *arHealth) Serialize(s *codec.Stream) {
	codec.Int(s, &h.HP, -arMaxHP, arMaxHP)
	s.Tick(&h.Respawn)
}

// arenaSchema is the arena's player ghost type.
type arenaSchema struct {
	Schema *codec.Schema
	Player codec.GhostTypeID
}

func newArenaSchema(t testing.TB) *arenaSchema {
	t.Helper()
	var b codec.SchemaBuilder
	pos := wiretest.Component[arPosition](&b)
	vel := wiretest.Component[arVelocity](&b)
	facing := wiretest.Component[arFacing](&b)
	health := wiretest.Component[arHealth](&b)
	player := b.GhostType("player", pos, vel, facing, health)
	s, err := b.Build()
	require.NoError(t, err)
	return &arenaSchema{Schema: s, Player: player}
}
