// Package endpoint reaches into the endpoints of package systems for
// ghostwire's own tests and tools: what a game never calls, so package
// systems does not export it. Package systems sets the functions in its
// init; the server is given as any because systems imports this package.
package endpoint

import (
	"time"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/control"
	"github.com/ghostwire/ghostwire/internal/ghostreg"
	"github.com/ghostwire/ghostwire/transport/packet"
)

// ServerInputStats returns the input counters of connection conn of
// server, a *systems.Server; ok is false when no such connection is open.
// It panics if server is not a *systems.Server.
var ServerInputStats func(server any, conn components.ConnID) (stats control.InputStats, ok bool)

// ServerViewStats returns the replication counters of connection conn of
// server, a *systems.Server (the staleness of its ghosts, deferrals, full
// states); ok is false when no such connection is open. It panics if
// server is not a *systems.Server.
var ServerViewStats func(server any, conn components.ConnID) (stats ghostreg.ViewStats, ok bool)

// Link is what the packet layer of one connection knows: its RTT and loss
// estimates, and the newest snapshot tick the peer acknowledged (when
// HasAcked), the baseline delta snapshots build on.
type Link struct {
	RTT      time.Duration
	Loss     float64
	Acked    ecs.Tick
	HasAcked bool
	Stats    packet.Stats
}

// ServerLink returns the packet layer's view of connection conn of server,
// a *systems.Server; ok is false when no such connection is open. It
// panics if server is not a *systems.Server.
var ServerLink func(server any, conn components.ConnID) (link Link, ok bool)

// ServerSendReliable queues msg (copied) on the reliable channel of
// connection conn of server, a *systems.Server: the client receives it
// once and in order, through the hook ClientOnReliable set. It returns an
// error naming conn when no such connection is open, and the packet
// layer's error (packet.ErrMessageSize, packet.ErrBacklogged) otherwise.
var ServerSendReliable func(server any, conn components.ConnID, msg []byte) error

// ClientOnReliable sets the function client, a *systems.Client, calls with
// each message of the reliable channel, once and in order, during Update;
// msg is valid during the call only. Nil stops the calls.
var ClientOnReliable func(client any, f func(msg []byte))
