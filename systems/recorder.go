package systems

import (
	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
)

// Recorder receives what a server's match is made of as it runs, so that
// it can be run again with no network (ServerOptions.Recorder; package
// replay writes it to a file, and [Playback] runs it): every change of
// the world that does not come from its own systems. The server calls it
// from Update, in the order the changes happen; the slices it passes are
// valid during the call only. A recorder must not change the world.
//
// Changes between two ticks carry after, the last tick run: they happen
// before tick after+1.
type Recorder interface {
	// Connected says connection conn's player was spawned through
	// Game.OnConnect, as ghost player.
	Connected(after gw.Tick, conn components.ConnID, player components.GhostID)
	// Reconnected says connection conn took the place of old
	// (ServerOptions.ReconnectGrace): old's ghosts are conn's, and
	// Game.OnReconnect ran.
	Reconnected(after gw.Tick, conn, old components.ConnID)
	// Disconnected says connection conn's place was given up: its ghosts
	// despawned and Game.OnDisconnect ran (a place held for a reconnect is
	// not given up: its ghosts get the neutral input, which Applied
	// records).
	Disconnected(after gw.Tick, conn components.ConnID)
	// Received says the server accepted message, a game message of
	// connection conn as it came off the wire (its header and fields), and
	// ran its handlers.
	Received(after gw.Tick, conn components.ConnID, message []byte)
	// Applied says the ghosts of connection conn were given input h and
	// input (the input type's bytes) on tick: after validation, the
	// plausible view and the substitution of a missing one, exactly what
	// the prediction read.
	Applied(tick gw.Tick, conn components.ConnID, h components.InputHeader, input []byte)
	// Ticked says tick s.World().Tick() ran (its snapshots sent).
	Ticked(s *Server)
}
