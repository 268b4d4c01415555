package lagcomp

import gw "github.com/ghostwire/ghostwire/ecs"

// What the external tests of this package reach that games do not.

// Stats counts what the compensator did; Verdicts by reason.
type Stats struct {
	Records, Shots, Rewinds uint64
	// Rewound counts the entities shots rewound.
	Rewound  uint64
	Verdicts map[Reason]uint64
	// Shooters is how many shooters the fire-rate check tracks now (dead
	// ones are forgotten).
	Shooters int
}

// Reasons lists every reason in order.
func Reasons() []Reason { return reasons[:] }

func (c *Compensator) Stats() Stats {
	st := Stats{Records: c.stats.records, Shots: c.stats.shots, Rewinds: c.stats.rewinds, Rewound: c.stats.rewound,
		Verdicts: map[Reason]uint64{}, Shooters: len(c.lastShot)}
	for i, r := range reasons {
		st.Verdicts[r] = c.stats.verdicts[i]
	}
	return st
}

func (c *Compensator) Record(tick gw.Tick)                { c.record(tick) }
func (c *Compensator) Probe(s Shot, present bool) Verdict { return c.probe(s, present) }
func (c *Compensator) Window() float64                    { return c.window }

// SetBroadphase turns the test of a shot against the recorded poses
// before rewinding on (the default) or off.
func (c *Compensator) SetBroadphase(on bool) { c.noBroadphase = !on }

// Rewind returns every recorded entity at t plus f, blended between the
// two neighbouring ticks, as a shot rewinds those near its ray.
func (c *Compensator) Rewind(t gw.Tick, f float32) ([]Rewound, error) {
	if err := c.aim(t, f, nil); err != nil {
		return nil, err
	}
	for _, n := range c.near {
		c.rewindRow(int(n.row))
	}
	return c.targets, nil
}
