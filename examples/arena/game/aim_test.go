package game

import (
	"testing"
	"time"

	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
)

// A bot with a human's aim holds its fire until a target has been in view
// for its reaction time, and starts over when the target leaves the view;
// the perfect aim fires at once.
func TestHumanAimWaitsItsReactionTime(t *testing.T) {
	w := gw.NewWorld(gw.WorldOptions{})
	own := generic.NewMap4[Position, Health, components.Predicted, Command](w.Arche())
	own.NewWith(&Position{}, &Health{HP: MaxHP}, &components.Predicted{}, &Command{})
	other := generic.NewMap3[Position, Health, components.Interpolated](w.Arche())
	target := other.NewWith(&Position{X: 2}, &Health{HP: MaxHP}, &components.Interpolated{})
	clock := &gw.VirtualTime{}

	perfect := NewBot(7, clock, time.Hour)
	assert.True(t, perfect.Input(w, 1).Fire.Pressed(), "the perfect aim fires at once")

	human := NewBot(7, clock, time.Hour)
	human.Aim = Aim{Reaction: 300 * time.Millisecond}
	tick := gw.Tick(1)
	step := func() bool { // a tick at 60 Hz
		clock.Advance(time.Second / 60)
		tick++
		return human.Input(w, tick).Fire.Pressed()
	}
	require.False(t, human.Input(w, tick).Fire.Pressed(), "a target just seen")
	for clock.Now() < 300*time.Millisecond-time.Second/60 {
		require.False(t, step(), "fired %v after seeing the target", clock.Now())
	}
	assert.True(t, step(), "fires once its reaction time has passed")

	// The target dies (out of view), then is back: a new reaction.
	_, h, _ := other.Get(target)
	h.HP = 0
	for range FireInterval {
		assert.False(t, step(), "nothing alive in view")
	}
	h.HP = MaxHP
	assert.False(t, step(), "the target is back: the reaction starts over")
}

// Over a match, human-aimed bots fire less often than perfect ones and
// miss some of their shots, about half, where the perfect aim hits all.
func TestHumanAimMissesSomeShots(t *testing.T) {
	shots := map[string]ShotReport{}
	for _, aim := range []string{AimPerfect, AimHuman} {
		cfg := DefaultConfig()
		cfg.Clients, cfg.Duration, cfg.BotAim = 4, 30*time.Second, aim
		m, r := run(t, cfg)
		shots[aim] = r.Server.Shots
		assert.Equal(t, aim, r.Config.BotAim)
		assert.True(t, r.Converged, aim)
		for _, ps := range m.Players {
			assert.Equal(t, AimOf(aim), ps.Bot.Aim)
		}
	}
	perfect, human := shots[AimPerfect], shots[AimHuman]
	t.Logf("perfect: %d hits of %d shots; human: %d of %d", perfect.Hits, perfect.Fired, human.Hits, human.Fired)
	assert.Equal(t, perfect.Fired, perfect.Hits, "the perfect aim hits every shot")
	rate := float64(human.Hits) / float64(human.Fired)
	assert.InDelta(t, 0.5, rate, 0.2, "the human aim hits about half its shots")
	assert.Less(t, human.Fired, perfect.Fired, "and fires less often")
}

// A person who reacts in 250 ms and aims better than HumanAim (the web
// page's bots) lands more hits, and so more kills, in a one-on-one
// minute, whatever the seed.
func TestAPersonWinsADuelAgainstHumanAim(t *testing.T) {
	person := Aim{Reaction: 250 * time.Millisecond, Error: 0.12, Pause: FireInterval / 2}
	var personHits, botHits uint64
	for seed := uint64(1); seed <= 4; seed++ {
		cfg := DefaultConfig()
		cfg.Clients, cfg.Duration, cfg.Seed, cfg.BotAim = 2, time.Minute, seed, AimHuman
		m, err := NewMatch(cfg)
		require.NoError(t, err)
		m.Players[1].Bot.Aim = person
		r := m.Run(nil)
		bot, p := r.Clients[0], r.Clients[1]
		t.Logf("seed %d: the bot hit %d of %d shots, the person %d of %d", seed, bot.ConfirmedHits, bot.ShotsFired, p.ConfirmedHits, p.ShotsFired)
		assert.Greater(t, p.ConfirmedHits, bot.ConfirmedHits, "seed %d", seed)
		personHits += p.ConfirmedHits
		botHits += bot.ConfirmedHits
	}
	assert.Greater(t, float64(personHits), 1.3*float64(botHits), "four hits kill: the person kills a third more often")
}
