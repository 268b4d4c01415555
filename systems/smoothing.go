package systems

import (
	"fmt"
	"math"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/correction"
)

// SmoothingOptions configures a [Smoother].
type SmoothingOptions struct {
	// Position reads an entity's position, the anchor of its visual.
	// Required.
	Position func(a *ecs.World, e ecs.Entity) [3]float32
	// Rate is the decay rate per second: the offset is multiplied by
	// exp(-Rate·dt) every frame, whatever the frame rate; 12 when zero
	// (about 250 ms to fade). Allowed: 0.1..1000.
	Rate float64
	// Snap is the largest offset smoothed; a correction that moves the
	// visual further (a respawn, a teleport) jumps at once; 2 when zero.
	Snap float32
}

// Smoother hides the visual jump of a correction of the client's
// predicted ghosts: the ghost's [correction.Offset] takes the
// difference between where it was drawn before and where it is after, and
// decays exponentially (frame-rate independent) in the presentation stage.
// Logic always uses the corrected state; only drawing adds the offset.
type Smoother struct {
	c      *Client
	opts   SmoothingOptions
	src    gw.TimeSource
	ghosts *generic.Filter1[components.Ghost]
	offset generic.Map[correction.Offset]
	adder  generic.Map1[correction.Offset]
	all    *generic.Filter1[correction.Offset]
	before []visual
	last   time.Duration
}

type visual struct {
	e ecs.Entity
	p [3]float32
}

// NewSmoother installs correction smoothing on a client. It errors naming
// the value on a bad option.
func NewSmoother(c *Client, opts SmoothingOptions) (*Smoother, error) {
	if opts.Position == nil {
		return nil, fmt.Errorf("systems: SmoothingOptions.Position is required")
	}
	if opts.Rate == 0 {
		opts.Rate = 12
	}
	if opts.Snap == 0 {
		opts.Snap = 2
	}
	if !(opts.Rate >= 0.1 && opts.Rate <= 1000) {
		return nil, fmt.Errorf("systems: smoothing rate %v outside 0.1..1000 per second", opts.Rate)
	}
	if !(opts.Snap > 0) {
		return nil, fmt.Errorf("systems: smoothing snap distance %v must be > 0", opts.Snap)
	}
	s := &Smoother{
		c: c, opts: opts, src: c.src,
		ghosts: generic.NewFilter1[components.Ghost]().With(generic.T[components.Predicted]()),
		offset: generic.NewMap[correction.Offset](c.World().Arche()),
		adder:  generic.NewMap1[correction.Offset](c.World().Arche()),
		all:    generic.NewFilter1[correction.Offset](),
		last:   c.src.Now(),
	}
	c.onCorrection(s.beforeCorrection, s.afterCorrection)
	c.Schedule().Add(gw.StagePresentation, gw.SystemFunc(s.decay))
	return s, nil
}

// Visual returns where e should be drawn: its position plus its offset.
func (s *Smoother) Visual(e ecs.Entity) [3]float32 {
	a := s.c.World().Arche()
	p := s.opts.Position(a, e)
	if s.offset.Has(e) {
		o := s.offset.Get(e)
		p[0], p[1], p[2] = p[0]+o.X, p[1]+o.Y, p[2]+o.Z
	}
	return p
}

func (s *Smoother) beforeCorrection(w *gw.World) {
	s.before = s.before[:0]
	q := s.ghosts.Query(w.Arche())
	for q.Next() {
		s.before = append(s.before, visual{e: q.Entity()})
	}
	for i := range s.before {
		s.before[i].p = s.Visual(s.before[i].e)
	}
}

func (s *Smoother) afterCorrection(w *gw.World) {
	a := w.Arche()
	for _, v := range s.before {
		if !a.Alive(v.e) {
			continue
		}
		p := s.opts.Position(a, v.e)
		o := correction.Offset{X: v.p[0] - p[0], Y: v.p[1] - p[1], Z: v.p[2] - p[2]}
		if float32(math.Sqrt(float64(o.X*o.X+o.Y*o.Y+o.Z*o.Z))) > s.opts.Snap {
			o = correction.Offset{}
			s.c.stats.SmoothingSnaps++
		}
		if s.offset.Has(v.e) {
			*s.offset.Get(v.e) = o
		} else if o != (correction.Offset{}) {
			s.adder.Assign(v.e, &o)
		}
	}
}

// decay shrinks every offset by exp(-Rate·dt) for the frame's dt.
func (s *Smoother) decay(w *gw.World) {
	now := s.src.Now()
	dt := (now - s.last).Seconds()
	s.last = now
	k := float32(math.Exp(-s.opts.Rate * dt))
	q := s.all.Query(w.Arche())
	for q.Next() {
		o := q.Get()
		o.X, o.Y, o.Z = o.X*k, o.Y*k, o.Z*k
		if o.X*o.X+o.Y*o.Y+o.Z*o.Z < 1e-10 {
			*o = correction.Offset{}
		}
	}
}
