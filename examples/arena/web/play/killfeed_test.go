package play_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/examples/arena/game"
	"github.com/ghostwire/ghostwire/examples/arena/web/play"
)

// The kill feed: a kill by the gun shows on every client, naming the
// killer's and the victim's connections and the weapon, for KillShown;
// the feed keeps the KillFeedLines newest, and counts every kill.
func TestPlayerShowsTheKillFeed(t *testing.T) {
	a := newJudgingArena(t)
	p := a.join(t, 100*time.Millisecond, play.Options{})
	target := a.join(t, 100*time.Millisecond, play.Options{})
	a.run(time.Second)
	it := game.SpawnPoint(2)
	p.SetControls(play.Controls{AimX: it.X, AimY: it.Y})
	a.run(100 * time.Millisecond)
	me, victim := p.View().Conn, target.View().Conn
	require.NotZero(t, me)
	require.NotZero(t, victim)
	require.NotEqual(t, me, victim)

	// Four hits kill (game.Damage); a shot a quarter of a second apart.
	for range 4 {
		p.Fire()
		a.run(250 * time.Millisecond)
	}
	a.run(200 * time.Millisecond) // the last verdict's round trip
	want := play.Kill{Killer: me, Victim: victim, Weapon: "gun"}
	for _, v := range []play.View{p.View(), target.View()} {
		require.Len(t, v.Kills, 1)
		k := v.Kills[0]
		assert.Positive(t, k.AgeS)
		k.AgeS = 0
		assert.Equal(t, want, k)
		assert.Equal(t, uint64(1), v.KillsReceived)
	}
	a.run(play.KillShown)
	assert.Empty(t, p.View().Kills, "shown for KillShown")
	assert.Equal(t, uint64(1), p.View().KillsReceived)

}

// Four bots shooting it out: every client counts every kill the server's
// feed sent, and shows the KillFeedLines newest, oldest first, none
// older than KillShown.
func TestPlayerKillFeedKeepsTheNewest(t *testing.T) {
	a := newJudgingArena(t)
	for i := range 4 {
		bot := game.NewBot(uint64(i+1), a.clock, 20*time.Second)
		bot.Rockets = true
		a.join(t, 100*time.Millisecond, play.Options{Input: bot.Input})
	}
	a.run(21 * time.Second) // the bots stop at 20 s; their last kills arrive
	feed := game.KillFeedOf(a.server.World())
	require.Greater(t, feed.Kills, uint64(3*play.KillFeedLines), "the bots kill often")
	for i, p := range a.players {
		v := p.View()
		assert.Equalf(t, feed.Kills, v.KillsReceived, "client %d", i+1)
		require.Lenf(t, v.Kills, play.KillFeedLines, "client %d", i+1)
		for j, k := range v.Kills {
			assert.Lessf(t, k.AgeS, play.KillShown.Seconds(), "client %d", i+1)
			if j > 0 {
				assert.GreaterOrEqualf(t, v.Kills[j-1].AgeS, k.AgeS, "client %d: oldest first", i+1)
			}
		}
	}
}

// A rocket's splash that kills shows as a rocket's kill.
func TestPlayerShowsARocketKill(t *testing.T) {
	a := newJudgingArena(t)
	p := a.join(t, 100*time.Millisecond, play.Options{})
	target := a.join(t, 100*time.Millisecond, play.Options{})
	a.run(time.Second)
	it := game.SpawnPoint(2)
	p.SetControls(play.Controls{AimX: it.X, AimY: it.Y})
	a.run(100 * time.Millisecond)
	for p.View().KillsReceived == 0 {
		require.Less(t, a.clock.Now(), 10*time.Second, "no kill")
		p.Rocket()
		a.run(game.RocketCooldown)
	}
	a.run(200 * time.Millisecond)
	for _, v := range []play.View{p.View(), target.View()} {
		require.Len(t, v.Kills, 1)
		assert.Equal(t, "rocket", v.Kills[0].Weapon)
		assert.Equal(t, p.View().Conn, v.Kills[0].Killer)
		assert.Equal(t, target.View().Conn, v.Kills[0].Victim)
	}
}
