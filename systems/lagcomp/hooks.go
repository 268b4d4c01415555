package lagcomp

import (
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/access"
)

// init hands the framework what games do not see; internal/lagcompx types
// and documents each function.
func init() {
	access.LagcompProbe = func(c *Compensator, s Shot, present bool) Verdict { return c.probe(s, present) }
	access.LagcompPresent = func(c *Compensator) bool { return c.opts.Present }
	access.LagcompHistory = func(c *Compensator) *gw.History { return c.hist }
}
