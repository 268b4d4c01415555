package systems

import (
	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
)

// appliedInputs keeps the inputs one connection's ghosts were given on the
// latest ticks, so that a replay of the server's determinism check
// (ServerOptions.SyncTest) applies the same ones: the input buffer hands
// each tick's input out once. It is empty (and costs nothing) without the
// check.
type appliedInputs struct {
	ticks []gw.Tick
	heads []components.InputHeader
	data  []byte
	size  int
}

// newAppliedInputs keeps n ticks of records of size bytes.
func newAppliedInputs(n, size int) appliedInputs {
	return appliedInputs{ticks: make([]gw.Tick, n), heads: make([]components.InputHeader, n), data: make([]byte, n*size), size: size}
}

// keep stores the input applied on tick.
func (a *appliedInputs) keep(tick gw.Tick, h components.InputHeader, rec []byte) {
	if len(a.ticks) == 0 {
		return
	}
	i := int(uint32(tick) % uint32(len(a.ticks)))
	a.ticks[i], a.heads[i] = tick, h
	copy(a.data[i*a.size:(i+1)*a.size], rec)
}

// at returns the input applied on tick, and false when it is no longer
// (or never was) kept: the connection started after it.
func (a *appliedInputs) at(tick gw.Tick) (components.InputHeader, []byte, bool) {
	if len(a.ticks) == 0 {
		return components.InputHeader{}, nil, false
	}
	i := int(uint32(tick) % uint32(len(a.ticks)))
	if a.ticks[i] != tick {
		return components.InputHeader{}, nil, false
	}
	return a.heads[i], a.data[i*a.size : (i+1)*a.size], true
}
