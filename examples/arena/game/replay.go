package game

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/replay"
)

// Recording returns the configuration a recording of the match carries
// (replay.RecorderOptions.Config): the settings as JSON, hooks left out.
func (c Config) Recording() ([]byte, error) { return json.Marshal(c) }

// ConfigOfRecording reads back a recording's configuration and checks it.
func ConfigOfRecording(b []byte) (Config, error) {
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		return Config{}, fmt.Errorf("the recording's configuration: %w", err)
	}
	return c, c.Validate()
}

// ReplayBuild builds the arena's server for a recording: the game, the
// server's options and its setup (lag compensation, crates, rockets, the
// kill feed), as NewMatch built them. Each call makes a new Match, which
// *last points at (for the report).
func ReplayBuild(last **Match) replay.Build {
	return func(h *replay.Header) (*replay.Setup, error) {
		cfg, err := ConfigOfRecording(h.Config)
		if err != nil {
			return nil, err
		}
		m, err := newMatch(cfg)
		if err != nil {
			return nil, err
		}
		*last = m
		opts := m.serverOptions()
		opts.Logger = slog.New(slog.DiscardHandler)
		return &replay.Setup{Game: m.game(), Options: opts, Server: func(s *systems.Server) error {
			if err := m.setupServer(s); err != nil {
				return err
			}
			KillFeedOf(s.World()).Keep = true
			return nil
		}}, nil
	}
}

// ReplayReport is the outcome of a replay: the recorded match's settings
// and what its server's world decided (ticks, shots, rockets, kills),
// which equal the recorded run's, and the hash check.
type ReplayReport struct {
	Config ReportConfig `json:"config"`
	Server ServerReport `json:"server"`
	// Size is the file's bytes; Truncated says it ended inside a chunk
	// (the replay stopped at its last complete second).
	Size      int64 `json:"size"`
	Truncated bool  `json:"truncated"`
	// Checked counts the state hashes compared; Mismatch is the first
	// difference ("" when every hash is equal).
	Checked  uint64 `json:"hashes_checked"`
	Mismatch string `json:"mismatch,omitempty"`
	// TicksPerSecond is the replay's speed, in ticks per wall second.
	TicksPerSecond float64 `json:"ticks_per_second"`
}

// Replay runs the recorded match f again with no network and reports
// it. A hash that differs is in the report (Mismatch), not an error; the
// error is that of a file this game cannot replay (another schema, bad
// configuration).
func Replay(f *replay.File) (*ReplayReport, error) {
	var m *Match
	p, err := replay.NewPlayer(f, ReplayBuild(&m))
	if err != nil {
		return nil, err
	}
	start := time.Now()
	runErr := p.Run()
	wall := time.Since(start).Seconds()
	s := p.Server()
	r := &ReplayReport{Config: m.reportConfig(), Server: m.serverReport(s), Size: f.Size, Truncated: f.Truncated,
		Checked: p.Checked(), TicksPerSecond: float64(s.Stats().Ticks) / max(wall, 1e-9)}
	if runErr != nil {
		r.Mismatch = runErr.Error()
	}
	return r, nil
}
