package replay

import (
	"fmt"
	"math"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
)

// event is one record of a ticks chunk, as chunkReader decodes it.
type event struct {
	kind      byte // 0 at the end of the chunk
	conn, old components.ConnID
	player    components.GhostID
	message   []byte
	inputs    int // recTick: how many inputs follow (input)
	hash      uint64
}

// chunkReader decodes the records of a ticks chunk.
type chunkReader struct {
	d     decoder
	tick  gw.Tick // the last tick whose record was read
	size  int
	prev  []prevInput
	nprev int
	h     components.InputHeader
	in    []byte
}

// maxInputsPerTick bounds the inputs of one tick a reader takes: the
// server's MaxClients bound.
const maxInputsPerTick = 4096

func (c *chunkReader) reset(t ticksChunk, inputSize int) {
	c.d = decoder{b: t.body}
	c.tick = t.first - 1
	c.size = inputSize
	c.nprev = 0
}

// next returns the next record; kind 0 at the end. After a recTick
// record, input must be called ev.inputs times before next.
func (c *chunkReader) next() (event, error) {
	var ev event
	if len(c.d.b) == 0 {
		return ev, nil
	}
	ev.kind = c.d.byte()
	switch ev.kind {
	case recConnect:
		ev.conn = components.ConnID(c.d.int(math.MaxUint32))
		ev.player = components.GhostID(c.d.int(math.MaxUint32))
	case recReconnect:
		ev.conn = components.ConnID(c.d.int(math.MaxUint32))
		ev.old = components.ConnID(c.d.int(math.MaxUint32))
	case recDisconnect:
		ev.conn = components.ConnID(c.d.int(math.MaxUint32))
	case recMessage:
		ev.conn = components.ConnID(c.d.int(math.MaxUint32))
		ev.message = c.d.bytes(c.d.int(MaxChunk))
	case recTick:
		c.tick++
		ev.inputs = c.d.int(maxInputsPerTick)
	case recHash:
		ev.hash = c.d.u64()
	default:
		c.d.fail("a record of unknown kind %d", ev.kind)
	}
	if c.d.err != nil {
		return event{}, fmt.Errorf("replay: the chunk of tick %d: %w", c.tick+1, c.d.err)
	}
	return ev, nil
}

// input decodes the next input of the tick's record into c.h and c.in
// (valid until the next call) and returns its connection.
func (c *chunkReader) input() (components.ConnID, error) {
	conn := components.ConnID(c.d.int(math.MaxUint32))
	flags := c.d.byte()
	p := c.prevOf(conn)
	if flags&inTick != 0 {
		p.tickOff = int32(c.d.svarint())
	}
	p.hasView = flags&inHasView != 0
	if flags&inViewAge != 0 {
		p.viewAge = int32(c.d.svarint())
	}
	if flags&inFraction != 0 {
		p.fraction = c.gridded(fractionGrid)
	}
	if flags&inDelay != 0 {
		p.delay = c.gridded(delayGrid)
	}
	if flags&inMaxAge != 0 {
		p.maxAge += uint32(int32(c.d.svarint()))
	}
	if flags&inAcked != 0 {
		p.ackedAge = int32(c.d.svarint())
	}
	if flags&inBytes != 0 {
		mask := c.d.bytes((c.size + 7) / 8)
		if mask != nil {
			for i := range c.size {
				if mask[i/8]&(1<<(i%8)) != 0 {
					p.in[i] = c.d.byte()
				}
			}
		}
	}
	if c.d.err != nil {
		return 0, fmt.Errorf("replay: an input of tick %d: %w", c.tick, c.d.err)
	}
	t := c.tick
	c.h = components.InputHeader{Tick: t + gw.Tick(p.tickOff), HasView: p.hasView, ViewTick: t - gw.Tick(p.viewAge),
		ViewFraction: math.Float32frombits(p.fraction), InterpolationDelay: math.Float32frombits(p.delay),
		MaxViewAge: math.Float32frombits(p.maxAge), Acked: t - gw.Tick(p.ackedAge)}
	c.in = append(c.in[:0], p.in...)
	return conn, nil
}

// prevOf returns conn's previous input in the chunk: zero values at
// first. It keeps at most maxInputsPerTick connections' (a file naming
// more is damaged: their inputs then share the last slot's state, and
// the replay's hashes say so).
func (c *chunkReader) prevOf(conn components.ConnID) *prevInput {
	for i := range c.prev[:c.nprev] {
		if c.prev[i].conn == conn {
			return &c.prev[i]
		}
	}
	if c.nprev == maxInputsPerTick {
		c.d.fail("inputs of more than %d connections in one chunk", maxInputsPerTick)
		return &c.prev[c.nprev-1]
	}
	if c.nprev == len(c.prev) {
		c.prev = append(c.prev, prevInput{})
	}
	p := &c.prev[c.nprev]
	c.nprev++
	*p = prevInput{conn: conn, in: p.in[:0]}
	for range c.size {
		p.in = append(p.in, 0)
	}
	return p
}

// gridded reads a value coded by gridded and returns its bits.
func (c *chunkReader) gridded(grid float32) uint32 {
	v, ok := ungridded(c.d.uvarint(), grid)
	if !ok {
		c.d.fail("a bad gridded value")
	}
	return math.Float32bits(v)
}
