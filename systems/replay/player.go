package replay

import (
	"cmp"
	"errors"
	"fmt"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems"
)

// Setup is what a replay needs to build the server a file was recorded
// from: the game, the server's options and what the game adds to a new
// server (lag compensation, its own systems), exactly as the recorded run
// built them.
type Setup struct {
	Game    *systems.Game
	Options systems.ServerOptions
	// Server, if set, runs on the new server before its first tick.
	Server func(s *systems.Server) error
}

// Build makes a fresh Setup from a file's header (its Config): a
// [Player] calls it once to start, and again for each seek backwards, so
// it must return new values each time (the game's systems and hooks keep
// state of their own).
type Build func(h *Header) (*Setup, error)

// MismatchError says a replay's state differs from the recording's: the
// first tick whose state hash differs, the hashes, and the last tick
// found equal (the first difference came after it).
type MismatchError struct {
	Tick               gw.Tick
	Recorded, Replayed uint64
	LastEqual          gw.Tick
	HasLastEqual       bool
}

func (e *MismatchError) Error() string {
	s := fmt.Sprintf("replay: the state after tick %d differs from the recording's (hash %016x, recorded %016x)", e.Tick, e.Replayed, e.Recorded)
	if e.HasLastEqual {
		s += fmt.Sprintf("; equal after tick %d", e.LastEqual)
	}
	return s
}

// SchemaError says a file was recorded with another schema than the
// game's.
type SchemaError struct {
	File, Game uint64
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("replay: the file was recorded with schema %016x; this game's is %016x (another build of the game)", e.File, e.Game)
}

// Player runs a recorded match again: the server built by the file's
// Build, driven by a systems.Playback from the file's records, every
// recorded state hash checked. It runs as fast as the machine allows.
type Player struct {
	f        *File
	build    Build
	pb       *systems.Playback
	chunk    int // the next chunk to read
	rd       chunkReader
	inChunk  bool
	checked  uint64
	lastOK   gw.Tick
	hasOK    bool
	err      error // the first mismatch, or an error of the file
	lastTick gw.Tick
}

// NewPlayer builds the recorded server through build and returns a
// player at the file's start (before its first tick). It errors with a
// *SchemaError when the game's schema is not the file's, and when build
// or the server fails.
func NewPlayer(f *File, build Build) (*Player, error) {
	if f.Header.Version == 0 || f.Header.TickRate == 0 {
		return nil, errors.New("replay: the file has no header yet")
	}
	p := &Player{f: f, build: build}
	_, p.lastTick = f.Ticks()
	if err := p.restart(); err != nil {
		return nil, err
	}
	return p, nil
}

// restart builds the server again and goes back to the file's start.
func (p *Player) restart() error {
	su, err := p.build(&p.f.Header)
	if err != nil {
		return err
	}
	if su == nil || su.Game == nil || su.Game.Schema == nil {
		return errors.New("replay: Build returned no Game with its Schema")
	}
	if h := su.Game.Schema.Hash(); h != p.f.Header.SchemaHash {
		return &SchemaError{File: p.f.Header.SchemaHash, Game: h}
	}
	if su.Game.Schema.InputSize() != p.f.Header.InputSize {
		return fmt.Errorf("replay: the file's inputs have %d bytes; the game's %d", p.f.Header.InputSize, su.Game.Schema.InputSize())
	}
	opts := su.Options
	opts.StartTick = gw.Tick(p.f.Header.StartTick)
	pb, err := systems.NewPlayback(su.Game, opts)
	if err != nil {
		return err
	}
	if rate := cmp.Or(su.Game.TickRate, 60); rate != p.f.Header.TickRate {
		return fmt.Errorf("replay: the file's tick rate is %d; the game's %d", p.f.Header.TickRate, rate)
	}
	if su.Server != nil {
		if err := su.Server(pb.Server()); err != nil {
			return err
		}
	}
	p.pb, p.chunk, p.inChunk, p.checked, p.hasOK, p.err = pb, 0, false, 0, false, nil
	return nil
}

// Server returns the server being replayed: its world is the match's at
// Tick.
func (p *Player) Server() *systems.Server { return p.pb.Server() }

// Playback returns the playback driving the server.
func (p *Player) Playback() *systems.Playback { return p.pb }

