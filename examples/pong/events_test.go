package main

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
)

// heard is a bounce sound a client played and did not cancel, by the
// tick it was played for.
type heard struct {
	tick gw.Tick
	late bool
}

// TestBounceSoundsMatchTheServersBounces: four players at 100 ms RTT and
// 2 % loss each way, a minute, five seeds. Remote paddles are drawn in the
// past, so the ball's prediction bounces off paddles that have moved on
// (and misses some that have not): the sounds played on the prediction
// are judged by the server's bounces. Every client hears each of the
// server's bounces exactly once: every server bounce is matched to one
// sound within the event window, and no sound is left over.
func TestBounceSoundsMatchTheServersBounces(t *testing.T) {
	const window = 8 // netsync.EventRules' default
	var predicted, cancelled, late, lateTicks, bounces int
	lateMax := 0
	for seed := uint64(1); seed <= 5; seed++ {
		game, err := NewGame()
		require.NoError(t, err)
		l := transport.LinkConfig{Latency: 50 * time.Millisecond, Jitter: 5 * time.Millisecond, Loss: 0.02}
		opts := harness.Options{Seed: seed, Game: game}
		for range 4 {
			opts.Clients = append(opts.Clients, harness.ClientSpec{Link: transport.Conditions{Up: l, Down: l},
				Options: systems.ClientOptions{Input: systems.InputFunc(bot)}})
		}
		h, err := harness.New(opts)
		require.NoError(t, err)
		var server []gw.Tick
		require.NoError(t, systems.HandleServerEvent(h.Server, func(ev systems.Event[Bounce]) { server = append(server, ev.Tick) }))
		sounds := make([][]heard, len(h.Clients))
		for i, c := range h.Clients {
			require.NoError(t, systems.HandleEvent(c, systems.EventHandler[Bounce]{
				Play: func(ev systems.Event[Bounce]) { sounds[i] = append(sounds[i], heard{ev.Tick, ev.Late}) },
				Cancel: func(ev systems.Event[Bounce]) {
					k := slices.Index(sounds[i], heard{ev.Tick, false})
					require.GreaterOrEqual(t, k, 0, "a cancelled sound was played")
					sounds[i] = slices.Delete(sounds[i], k, k+1)
				},
			}))
		}
		h.Run(time.Minute)
		// Judge the bounces the clients have all heard of: up to a second
		// before the end.
		end := h.Server.World().Tick().Add(-60)
		n := 0
		for _, tick := range server {
			if !tick.After(end) {
				n++
			}
		}
		require.Greater(t, n, 20, "seed %d: the ball bounced", seed)
		bounces += n
		for i, c := range h.Clients {
			left := slices.Clone(sounds[i])
			for _, tick := range server[:n] {
				k := slices.IndexFunc(left, func(s heard) bool { d := tick.Sub(s.tick); return d >= -window && d <= window })
				require.GreaterOrEqualf(t, k, 0, "seed %d client %d: the server's bounce at tick %v was not heard", seed, i, tick)
				left = slices.Delete(left, k, k+1)
			}
			for _, s := range left {
				assert.Truef(t, s.tick.After(end.Add(-window)), "seed %d client %d: a sound at tick %v of no bounce", seed, i, s.tick)
			}
			st := c.Stats()
			predicted += int(st.EventsPredicted)
			cancelled += int(st.EventsCancelled)
			late += int(st.EventsLate)
			lateTicks += int(st.EventLateTicks)
			lateMax = max(lateMax, st.EventLateMax)
			assert.Zerof(t, st.EventsDropped+st.EventsForgotten, "seed %d client %d", seed, i)
		}
	}
	t.Logf("%d server bounces × 4 clients: %d sounds played on prediction, %d cancelled, %d played late (on average %.1f ticks late, at most %d)",
		bounces, predicted, cancelled, late, float64(lateTicks)/float64(max(1, late)), lateMax)
	assert.Positive(t, cancelled, "the scene mispredicts bounces: the test judges something")
}

// A Bounce's window may not exceed netsync.MaxEventWindow.
func TestEventWindowIsChecked(t *testing.T) {
	var b netsync.SchemaBuilder
	netsync.Event[Bounce](&b, netsync.EventRules{Window: netsync.MaxEventWindow + 1})
	_, err := b.Build()
	assert.EqualError(t, err, "netsync: event main.Bounce: window 121 ticks outside 1..120")
}
