package game

import (
	"testing"

	"github.com/mlange-42/arche/ecs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
)

// A reconnected player keeps its view centre and its shot tally under its
// new connection; another player's are untouched.
func TestReconnectMovesWhatIsKeyedByConnection(t *testing.T) {
	w := ecs.NewWorld()
	me, other := w.NewEntity(), w.NewEntity()
	schema, err := NewSchema()
	require.NoError(t, err)
	m := &Match{Schema: schema, viewers: map[components.ConnID]ecs.Entity{2: me, 3: other},
		Shots: &ShotSystem{Stats: ShotStats{ByConn: map[components.ConnID]*ConnShots{2: {Judged: 5, Hits: 2}, 3: {Judged: 1}}}}}
	game := m.game()
	game.OnReconnect(nil, 7, 2, []ecs.Entity{me})
	assert.Equal(t, map[components.ConnID]ecs.Entity{7: me, 3: other}, m.viewers)
	assert.Equal(t, map[components.ConnID]*ConnShots{7: {Judged: 5, Hits: 2}, 3: {Judged: 1}}, m.Shots.Stats.ByConn)
	(&Match{}).reconnect(nil, 8, 7, nil) // no view radius, no shots yet: nothing to move
}
