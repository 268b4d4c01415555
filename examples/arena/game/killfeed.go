package game

import (
	"fmt"
	"math"
	"slices"

	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
)

// Weapon is what made a kill.
type Weapon uint8

const (
	// WeaponGun is the hitscan gun, judged by lag compensation.
	WeaponGun Weapon = iota
	// WeaponRocket is a rocket's splash.
	WeaponRocket
)

// String returns "gun" or "rocket".
func (w Weapon) String() string {
	switch w {
	case WeaponGun:
		return "gun"
	case WeaponRocket:
		return "rocket"
	}
	return fmt.Sprintf("Weapon(%d)", uint8(w))
}

// Kill is the kill feed's message: the server sends one to every client
// when a player dies, naming the connections of the killer and the victim
// and the weapon. The tick of the kill travels in the message's envelope
// (systems.Envelope.Tick).
type Kill struct {
	Killer, Victim components.ConnID
	Weapon         Weapon
}

// Serialize is Kill's wire form.
func (k *Kill) Serialize(s *netsync.Stream) {
	netsync.Int(s, &k.Killer, 0, math.MaxUint32)
	netsync.Int(s, &k.Victim, 0, math.MaxUint32)
	netsync.Int(s, &k.Weapon, WeaponGun, WeaponRocket)
}

// KillRules are the kill feed's message rules: from the server only, on
// the reliable ordered channel, so that every client gets every kill
// exactly once and in the order the server saw them, even under loss.
var KillRules = netsync.MessageRules{Channel: netsync.ReliableOrdered, Direction: netsync.ToClient}

// KillRecord is a kill with the tick it happened on: an entry of the
// server's feed, or of a client's as its messages arrive.
type KillRecord struct {
	Kill
	Tick gw.Tick
}

// KillFeed is the server's side of the kill feed, a resource of its world
// (NewGame's OnStart installs it): the systems that kill (ShotSystem,
// Armoury) tell it, and it sends each kill at once to every open
// connection.
type KillFeed struct {
	// Keep makes the feed keep every kill from then on and the
	// connections each went to, so that a report can check what every
	// client received (Sent, CheckKillFeed); off, it keeps nothing, for
	// a server that runs for days.
	Keep bool
	// Kills counts the kills sent; SendErrors the sends to a connection
	// that failed (its reliable queue full: a client the server then
	// drops).
	Kills, SendErrors uint64
	kills             []KillRecord
	to                map[components.ConnID][]int // indices into kills
}

// installKillFeed adds a kill feed to a server's world.
func installKillFeed(s *systems.Server) {
	feed := generic.NewResource[KillFeed](s.World().Arche())
	feed.Add(&KillFeed{to: map[components.ConnID][]int{}})
}

// KillFeedOf returns the kill feed of a server's world, or nil when the
// world has none (a server not made with NewGame).
func KillFeedOf(w *gw.World) *KillFeed {
	feed := generic.NewResource[KillFeed](w.Arche())
	if !feed.Has() {
		return nil
	}
	return feed.Get()
}

// killed tells the feed of w, if it has one, that killer's weapon killed
// victim on the tick being run. A replay of the tick (the determinism
// check's) already told it.
func killed(w *gw.World, killer, victim components.ConnID, weapon Weapon) {
	f := KillFeedOf(w)
	if f == nil || w.IsReplaying() {
		return
	}
	k := KillRecord{Kill: Kill{Killer: killer, Victim: victim, Weapon: weapon}, Tick: w.Tick()}
	i := len(f.kills)
	if f.Keep {
		f.kills = append(f.kills, k)
	}
	err := systems.SendToClients(w, systems.ToEach(func(conn components.ConnID) bool {
		if f.Keep {
			f.to[conn] = append(f.to[conn], i)
		}
		return true
	}), k.Tick, &k.Kill)
	f.Kills++
	if err != nil {
		f.SendErrors++
	}
}

// All returns every kill since Keep was set, oldest first (a copy).
func (f *KillFeed) All() []KillRecord { return slices.Clone(f.kills) }

// Sent returns the kills sent to conn, in the order sent; nil unless Keep
// was set before they happened.
func (f *KillFeed) Sent(conn components.ConnID) []KillRecord {
	idx := f.to[conn]
	if len(idx) == 0 {
		return nil
	}
	out := make([]KillRecord, len(idx))
	for j, i := range idx {
		out[j] = f.kills[i]
	}
	return out
}

// CheckKillFeed compares the kills a client received with those the
// server sent it: nil when it received every one exactly once and in
// order, else an error naming the first difference.
func CheckKillFeed(sent, received []KillRecord) error {
	for i := range min(len(sent), len(received)) {
		if sent[i] != received[i] {
			return fmt.Errorf("kill %d of %d: received %v, sent %v", i+1, len(sent), received[i], sent[i])
		}
	}
	switch {
	case len(received) > len(sent):
		return fmt.Errorf("received %d kills, %d more than the %d sent: first extra %v",
			len(received), len(received)-len(sent), len(sent), received[len(sent)])
	case len(received) < len(sent):
		return fmt.Errorf("received %d of the %d kills sent: first missing %v", len(received), len(sent), sent[len(received)])
	}
	return nil
}

// String writes the record as "tick 120: 2 killed 3 (rocket)".
func (k KillRecord) String() string {
	return fmt.Sprintf("tick %d: %d killed %d (%v)", uint32(k.Tick), k.Killer, k.Victim, k.Weapon)
}
