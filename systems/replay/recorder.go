package replay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems"
)

// RecorderOptions configures a [Recorder]. The zero value records a hash
// every tick and a keyframe every 5 seconds.
type RecorderOptions struct {
	// Config is the game's configuration and seed, in a form of the
	// game's choosing (JSON, flags): the file carries it so that a replay
	// builds the same server (Header.Config). At most MaxConfig bytes.
	Config []byte
	// HashEvery is how many ticks apart the state hashes are; 1 when
	// zero, so a replay names the first tick that differs. Allowed:
	// 1..1,048,576.
	HashEvery int
	// KeyframeEvery is how many ticks apart the keyframes are; 5 seconds'
	// worth when zero. Allowed: 1..16,777,216.
	KeyframeEvery int
}

// RecorderStats counts what a [Recorder] wrote.
type RecorderStats struct {
	// Bytes is the file's size so far; Chunks and Keyframes the chunks
	// and, of them, the keyframes written.
	Bytes             uint64
	Chunks, Keyframes uint64
	// Ticks, Inputs and Messages count the ticks, applied inputs and
	// messages recorded.
	Ticks, Inputs, Messages uint64
}

// Recorder writes a server's match to a file as it runs: set it as
// systems.ServerOptions.Recorder. It writes a chunk per second of ticks
// (the tick rate's count), so a crash loses at most the last second, and
// Close writes the last one. Steady state it allocates nothing beyond its
// buffers, which grow to a chunk's size once.
//
// The first write error stops it: later calls do nothing, and Err and
// Close return the error. It is not safe for concurrent use; a server
// calls it from Update.
type Recorder struct {
	w       io.Writer
	h       Header
	started bool
	err     error
	stats   RecorderStats

	body    []byte // the ticks chunk being built
	first   gw.Tick
	last    gw.Tick // the last tick recorded
	tin     []byte  // the inputs of the tick being run
	nin     int
	prev    []prevInput // per connection, its last input in the chunk
	nprev   int
	out     []byte // a framed chunk
	state   []byte // a keyframe's state
	keyBody []byte
}

// prevInput is a connection's last input in the chunk, which the next is
// coded against.
type prevInput struct {
	conn                       components.ConnID
	tickOff, viewAge, ackedAge int32
	hasView                    bool
	fraction, delay, maxAge    uint32
	in                         []byte
}

// NewRecorder returns a recorder writing to w the match of a server
// running game. It errors naming the option out of range, or when game
// has no schema.
func NewRecorder(w io.Writer, game *systems.Game, opts RecorderOptions) (*Recorder, error) {
	if game == nil || game.Schema == nil {
		return nil, errors.New("replay: NewRecorder needs a Game with its Schema")
	}
	rate := game.TickRate
	if rate == 0 {
		rate = 60
	}
	if opts.HashEvery == 0 {
		opts.HashEvery = 1
	}
	if opts.KeyframeEvery == 0 {
		opts.KeyframeEvery = 5 * rate
	}
	switch {
	case len(opts.Config) > MaxConfig:
		return nil, fmt.Errorf("replay: a configuration of %d bytes; at most %d", len(opts.Config), MaxConfig)
	case opts.HashEvery < 1 || opts.HashEvery > 1<<20:
		return nil, fmt.Errorf("replay: hash every %d ticks outside 1..%d", opts.HashEvery, 1<<20)
	case opts.KeyframeEvery < 1 || opts.KeyframeEvery > 1<<24:
		return nil, fmt.Errorf("replay: keyframe every %d ticks outside 1..%d", opts.KeyframeEvery, 1<<24)
	}
	return &Recorder{w: w, h: Header{Version: Version, SchemaHash: game.Schema.Hash(), TickRate: rate,
		HashEvery: opts.HashEvery, KeyframeEvery: opts.KeyframeEvery, InputSize: game.Schema.InputSize(),
		Config: append([]byte(nil), opts.Config...)}}, nil
}

// Err returns the first write error, or nil.
func (r *Recorder) Err() error { return r.err }

// Stats returns the counters.
func (r *Recorder) Stats() RecorderStats { return r.stats }

// Header returns the file's header; StartTick is known once the first
// change was recorded.
func (r *Recorder) Header() Header { return r.h }

