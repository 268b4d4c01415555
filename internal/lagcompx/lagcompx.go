// Package lagcompx is the framework's own access to what package lagcomp
// keeps from games: judging a shot in the other mode for comparison, and
// the compensator's history. The arena's report and the tests use it.
package lagcompx

import (
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/access"
	"github.com/ghostwire/ghostwire/systems/lagcomp"
)

// The functions package lagcomp set in its init (see internal/access).
var (
	probe   = access.LagcompProbe.(func(*lagcomp.Compensator, lagcomp.Shot, bool) lagcomp.Verdict)
	history = access.LagcompHistory.(func(*lagcomp.Compensator) *gw.History)
	present = access.LagcompPresent.(func(*lagcomp.Compensator) bool)
	reasons = access.LagcompReasons.(func() []lagcomp.Reason)
	rate    = access.LagcompTickRate.(func(*lagcomp.Compensator) int)
)

// Reasons lists every verdict reason in the order of the rules.
func Reasons() []lagcomp.Reason { return reasons() }

// Probe judges a shot like Compensator.Judge would in the given mode
// (present: lag compensation off) without counting it or touching the
// fire-rate bookkeeping: the same shot judged both ways in one run.
func Probe(c *lagcomp.Compensator, s lagcomp.Shot, present bool) lagcomp.Verdict {
	return probe(c, s, present)
}

// Present reports whether Judge judges against the present (lag
// compensation off, Options.Present).
func Present(c *lagcomp.Compensator) bool { return present(c) }

// History returns the compensator's history, for reading with
// internal/ecsx (never to record or restore).
func History(c *lagcomp.Compensator) *gw.History { return history(c) }

// TickRate returns the server tick rate the compensator runs at
// (Options.TickRate, 60 when it was zero).
func TickRate(c *lagcomp.Compensator) int { return rate(c) }
