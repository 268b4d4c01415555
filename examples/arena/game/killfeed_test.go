package game

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
)

// At 150 ms and 5 % loss each way, every client receives every kill of
// the match, the gun's and the rockets', exactly once and in the order
// the server saw them, with the tick they happened on; the report says
// so per client.
func TestKillFeedReachesEveryClientOnceAndInOrder(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RTT, cfg.Loss, cfg.Duration = 150*time.Millisecond, 5, 30*time.Second
	m, r := run(t, cfg)
	feed := KillFeedOf(m.Harness.Server.World())
	require.NotNil(t, feed)
	kills := r.Server.Shots.Kills + r.Server.Rockets.Kills
	require.Greater(t, kills, uint64(20), "kills must happen for the test to mean anything")
	assert.Equal(t, kills, r.Server.Kills, "every kill went to the feed")
	assert.Zero(t, feed.SendErrors)

	var all []KillRecord
	for i, c := range m.Harness.Clients {
		conn, ok := c.Conn()
		require.True(t, ok)
		sent := feed.Sent(conn)
		if all == nil {
			all = sent
		}
		assert.Equalf(t, all, sent, "client %d: connected from the start, it was sent every kill", i+1)
		assert.NoErrorf(t, CheckKillFeed(sent, m.Players[i].Kills), "client %d: each once, in order", i+1)
		cr := r.Clients[i]
		require.NotNilf(t, cr.KillFeed.ExactlyOnceInOrder, "client %d", i+1)
		assert.Truef(t, *cr.KillFeed.ExactlyOnceInOrder, "client %d: %s", i+1, cr.KillFeed.Mismatch)
		assert.Equalf(t, kills, *cr.KillFeed.Sent, "client %d", i+1)
		assert.Equalf(t, kills, cr.KillFeed.Received, "client %d", i+1)
		assert.Positivef(t, cr.Messages.Received, "client %d", i+1)
	}
	assert.True(t, r.KillFeedExact)
	require.Len(t, all, int(kills))
	byWeapon := map[Weapon]uint64{}
	for i, k := range all {
		byWeapon[k.Weapon]++
		assert.NotEqualf(t, k.Killer, k.Victim, "kill %d: nobody kills itself", i+1)
		assert.NotZerof(t, k.Victim, "kill %d", i+1)
		if i > 0 {
			assert.Falsef(t, k.Tick.Before(all[i-1].Tick), "kill %d: the server's order is the ticks'", i+1)
		}
	}
	assert.Equal(t, r.Server.Shots.Kills, byWeapon[WeaponGun])
	assert.Equal(t, r.Server.Rockets.Kills, byWeapon[WeaponRocket])
}

// CheckKillFeed names the first difference: a kill missing, one received
// twice, two swapped, one with another tick, one too many.
func TestCheckKillFeedNamesTheFirstDifference(t *testing.T) {
	k := func(killer, victim components.ConnID, w Weapon, tick gw.Tick) KillRecord {
		return KillRecord{Kill: Kill{Killer: killer, Victim: victim, Weapon: w}, Tick: tick}
	}
	sent := []KillRecord{k(1, 2, WeaponGun, 100), k(3, 1, WeaponRocket, 130), k(2, 3, WeaponGun, 170)}
	require.NoError(t, CheckKillFeed(sent, sent))
	require.NoError(t, CheckKillFeed(nil, nil))
	for _, c := range []struct {
		name     string
		received []KillRecord
		err      string
	}{
		{"missing", sent[:2], "received 2 of the 3 kills sent: first missing tick 170: 2 killed 3 (gun)"},
		{"none", nil, "received 0 of the 3 kills sent: first missing tick 100: 1 killed 2 (gun)"},
		{"twice", []KillRecord{sent[0], sent[1], sent[1], sent[2]},
			"kill 3 of 3: received tick 130: 3 killed 1 (rocket), sent tick 170: 2 killed 3 (gun)"},
		{"swapped", []KillRecord{sent[1], sent[0], sent[2]},
			"kill 1 of 3: received tick 130: 3 killed 1 (rocket), sent tick 100: 1 killed 2 (gun)"},
		{"another tick", []KillRecord{sent[0], k(3, 1, WeaponRocket, 131), sent[2]},
			"kill 2 of 3: received tick 131: 3 killed 1 (rocket), sent tick 130: 3 killed 1 (rocket)"},
		{"one more", append(append([]KillRecord{}, sent...), sent[2]),
			"received 4 kills, 1 more than the 3 sent: first extra tick 170: 2 killed 3 (gun)"},
	} {
		assert.EqualErrorf(t, CheckKillFeed(sent, c.received), c.err, c.name)
	}
}

// Weapon names itself, and a value out of range says what it is.
func TestWeaponString(t *testing.T) {
	assert.Equal(t, "gun", WeaponGun.String())
	assert.Equal(t, "rocket", WeaponRocket.String())
	assert.Equal(t, "Weapon(7)", Weapon(7).String())
}

// A server keeps no kill unless asked (a server that runs for days), and
// sends every one all the same.
func TestKillFeedKeepsNothingUnlessAsked(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration = 2, 10*time.Second
	m, err := NewMatch(cfg)
	require.NoError(t, err)
	feed := KillFeedOf(m.Harness.Server.World())
	feed.Keep = false
	m.Run(nil)
	require.Positive(t, feed.Kills, "the bots killed")
	for i, c := range m.Harness.Clients {
		conn, _ := c.Conn()
		assert.Nilf(t, feed.Sent(conn), "client %d", i+1)
		assert.Lenf(t, m.Players[i].Kills, int(feed.Kills), "client %d: sent all the same", i+1)
	}
	assert.Nil(t, KillFeedOf(gw.NewWorld(gw.WorldOptions{})), "a world without a feed has none")
}
