package play

import (
	"time"

	"github.com/ghostwire/ghostwire/examples/arena/game"
)

// Kill is a kill of the kill feed as a view shows it: the connections of
// the killer and the victim (View.Conn is this client's), the weapon
// ("gun" or "rocket") and how long ago it arrived.
type Kill struct {
	Killer, Victim uint32
	Weapon         string
	AgeS           float64
}

// The feed shows the KillFeedLines newest kills, each for KillShown.
const (
	KillFeedLines = 5
	KillShown     = 8 * time.Second
)

// seenKill is a kill and when it arrived.
type seenKill struct {
	Kill
	at time.Duration
}

// killFeed holds the kills the server sent (game.Kill messages), newest
// last, and counts them; the Player's lock guards it.
type killFeed struct {
	kills    []seenKill
	received uint64
}

// add notes a kill arrived at now.
func (f *killFeed) add(now time.Duration, k *game.Kill) {
	f.received++
	if len(f.kills) == KillFeedLines {
		f.kills = append(f.kills[:0], f.kills[1:]...)
	}
	f.kills = append(f.kills, seenKill{Kill{Killer: uint32(k.Killer), Victim: uint32(k.Victim), Weapon: k.Weapon.String()}, now})
}

// shown returns the kills that arrived within KillShown of now, oldest
// first, forgetting the older ones.
func (f *killFeed) shown(now time.Duration) []Kill {
	keep := f.kills[:0]
	for _, k := range f.kills {
		if now-k.at < KillShown {
			keep = append(keep, k)
		}
	}
	f.kills = keep
	out := make([]Kill, len(keep))
	for i, k := range keep {
		out[i] = k.Kill
		out[i].AgeS = (now - k.at).Seconds()
	}
	return out
}
