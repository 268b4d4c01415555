package testgame

import (
	"testing"
	"time"
	"unsafe"

	"github.com/mlange-42/arche/ecs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/ghostreg"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
)

// settle is how long a match runs on neutral input after play: cars coast
// to a stop within two seconds, then every correction arrives.
const settle = 4 * time.Second

func newSchema(t *testing.T) *Schema {
	t.Helper()
	s, err := NewSchema()
	require.NoError(t, err)
	return s
}

// botMatch plays n bots over link for play, then settles.
func botMatch(t *testing.T, seed uint64, n int, link transport.Conditions, play time.Duration) (*Schema, *harness.Harness, []*Bot) {
	t.Helper()
	s := newSchema(t)
	stop := gw.Tick(play / (time.Second / TickRate))
	var bots []*Bot
	var players []Player
	for i := range n {
		b := NewBot(seed*100+uint64(i), stop)
		bots = append(bots, b)
		players = append(players, Player{Link: link, Input: b.Source()})
	}
	h, err := harness.New(s.Options(seed, players...))
	require.NoError(t, err)
	h.Run(play + settle)
	return s, h, bots
}

// ownCar returns client c's own car.
func ownCar(c *systems.Client) (components.GhostID, ecs.Entity, bool) {
	e, ok := c.Player()
	if !ok {
		return 0, e, false
	}
	return get[components.Ghost](c.World(), e).ID, e, true
}

// get returns a pointer to e's component T in w.
func get[T any](w *gw.World, e ecs.Entity) *T {
	a := w.Arche()
	return (*T)(a.Get(e, ecs.ComponentID[T](a)))
}

// sameCar requires ghost id to exist on the server and as entity ce on the
// client, and asserts their replicated components have the same wire
// codes, naming the first field that differs.
func sameCar(t *testing.T, s *Schema, h *harness.Harness, client int, id components.GhostID, ce ecs.Entity) {
	t.Helper()
	se, ok := h.Server.Ghosts().Entity(id)
	require.Truef(t, ok, "ghost %d is not on the server", id)
	sw, cw := h.Server.World(), h.Clients[client].World()
	var coder codec.Coder
	d, same := coder.Diff((*codec.Schema)(s.Schema), codec.ComponentID(s.Body), unsafe.Pointer(get[Body](cw, ce)), unsafe.Pointer(get[Body](sw, se)))
	assert.Truef(t, same, "client %d, ghost %d: %v (client then server)", client, id, d)
	d, same = coder.Diff((*codec.Schema)(s.Schema), codec.ComponentID(s.Counters), unsafe.Pointer(get[Counters](cw, ce)), unsafe.Pointer(get[Counters](sw, se)))
	assert.Truef(t, same, "client %d, ghost %d: %v (client then server)", client, id, d)
	assert.True(t, cw.Arche().Has(ce, ecs.ComponentID[Vehicle](cw.Arche())), "the tag replicates")
}

// The internal test game at 150 ms RTT, 20 ms jitter and 5 % loss for
// 30 s: a client alone mispredicts at most once, and ends equal to the
// server bit for bit with every handbrake pull counted exactly once and
// its cone predicted, taken over by its ghost and ended.
func TestBadLinkOneClientMispredictsAtMostOnce(t *testing.T) {
	s, h, bots := botMatch(t, 1, 1, Link(150*time.Millisecond, 20*time.Millisecond, 0.05), 30*time.Second)
	c := h.Clients[0]
	st := c.Stats()
	t.Logf("mispredictions %d, rollbacks %d, pulls %d, overshoots %d", st.Mispredictions, st.Rollbacks, bots[0].Pulls, bots[0].Overshoots)
	assert.LessOrEqual(t, st.Mispredictions, uint64(1))
	id, ce, ok := ownCar(c)
	require.True(t, ok, "the client has its car")
	sameCar(t, s, h, 0, id, ce)
	assert.Greater(t, bots[0].Pulls, uint64(5), "the bot must pull the handbrake")
	assert.Equal(t, bots[0].Pulls, uint64(get[Counters](c.World(), ce).Handbrakes), "every pull counts exactly once")
	// Each pull dropped a cone, predicted by the client and taken over by
	// its ghost, and each cone ended on both ends after its life.
	assert.Equal(t, bots[0].Pulls, st.SpawnsPredicted)
	assert.Equal(t, bots[0].Pulls, st.SpawnsMatched)
	assert.Zero(t, st.SpawnsUnmatched)
	ss := h.Server.Stats()
	assert.Equal(t, bots[0].Pulls, ss.GhostsSpawned)
	assert.Equal(t, bots[0].Pulls, ss.GhostsDespawned)
	assert.Greater(t, ss.InputsApplied, uint64(1600), "the server applied the client's own inputs")
	// The client validates its own input before predicting and sending,
	// so the server has nothing left to clamp and the prediction holds.
	assert.Greater(t, bots[0].Overshoots, uint64(100), "the bot's steer must overshoot")
	assert.Zero(t, ss.InputsClamped)
}

// Four clients on the same bad link converge exactly: each one's own car,
// and every other car it shows, equals the server's after the settle
// phase.
func TestBadLinkFourClientsConverge(t *testing.T) {
	s, h, bots := botMatch(t, 2, 4, Link(150*time.Millisecond, 20*time.Millisecond, 0.05), 30*time.Second)
	for i, c := range h.Clients {
		st := c.Stats()
		t.Logf("client %d: mispredictions %d, rollbacks %d, pulls %d", i, st.Mispredictions, st.Rollbacks, bots[i].Pulls)
		_, ce, ok := ownCar(c)
		require.Truef(t, ok, "client %d has its car", i)
		(*ghostreg.ClientRegister)(c.Ghosts()).Each(func(gid components.GhostID, e ecs.Entity, _ bool) { sameCar(t, s, h, i, gid, e) })
		assert.Equalf(t, bots[i].Pulls, uint64(get[Counters](c.World(), ce).Handbrakes), "client %d: every pull counts exactly once", i)
		assert.Equalf(t, 4, (*ghostreg.ClientRegister)(c.Ghosts()).Stats().Live, "client %d sees every car", i)
	}
}
