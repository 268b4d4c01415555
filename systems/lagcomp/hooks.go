package lagcomp

import (
	"github.com/mlange-42/arche/ecs"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/access"
	"github.com/ghostwire/ghostwire/systems"
)

// init hands the framework what games do not see; internal/lagcompx types
// and documents each function.
func init() {
	access.LagcompProbe = func(c *Compensator, s Shot, present bool) Verdict { return c.probe(s, present) }
	access.LagcompPresent = func(c *Compensator) bool { return c.opts.Present }
	access.LagcompHistory = func(c *Compensator) *gw.History { return c.hist }
	access.LagcompReasons = func() []Reason { return reasons[:] }
	access.LagcompTickRate = func(c *Compensator) int { return c.opts.TickRate }
}

// serverConfirm queues a verdict for the shooter's client; package
// systems sets it (see internal/access).
var serverConfirm = access.ServerConfirm.(func(s *systems.Server, shooter ecs.Entity, shot gw.Tick, hit bool, reason string, target ecs.Entity, part uint8))