// start writes the magic, the version and the header, at the first change
// recorded: after is the last tick run before it.
func (r *Recorder) start(after gw.Tick) {
	if r.started {
		return
	}
	r.started = true
	r.h.StartTick = uint32(after)
	r.first, r.last = after+1, after
	r.out = append(r.out[:0], magic[:]...)
	r.out = binary.AppendUvarint(r.out, Version)
	r.keyBody = r.h.append(r.keyBody[:0])
	r.out = appendChunk(r.out, chunkHeader, r.keyBody)
	r.write(r.out)
}

// write writes b, keeping the first error.
func (r *Recorder) write(b []byte) {
	if r.err != nil {
		return
	}
	n, err := r.w.Write(b)
	r.stats.Bytes += uint64(n)
	if err != nil {
		r.err = fmt.Errorf("replay: writing the recording: %w", err)
	}
}

// Connected records a connection's player (systems.Recorder).
func (r *Recorder) Connected(after gw.Tick, conn components.ConnID, player components.GhostID) {
	r.start(after)
	r.body = append(r.body, recConnect)
	r.body = binary.AppendUvarint(r.body, uint64(conn))
	r.body = binary.AppendUvarint(r.body, uint64(player))
}

// Reconnected records a connection taking another's place
// (systems.Recorder).
func (r *Recorder) Reconnected(after gw.Tick, conn, old components.ConnID) {
	r.start(after)
	r.body = append(r.body, recReconnect)
	r.body = binary.AppendUvarint(r.body, uint64(conn))
	r.body = binary.AppendUvarint(r.body, uint64(old))
}

// Disconnected records a place given up (systems.Recorder).
func (r *Recorder) Disconnected(after gw.Tick, conn components.ConnID) {
	r.start(after)
	r.body = append(r.body, recDisconnect)
	r.body = binary.AppendUvarint(r.body, uint64(conn))
}

// Received records a message the server accepted (systems.Recorder).
func (r *Recorder) Received(after gw.Tick, conn components.ConnID, message []byte) {
	r.start(after)
	r.stats.Messages++
	r.body = append(r.body, recMessage)
	r.body = binary.AppendUvarint(r.body, uint64(conn))
	r.body = binary.AppendUvarint(r.body, uint64(len(message)))
	r.body = append(r.body, message...)
}

// Applied records an input applied (systems.Recorder), coded against the
// connection's previous input in the chunk.
func (r *Recorder) Applied(tick gw.Tick, conn components.ConnID, h components.InputHeader, input []byte) {
	r.start(tick - 1)
	r.stats.Inputs++
	p := r.prevOf(conn)
	cur := prevInput{conn: conn, tickOff: h.Tick.Sub(tick), viewAge: tick.Sub(h.ViewTick), ackedAge: tick.Sub(h.Acked),
		hasView: h.HasView, fraction: math.Float32bits(h.ViewFraction), delay: math.Float32bits(h.InterpolationDelay),
		maxAge: math.Float32bits(h.MaxViewAge)}
	var flags byte
	if cur.tickOff != p.tickOff {
		flags |= inTick
	}
	if cur.hasView {
		flags |= inHasView
	}
	if cur.viewAge != p.viewAge {
		flags |= inViewAge
	}
	if cur.fraction != p.fraction {
		flags |= inFraction
	}
	if cur.delay != p.delay {
		flags |= inDelay
	}
	if cur.maxAge != p.maxAge {
		flags |= inMaxAge
	}
	if cur.ackedAge != p.ackedAge {
		flags |= inAcked
	}
	changed := 0
	for i := range input {
		if input[i] != p.in[i] {
			changed++
		}
	}
	if changed > 0 {
		flags |= inBytes
	}
	b := binary.AppendUvarint(r.tin, uint64(conn))
	b = append(b, flags)
	if flags&inTick != 0 {
		b = binary.AppendVarint(b, int64(cur.tickOff))
	}
	if flags&inViewAge != 0 {
		b = binary.AppendVarint(b, int64(cur.viewAge))
	}
	if flags&inFraction != 0 {
		b = binary.AppendUvarint(b, gridded(h.ViewFraction, fractionGrid))
	}
	if flags&inDelay != 0 {
		b = binary.AppendUvarint(b, gridded(h.InterpolationDelay, delayGrid))
	}
	if flags&inMaxAge != 0 {
		b = binary.AppendVarint(b, int64(int32(cur.maxAge-p.maxAge)))
	}
	if flags&inAcked != 0 {
		b = binary.AppendVarint(b, int64(cur.ackedAge))
	}
	if changed > 0 {
		at := len(b)
		for range (len(input) + 7) / 8 {
			b = append(b, 0)
		}
		for i := range input {
			if input[i] != p.in[i] {
				b[at+i/8] |= 1 << (i % 8)
			}
		}
		for i := range input {
			if input[i] != p.in[i] {
				b = append(b, input[i])
			}
		}
	}
	r.tin = b
	r.nin++
	cur.in = append(p.in[:0], input...)
	*p = cur
}

