package main

import (
	"fmt"
	"maps"
	"os"
	"sync"
	"time"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/examples/arena/game"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/replay"
	"github.com/ghostwire/ghostwire/systems/rooms"
)

// arenaRoom is one room of the -serve process: an arena match on its own
// goroutine (systems/rooms). Its world is never read from another
// goroutine: once a second, a system of its own publishes what the
// per-second line shows, and when the room ends its last report is kept.
type arenaRoom struct {
	name string
	game *game.Endpoints
	rate int // ticks per second

	// rec records the room's match to recFile (-record), on the room's
	// goroutine; nil without.
	rec     *replay.Recorder
	recFile *os.File

	mu    sync.Mutex
	last  roomSnapshot
	final *roomReport // set when the room has ended
}

// record creates the room's recording file and its recorder, carrying
// the match's configuration.
func (r *arenaRoom) record(path string, g *systems.Game, cfg game.Config) (*replay.Recorder, error) {
	conf, err := cfg.Recording()
	if err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-record: %w", err)
	}
	rec, err := replay.NewRecorder(f, g, replay.RecorderOptions{Config: conf})
	if err != nil {
		f.Close()
		return nil, err
	}
	r.rec, r.recFile = rec, f
	return rec, nil
}

// closeRecording writes the recording's last second and closes its file;
// it reports the file, nil without a recording.
func (r *arenaRoom) closeRecording(st rooms.RoomStats) (*game.RecordingReport, error) {
	if r.rec == nil {
		return nil, nil
	}
	err := r.rec.Close()
	if cerr := r.recFile.Close(); err == nil {
		err = cerr
	}
	rs := r.rec.Stats()
	minutes := float64(rs.Ticks) / float64(r.rate) / 60
	return &game.RecordingReport{File: r.recFile.Name(), Bytes: rs.Bytes,
		BytesPerPlayerMinute: float64(rs.Bytes) / float64(max(st.Peak, 1)) / max(minutes, 1e-9)}, err
}

// roomSnapshot is what a room published of itself.
type roomSnapshot struct {
	tick   gw.Tick
	stats  systems.ServerStats
	report game.ServerReport
}

// setup adds the arena's server systems (lag compensation, the shots, the
// crates) and the publisher to the room's server, before its first
// update.
func (r *arenaRoom) setup(s *systems.Server) error {
	if err := r.game.SetupServer(s); err != nil {
		return err
	}
	s.Schedule().Add(gw.StageHistory, gw.SystemFunc(func(w *gw.World) {
		if uint32(w.Tick())%uint32(r.rate) == 0 { // once a second: the report allocates
			r.publish(s)
		}
	}))
	return nil
}

// publish copies the server's counts and the arena's report for other
// goroutines; it runs on the room's goroutine.
func (r *arenaRoom) publish(s *systems.Server) {
	snap := roomSnapshot{tick: s.World().Tick(), stats: s.Stats(), report: r.game.ServerReport(s)}
	snap.report.Shots.Verdicts = maps.Clone(snap.report.Shots.Verdicts) // the shot system goes on counting in its own
	r.mu.Lock()
	r.last = snap
	r.mu.Unlock()
}

// snapshot returns what the room published last.
func (r *arenaRoom) snapshot() roomSnapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

// ended keeps the room's last report: its stats as it ended (the
// clients told the server is closing) and the game's counts.
func (r *arenaRoom) ended(st rooms.RoomStats, s *systems.Server) {
	r.publish(s)
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	rep := &roomReport{Name: r.name, Ticks: st.Ticks, ClientsAtEnd: st.Clients, Peak: st.Peak, Reconnects: st.Reconnects,
		HeldGivenUp: st.HeldGivenUp, Dropped: st.Dropped, TickP50US: us(st.TickP50), TickP99US: us(st.TickP99),
		TickMaxUS: us(st.TickMax), LateMaxMS: us(st.Late) / 1000, CPUSeconds: st.Busy.Seconds(), Server: r.snapshot().report}
	var err error
	if rep.Recording, err = r.closeRecording(st); err != nil {
		rep.RecordingError = err.Error()
	}
	r.mu.Lock()
	r.final = rep
	r.mu.Unlock()
}

// result returns the room's last report, nil before it ended.
func (r *arenaRoom) result() *roomReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.final
}
