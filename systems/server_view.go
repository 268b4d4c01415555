package systems

import (
	"math"
	"time"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/control"
)

// Defaults of the plausible view (docs/lagcomp.md states the formula).
const (
	defaultMaxInterpolationDelay = 150 * time.Millisecond
	defaultViewTolerance         = 50 * time.Millisecond
)

// viewMeter is what the server measures of one connection to bound the
// view its shots claim: how old the newest snapshot the client
// acknowledged is when its batch arrives (a round trip plus the client's
// hold, with its deviation: the jitter), and when each input first
// arrived. Nothing in it is taken from the client except which tick it
// acknowledges, and an acknowledgement can only name a snapshot already
// sent.
type viewMeter struct {
	ack      control.RTT // age of the acknowledged snapshot at arrival, ticks counted as ms
	newest   gw.Tick     // the newest tick acknowledged
	acked    bool
	arrivals []arrival // by input tick, modulo its length
}

// arrival is when the first copy of one tick's input arrived: server
// tick plus fraction.
type arrival struct {
	tick, at gw.Tick
	frac     float64
	set      bool
	acked    gw.Tick // the newest snapshot acknowledged then; 0: none
}

func newViewMeter(capacity int) viewMeter {
	return viewMeter{arrivals: make([]arrival, capacity)}
}

// acknowledged samples the age of snapshot tick ack at arrival time at
// plus frac. Only acknowledgements newer than every earlier one count, so
// a reordered or duplicated batch adds no delay; a tick the server has not
// sent yet is ignored.
func (m *viewMeter) acknowledged(ack, at gw.Tick, frac float64) {
	if ack == 0 || (m.acked && !ack.After(m.newest)) || ack.After(at) {
		return
	}
	m.newest, m.acked = ack, true
	age := float64(at.Sub(ack)) + frac
	m.ack.Sample(time.Duration(age * float64(time.Millisecond)))
}

// arrived notes the first arrival of the input of tick.
func (m *viewMeter) arrived(tick, at gw.Tick, frac float64) {
	a := arrival{tick: tick, at: at, frac: frac, set: true}
	if m.acked {
		a.acked = m.newest
	}
	m.arrivals[int(uint32(tick)%uint32(len(m.arrivals)))] = a
}

// ackedBefore returns the newest snapshot tick acknowledged when the
// input of tick first arrived; 0 when none or unknown.
func (m *viewMeter) ackedBefore(tick gw.Tick) gw.Tick {
	if a := m.arrivals[int(uint32(tick)%uint32(len(m.arrivals)))]; a.set && a.tick == tick {
		return a.acked
	}
	return 0
}

// maxViewAge returns the oldest view, in ticks before h.Tick, that the
// measurements explain:
//
//	lead + srtt + 4·rttvar + min(claimed interpolation delay, maxInterp) + tolerance
//
// where lead is how long before its tick the input first arrived and
// srtt, rttvar the smoothed age of the acknowledged snapshot and its
// deviation. Before any acknowledgement the round trip counts as 0, and
// an input whose arrival is unknown as arrived on its tick: what is not
// measured is not granted.
// It reports whether the claimed delay was over the bound.
func (m *viewMeter) maxViewAge(h *components.InputHeader, maxInterp, tolerance float64) (float32, bool) {
	lead := 0.0
	if a := m.arrivals[int(uint32(h.Tick)%uint32(len(m.arrivals)))]; a.set && a.tick == h.Tick {
		lead = max(float64(h.Tick.Sub(a.at))-a.frac, 0)
	}
	ms := float64(time.Millisecond)
	rtt := 0.0
	if m.ack.Samples() > 0 {
		rtt = float64(m.ack.Smoothed())/ms + 4*float64(m.ack.Variation())/ms
	}
	interp := float64(h.InterpolationDelay)
	if !(interp >= 0) {
		interp = 0
	}
	clamped := interp > maxInterp
	interp = math.Min(interp, maxInterp)
	return float32(lead + rtt + interp + tolerance), clamped
}