// Tick returns the last tick run.
func (p *Player) Tick() gw.Tick { return p.pb.Server().World().Tick() }

// Last returns the last tick the file records (a Live one's so far).
func (p *Player) Last() gw.Tick {
	_, p.lastTick = p.f.Ticks()
	return p.lastTick
}

// Checked returns how many state hashes were compared since the start.
func (p *Player) Checked() uint64 { return p.checked }

// Done reports whether every tick of the file (so far) was run.
func (p *Player) Done() bool { return !p.Tick().Before(p.Last()) }

// RunTo runs forward to tick t, or as far as the file reaches (a Live
// one's so far), checking every hash; it never goes back. It returns the
// first mismatch or error of the file.
func (p *Player) RunTo(t gw.Tick) error {
	for p.Tick().Before(t) {
		ran, err := p.Step()
		if err != nil || !ran {
			return err
		}
	}
	return nil
}

// Step runs the next tick: the connection events and messages before it,
// its inputs, then its state hash is checked. ran is false when the file
// (a Live one: so far) has no more ticks; the events after the last tick
// are applied then. err is the first *MismatchError (every later Step
// returns it too) or an error of a record that does not fit the game.
func (p *Player) Step() (ran bool, err error) {
	if p.err != nil {
		return false, p.err
	}
	for {
		if !p.inChunk {
			if p.chunk == len(p.f.ticks) {
				return ran, nil
			}
			p.rd.reset(p.f.ticks[p.chunk], p.f.Header.InputSize)
			p.chunk++
			p.inChunk = true
		}
		if ran && p.nextIsTick() {
			return true, nil
		}
		ev, err := p.rd.next()
		if err != nil {
			p.err = err
			return ran, err
		}
		if ev.kind == 0 {
			p.inChunk = false
			continue
		}
		if err := p.apply(&ev); err != nil {
			p.err = err
			return ran, err
		}
		if ev.kind == recTick {
			ran = true
		}
	}
}

// nextIsTick reports whether the next record starts another tick: the
// events before it belong to it.
func (p *Player) nextIsTick() bool {
	return len(p.rd.d.b) == 0 || p.rd.d.b[0] != recHash
}

// apply applies one record.
func (p *Player) apply(ev *event) error {
	var err error
	switch ev.kind {
	case recConnect:
		err = p.pb.Connect(ev.conn, ev.player)
	case recReconnect:
		err = p.pb.Reconnect(ev.conn, ev.old)
	case recDisconnect:
		err = p.pb.Disconnect(ev.conn)
	case recMessage:
		err = p.pb.Message(ev.conn, ev.message)
	case recTick:
		for range ev.inputs {
			conn, e := p.rd.input()
			if e != nil {
				return e
			}
			if e := p.pb.Input(conn, &p.rd.h, p.rd.in); e != nil {
				return fmt.Errorf("replay: tick %d: %w", p.rd.tick, e)
			}
		}
		if got, want := p.Tick()+1, p.rd.tick; got != want {
			return fmt.Errorf("replay: the file's next tick is %d, the server's %d", want, got)
		}
		p.pb.Tick()
	case recHash:
		p.checked++
		t := p.Tick()
		if got := p.pb.Server().StateHash(); got != ev.hash {
			return &MismatchError{Tick: t, Recorded: ev.hash, Replayed: got, LastEqual: p.lastOK, HasLastEqual: p.hasOK}
		}
		p.lastOK, p.hasOK = t, true
	}
	if err != nil {
		return fmt.Errorf("replay: after tick %d: %w", p.Tick(), err)
	}
	return nil
}

// Run runs every tick left, checking every hash; it returns the first
// mismatch (*MismatchError) or error of the file.
func (p *Player) Run() error {
	for {
		ran, err := p.Step()
		if err != nil {
			return err
		}
		if !ran {
			return nil
		}
	}
}

// Seek runs the match to tick t (the file's last tick at most): forward
// from where it is, or, for a tick already passed, from the start again
// with a server built anew. Every hash on the way is checked.
func (p *Player) Seek(t gw.Tick) error {
	if last := p.Last(); t.After(last) {
		t = last
	}
	if t.Before(p.Tick()) {
		if err := p.restart(); err != nil {
			return err
		}
	}
	return p.RunTo(t)
}
