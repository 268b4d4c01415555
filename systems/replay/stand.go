package replay

import (
	"fmt"
	"time"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems"
)

// StandOptions configures a [Stand].
type StandOptions struct {
	// Delay is how far behind the match the spectators see it; 30 s
	// when zero. Allowed: 2s..1h (more than the second a recording's
	// chunk takes to arrive).
	Delay time.Duration
	// MaxSpectators bounds the spectators seated at once; 64 when zero.
	// Allowed: 1..4096.
	MaxSpectators int
}

// StandStats counts a Stand's spectators.
type StandStats struct {
	// Seated counts the spectators seated, Refused those refused (full, or
	// before the recording started); Watching is how many watch now.
	Seated, Refused uint64
	Watching        int
	// Tick is the tick the spectators' world is at.
	Tick gw.Tick
	// Err is what stopped the spectators' world, nil while it runs: a
	// state that differs from the recording's (a *MismatchError), a build
	// that failed.
	Err error
}

// Stand seats a server's spectators (systems.ServerOptions.Spectators)
// in front of the match a delay back, served from its recording and not
// from the live world: a [Player] follows the server's [Live] recording
// Delay behind it, every hash checked, on a systems.Playback whose server
// sends the spectators its snapshots. Nothing a spectator does reaches
// the live world, and the live server's tick does not grow with them: it
// hands each one over at its hello, and the Stand's own work (the delayed
// world's tick, the spectators' snapshots) runs in Update after the live
// server's.
//
// It is driven by the live server (Seat, Update) on its goroutine.
type Stand struct {
	rec     *Recorder
	live    *Live
	build   Build
	opts    StandOptions
	player  *Player
	stats   StandStats
	delay   int // ticks
	seated  uint64
	refused uint64
}

// NewStand returns a stand following live, which rec writes to (rec's
// ticks say where the match is), building the delayed world with build.
// It errors naming an option out of range.
func NewStand(rec *Recorder, live *Live, build Build, opts StandOptions) (*Stand, error) {
	if opts.Delay == 0 {
		opts.Delay = 30 * time.Second
	}
	if opts.MaxSpectators == 0 {
		opts.MaxSpectators = 64
	}
	switch {
	case rec == nil || live == nil || build == nil:
		return nil, fmt.Errorf("replay: NewStand needs the recorder, its Live recording and a Build")
	case opts.Delay < 2*time.Second || opts.Delay > time.Hour:
		return nil, fmt.Errorf("replay: spectators' delay %v outside 2s..1h", opts.Delay)
	case opts.MaxSpectators < 1 || opts.MaxSpectators > 4096:
		return nil, fmt.Errorf("replay: max spectators %d outside 1..4096", opts.MaxSpectators)
	}
	return &Stand{rec: rec, live: live, build: build, opts: opts,
		delay: int(opts.Delay * time.Duration(rec.h.TickRate) / time.Second)}, nil
}

// Seat takes a spectator (systems.Spectators): false when MaxSpectators
// watch, and until the match is Delay old (the spectator's client, told
// the server is full, comes back later).
func (st *Stand) Seat(sp *systems.Spectator) bool {
	st.start()
	// Until the match is Delay old the spectators' world has not begun:
	// a client welcomed to a world that stands still would set its clock
	// by it.
	if st.player == nil || st.stats.Err != nil || !st.player.Tick().After(gw.Tick(st.rec.h.StartTick)) ||
		st.player.Server().Stats().Connections >= st.opts.MaxSpectators {
		st.refused++
		return false
	}
	if err := st.player.Playback().Seat(sp); err != nil {
		st.refused++
		return false
	}
	st.seated++
	return true
}

// start builds the player once the recording has its header.
func (st *Stand) start() {
	if st.player != nil || st.stats.Err != nil || !st.live.Started() {
		return
	}
	p, err := NewPlayer(st.live.File(), st.build)
	if err != nil {
		st.stats.Err = err
		return
	}
	st.player = p
}

// Update runs the spectators' world up to Delay behind the match, then
// serves the spectators (systems.Spectators).
func (st *Stand) Update() {
	st.start()
	if st.player == nil {
		return
	}
	if st.stats.Err == nil {
		now := gw.Tick(st.rec.h.StartTick) + gw.Tick(st.rec.stats.Ticks)
		if target := now - gw.Tick(st.delay); int32(target-gw.Tick(st.rec.h.StartTick)) > 0 {
			st.stats.Err = st.player.RunTo(target)
		}
	}
	st.player.Playback().Serve()
}

// Close tells every spectator the match's server is closing
// (systems.Spectators); the spectators' world stops.
func (st *Stand) Close() {
	if st.player != nil {
		st.player.Server().Close()
	}
}

// Stats returns the counters.
func (st *Stand) Stats() StandStats {
	s := st.stats
	s.Seated, s.Refused = st.seated, st.refused
	if st.player != nil {
		s.Watching = st.player.Server().Stats().Connections
		s.Tick = st.player.Tick()
	}
	return s
}

// Server returns the spectators' server, whose world is the match Delay
// back; nil before the recording started.
func (st *Stand) Server() *systems.Server {
	if st.player == nil {
		return nil
	}
	return st.player.Server()
}

var _ systems.Spectators = (*Stand)(nil)
