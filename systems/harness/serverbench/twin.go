package serverbench

import (
	"fmt"
	"log/slog"
	"runtime"
	"time"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
)

// Twin is a server run again on a Recorder's traffic, alone.
type Twin struct {
	Time   *gw.VirtualTime
	Server *systems.Server
	r      *Recorder
	net    *transport.MemoryNetwork
	conns  []transport.Conn // the clients' ends of the links dialled so far
	next   int              // the next recorded datagram to send
	buf    []byte
}

// NewTwin builds the twin: a memory network with seed (the harness's
// Options.Seed), a listener, the server that build makes on them (as the
// harness made the first: same schema, options and game systems), and
// one link per recorded client, dialled in the recorded order with the
// recorded conditions: those dialled at time 0 now, the others by Step
// when their time comes. It returns build's error, or one naming the
// link that cannot be dialled.
func NewTwin(seed uint64, r *Recorder, build func(*gw.VirtualTime, transport.Listener) (*systems.Server, error)) (*Twin, error) {
	t := &Twin{Time: &gw.VirtualTime{}, r: r, buf: make([]byte, transport.MaxDatagramSize)}
	t.net = transport.NewMemoryNetwork(t.Time, seed)
	l, err := t.net.Listen("server")
	if err != nil {
		return nil, err
	}
	if t.Server, err = build(t.Time, l); err != nil {
		return nil, err
	}
	return t, t.dial()
}

// dial dials the recorded links whose time has come, in their order.
func (t *Twin) dial() error {
	for i := len(t.conns); i < len(t.r.links) && t.r.dials[i] <= t.Time.Now(); i++ {
		conn, err := t.net.Dial("server", t.r.links[i])
		if err != nil {
			return fmt.Errorf("serverbench: link %d: %w", i, err)
		}
		t.conns = append(t.conns, conn)
	}
	return nil
}

// Step does what a harness step did for the server: it dials the links
// dialled by now, advances the virtual time by d and updates the server, timing that alone, then
// sends the datagrams the clients sent by the new time, in their order,
// and drains what the server sent them. It returns the Update's wall
// time and whether it ran a tick.
func (t *Twin) Step(d time.Duration) (wall time.Duration, ticked bool) {
	if err := t.dial(); err != nil {
		panic(err) // dialled once already with the same conditions: a bug
	}
	t.Time.Advance(d)
	now, tick := t.Time.Now(), t.Server.World().Tick()
	start := time.Now()
	t.Server.Update()
	wall = time.Since(start)
	for ; t.next < len(t.r.sends) && t.r.sends[t.next].at <= now; t.next++ {
		s := t.r.sends[t.next]
		_ = t.conns[s.link].Send(t.r.data[s.off : s.off+s.size]) // as the client's own Send, whose error it saw
	}
	for _, c := range t.conns {
		for {
			if _, ok := c.Receive(t.buf); !ok {
				break
			}
		}
	}
	return wall, t.Server.World().Tick() != tick
}

// Measure is what Run measured of one twin's server.
type Measure struct {
	Wall  time.Duration // its Update calls' wall time
	Ticks int           // the ticks they ran
}

// Run steps the twins in turn, one step each, until their time reaches
// end (as a benchmark's loop advances its matches in turn, so they share
// the machine's load alike), and measures each one's server over the
// steps that end after from. allocs counts the heap allocations of all
// of them over those steps (the twins' stepping allocates nothing once
// their links' buffers have grown). It collects garbage once before the
// first measured step, so no collection the earlier steps made due runs
// inside the measured ones.
func Run(step, from, end time.Duration, twins ...*Twin) (ms []Measure, allocs uint64) {
	ms = make([]Measure, len(twins))
	var mem runtime.MemStats
	started := false
	for {
		now := end
		for _, t := range twins {
			now = min(now, t.Time.Now())
		}
		if now >= end {
			break
		}
		if !started && now+step > from {
			// A collection the recording's allocations left due or running
			// would run inside the measured steps, which allocate nothing:
			// finish it first.
			runtime.GC()
			runtime.ReadMemStats(&mem)
			allocs, started = mem.Mallocs, true
		}
		for i, t := range twins {
			if t.Time.Now() >= end {
				continue
			}
			d, ticked := t.Step(step)
			if t.Time.Now() > from {
				ms[i].Wall += d
				if ticked {
					ms[i].Ticks++
				}
			}
		}
	}
	if started {
		runtime.ReadMemStats(&mem)
		allocs = mem.Mallocs - allocs
	}
	return ms, allocs
}

// Build returns NewTwin's build for a server made the way harness.New
// makes the one of opts (its Server options, the harness's defaults for
// the logger and the determinism check), with setup in place of
// opts.SetupServer: a setup that keeps what it spawns needs a fresh game
// state for the twin.
func Build(opts harness.Options, setup func(*systems.Server) error) func(*gw.VirtualTime, transport.Listener) (*systems.Server, error) {
	return func(clock *gw.VirtualTime, l transport.Listener) (*systems.Server, error) {
		so := opts.Server
		if so.Logger == nil {
			so.Logger = slog.New(slog.DiscardHandler)
		}
		if so.SyncTest == 0 {
			so.SyncTest = opts.SyncTest
		}
		s, err := systems.NewServer(clock, l, opts.Game, so)
		if err != nil {
			return nil, err
		}
		if setup != nil {
			err = setup(s)
		}
		return s, err
	}
}
