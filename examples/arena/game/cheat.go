package game

import (
	"encoding/binary"
	"math"

	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/transport"
)

// The cheats a bot can play (-cheat); "all" deals them out in this order
// over the cheaters.
const (
	CheatNone      = ""
	CheatBacktrack = "backtrack" // claims a view BacktrackTicks older (and no interpolation delay), aiming at where targets stood then
	CheatOrigin    = "origin"    // fires at targets behind a wall from an origin forged 1.95 units away, past the wall
	CheatFireRate  = "firerate"  // fires every tick it sees a target
	CheatDeadshot  = "deadshot"  // keeps firing while it is dead
	CheatAll       = "all"
)

// cheats lists the cheats "all" deals out.
var cheats = [...]string{CheatBacktrack, CheatOrigin, CheatFireRate, CheatDeadshot}

// BacktrackTicks is how much older a view than the one it showed the
// backtracking cheat claims: 200 ms, inside the 750 ms window at the
// round trips the arena plays.
const BacktrackTicks = 12

// forgedOrigin is how far from its position the origin cheat fires from:
// inside MaxOriginError.
const forgedOrigin = 1.95

// validCheat reports whether c names a cheat or "all".
func validCheat(c string) bool {
	if c == CheatNone || c == CheatAll {
		return true
	}
	for _, k := range cheats {
		if k == c {
			return true
		}
	}
	return false
}

// cheatOf returns the cheat of client i: the last Cheaters clients cheat.
func (c Config) cheatOf(i int) string {
	k := i - (c.Clients - c.Cheaters)
	if k < 0 || c.Cheat == CheatNone {
		return CheatNone
	}
	if c.Cheat == CheatAll {
		return cheats[k%len(cheats)]
	}
	return c.Cheat
}

// backtrackConn is a backtracking cheater's end of the link: it rewrites
// every input batch it sends to claim a view BacktrackTicks older, shown
// with no interpolation delay. It sits below the client's packet layer, as
// a modified client would, and rewrites the unreliable message that holds
// the inputs (see rewriteUnreliable).
type backtrackConn struct {
	transport.Conn
	schema *codec.Schema
	batch  protocol.InputBatch
	buf    []byte
	msg    []byte
}

// Entry kinds and sizes of transport/packet's wire (its doc.go).
const (
	packetHeader     = 9
	entryUnreliable  = 0
	entryReliable    = 1
	entryFragment    = 2
	unreliableFixed  = 3 // kind, length
	reliableFixed    = 5 // kind, id, length
	fragmentFixed    = 7 // kind, id, index, count, length
	lengthFieldBytes = 2
)

// Send rewrites the input batches in p and sends the packet.
func (b *backtrackConn) Send(p []byte) error {
	out, ok := rewriteUnreliable(b.buf[:0], p, b.backtrack)
	if !ok {
		return b.Conn.Send(p) // not a packet it understands: as is
	}
	b.buf = out
	return b.Conn.Send(out)
}

// rewriteUnreliable appends to dst the packet p (transport/packet's wire:
// a 9-byte header, then per entry a kind byte, a reliable id or fragment
// fields, and a 2-byte little-endian length) with each unreliable message
// replaced by what edit returns for it: the message itself to keep it, nil
// to leave it out. It returns false when p does not parse.
func rewriteUnreliable(dst, p []byte, edit func(msg []byte) []byte) ([]byte, bool) {
	if len(p) < packetHeader {
		return dst, false
	}
	dst = append(dst, p[:packetHeader]...)
	rest := p[packetHeader:]
	for len(rest) > 0 {
		fixed := unreliableFixed
		switch rest[0] {
		case entryReliable:
			fixed = reliableFixed
		case entryFragment:
			fixed = fragmentFixed
		}
		if len(rest) < fixed {
			return dst, false
		}
		n := int(binary.LittleEndian.Uint16(rest[fixed-lengthFieldBytes:]))
		if len(rest) < fixed+n {
			return dst, false
		}
		data := rest[fixed : fixed+n]
		if rest[0] == entryUnreliable {
			data = edit(data)
		}
		if data != nil {
			dst = append(dst, rest[:fixed-lengthFieldBytes]...)
			dst = binary.LittleEndian.AppendUint16(dst, uint16(len(data)))
			dst = append(dst, data...)
		}
		rest = rest[fixed+n:]
	}
	return dst, true
}

// backtrack returns the input batch msg with every view moved
// BacktrackTicks into the past, and any other message as it is.
func (b *backtrackConn) backtrack(msg []byte) []byte {
	if t, err := protocol.PeekType(msg); err != nil || t != protocol.MsgInputs {
		return msg
	}
	if err := protocol.DecodeInputs(msg, b.schema, &b.batch); err != nil {
		return msg
	}
	for i := range b.batch.Heads {
		h := &b.batch.Heads[i]
		if h.HasView {
			h.ViewTick = h.ViewTick.Add(-BacktrackTicks)
			h.InterpolationDelay = 0
		}
	}
	b.msg = protocol.AppendInputs(b.msg[:0], b.schema, &b.batch)
	return b.msg
}

// forgeOrigin returns an origin up to forgedOrigin from me, on the far
// side of a wall from me, from which (tx, ty) is in line of sight: the
// corner the origin cheat shoots around.
func forgeOrigin(me Position, tx, ty float32) (Position, bool) {
	for _, r := range []float64{forgedOrigin, 1.5, 1} {
		for k := 0; k < 32; k++ {
			a := float64(k) * 2 * math.Pi / 32
			o := Position{X: me.X + float32(r*math.Cos(a)), Y: me.Y + float32(r*math.Sin(a))}
			if !LineOfSight(me.X, me.Y, o.X, o.Y) && LineOfSight(o.X, o.Y, tx, ty) {
				return o, true
			}
		}
	}
	return Position{}, false
}

// nearestPillar returns the centre of the pillar nearest to p.
func nearestPillar(p Position) (float32, float32) {
	var bx, by float32
	best := float32(math.MaxFloat32)
	for _, w := range Walls {
		cx, cy := (w.Min[0]+w.Max[0])/2, (w.Min[1]+w.Max[1])/2
		if d := length(cx-p.X, cy-p.Y); d < best {
			best, bx, by = d, cx, cy
		}
	}
	return bx, by
}
