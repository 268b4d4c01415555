package lagcomp

// Judge decides shots. The [Compensator] is the framework's judge; a game
// may put its own in its place, for example one that wraps a Compensator
// to add a rule of its game (no shots while sprinting) or to drop one.
// Every judge declares the rules it enforces, so a server can say which
// rules its players are held to, and every refusal names one of them.
type Judge interface {
	// Judge decides one shot. A refused shot's Verdict.Reason is the
	// rule that refused it, one of Rules.
	Judge(Shot) Verdict
	// Rules lists the rules the judge enforces, each by the reason its
	// refusals carry, in the order they are checked.
	Rules() []Reason
}

var _ Judge = (*Compensator)(nil)

// Rules lists the rules this compensator enforces, in the order Judge
// checks them: the window and the plausible view always; the death rule
// with Options.Alive; the fire rate with Options.MinShotInterval; the
// claimed origin (distance, and walls between it and the shooter) always;
// occlusion with Options.Walls; visibility with Options.Visible. It
// allocates.
func (c *Compensator) Rules() []Reason {
	rules := []Reason{ReasonOutsideWindow, ReasonViewImplausible}
	if c.opts.Alive != nil {
		rules = append(rules, ReasonShooterDead)
	}
	if c.opts.MinShotInterval > 0 {
		rules = append(rules, ReasonFireRate)
	}
	rules = append(rules, ReasonOriginMismatch)
	if len(c.opts.Walls) > 0 {
		rules = append(rules, ReasonOccluded)
	}
	if c.opts.Visible != nil {
		rules = append(rules, ReasonNotVisible)
	}
	return rules
}
