package systems

import (
	"context"
	"log/slog"

	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
)

// takeOwned writes the server-owned components of the predicted ghosts of
// s (netsync.SchemaBuilder.ServerOwned) into their present state: no
// comparison, no rollback. It runs right before the tick that reconciles
// s, so no frame draws them apart from the predicted components that same
// snapshot corrects (a respawn's health and position), and outside that
// tick, so the determinism check can start new windows when a value
// changed: a replay reaching back across the change would restore the
// older value and could not match. A rollback of that tick for another
// reason writes the server's state of the snapshot's tick, theirs
// included: the newest the client has.
func (c *Client) takeOwned(s *protocol.Snapshot) {
	took := false
	for gi := range s.Ghosts {
		g := &s.Ghosts[gi]
		if !c.ghosts.Predicts(&g.Ghost) {
			continue
		}
		if e, ok := c.ghosts.Entity(g.ID); ok && c.ghosts.TakeOwned(e, s, gi, c.onOwned) {
			took = true
		}
	}
	if took {
		c.check.reset()
	}
}

// ownedChanged counts a server-owned value a snapshot changed and logs it
// at Debug (formatted only when Debug is on): diagnostics that keep it
// apart from a misprediction.
func (c *Client) ownedChanged(d codec.FieldDiff) {
	c.stats.ServerOwnedChanges++
	if c.log.Enabled(context.Background(), slog.LevelDebug) {
		was, now := d.Values()
		c.log.Debug("ghostwire: server-owned value taken", "tick", c.latest.Tick, "component", d.Component, "field", d.Field,
			"was", was, "server", now)
	}
}
