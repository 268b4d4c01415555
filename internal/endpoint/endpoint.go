// Package endpoint reaches into the endpoints of package systems for
// ghostwire's own tests and tools: what a game never calls, so package
// systems does not export it. Package systems sets the functions in its
// init; the server is given as any because systems imports this package.
package endpoint

import (
	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/internal/control"
)

// ServerInputStats returns the input counters of connection conn of
// server, a *systems.Server; ok is false when no such connection is open.
// It panics if server is not a *systems.Server.
var ServerInputStats func(server any, conn components.ConnID) (stats control.InputStats, ok bool)
