package game

import (
	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
)

// reconnect is the arena's OnReconnect (systems.Game): a player's new
// connection took back its place (a server with a ReconnectGrace), so
// what the game keys by connection moves from the old one to the new:
// the player the view radius centres on, and the tally of the player's
// judged shots. Without it the returning player would see every ghost
// (no known centre) and its shots would start a second tally.
func (m *Match) reconnect(_ *gw.World, conn, old components.ConnID, _ []ecs.Entity) {
	if e, ok := m.viewers[old]; ok {
		delete(m.viewers, old)
		m.viewers[conn] = e
	}
	if m.Shots == nil {
		return
	}
	byConn := m.Shots.Stats.ByConn
	if cs, ok := byConn[old]; ok {
		delete(byConn, old)
		byConn[conn] = cs
	}
}