// prevOf returns the previous input of conn in the chunk, a zero one
// when it has none yet.
func (r *Recorder) prevOf(conn components.ConnID) *prevInput {
	// The i-th input of a tick is most often the i-th connection's.
	if r.nin < r.nprev && r.prev[r.nin].conn == conn {
		return &r.prev[r.nin]
	}
	for i := range r.prev[:r.nprev] {
		if r.prev[i].conn == conn {
			return &r.prev[i]
		}
	}
	if r.nprev == len(r.prev) {
		r.prev = append(r.prev, prevInput{})
	}
	p := &r.prev[r.nprev]
	r.nprev++
	*p = prevInput{conn: conn, in: p.in[:0]}
	for range r.h.InputSize {
		p.in = append(p.in, 0)
	}
	return p
}

// Ticked records the tick's inputs, its state hash when due, and closes
// the chunk at each second of ticks, then writes a keyframe when due
// (systems.Recorder).
func (r *Recorder) Ticked(s *systems.Server) {
	tick := s.World().Tick()
	r.start(tick - 1)
	r.stats.Ticks++
	r.body = append(r.body, recTick)
	r.body = binary.AppendUvarint(r.body, uint64(r.nin))
	r.body = append(r.body, r.tin...)
	r.tin, r.nin = r.tin[:0], 0
	r.last = tick
	n := int(tick.Since(gw.Tick(r.h.StartTick))) // a match longer than 2³¹ ticks keeps counting up
	if n%r.h.HashEvery == 0 {
		r.body = append(r.body, recHash)
		r.body = binary.LittleEndian.AppendUint64(r.body, s.StateHash())
	}
	if n%r.h.TickRate == 0 || n%r.h.KeyframeEvery == 0 {
		r.flush()
	}
	if n%r.h.KeyframeEvery == 0 {
		r.keyBody = binary.AppendUvarint(r.keyBody[:0], uint64(tick))
		r.keyBody = s.AppendState(r.keyBody)
		r.out = appendChunk(r.out[:0], chunkKeyframe, r.keyBody)
		r.write(r.out)
		r.stats.Chunks++
		r.stats.Keyframes++
	}
}

// flush writes the ticks chunk built so far, if it holds anything, and
// starts the next after the last tick recorded.
func (r *Recorder) flush() {
	if len(r.body) > 0 {
		r.keyBody = binary.AppendUvarint(r.keyBody[:0], uint64(r.first))
		r.keyBody = append(r.keyBody, r.body...)
		r.out = appendChunk(r.out[:0], chunkTicks, r.keyBody)
		r.write(r.out)
		r.stats.Chunks++
	}
	r.body = r.body[:0]
	r.first = r.last + 1
	r.nprev = 0
}

// Close writes what is recorded since the last chunk and returns the
// first write error. It does not close the writer. Later changes are
// recorded into the next chunk; Close again writes it.
func (r *Recorder) Close() error {
	if r.started {
		r.flush()
	}
	return r.err
}

var _ systems.Recorder = (*Recorder)(nil)

// The grids the wire quantizes the view fraction and the interpolation
// delay to (1/256 and 1/16 tick): a value on its grid is coded in a byte
// or two.
const (
	fractionGrid = 256
	delayGrid    = 16
)

// gridded codes v: its step count k on a grid of 1/grid, as k<<1, when v
// is exactly k/grid (0 ≤ k < 2²⁰); otherwise its bits, as bits<<1 | 1.
func gridded(v float32, grid float32) uint64 {
	k := v * grid
	if k >= 0 && k < 1<<20 && k == float32(int32(k)) && float32(int32(k))/grid == v && math.Float32bits(v)>>31 == 0 {
		return uint64(int32(k)) << 1
	}
	return uint64(math.Float32bits(v))<<1 | 1
}

// ungridded decodes gridded's code c; ok is false for a code no value
// has.
func ungridded(c uint64, grid float32) (v float32, ok bool) {
	if c&1 == 0 {
		if c>>1 >= 1<<20 {
			return 0, false
		}
		return float32(c>>1) / grid, true
	}
	if c>>1 > math.MaxUint32 {
		return 0, false
	}
	return math.Float32frombits(uint32(c >> 1)), true
}
