package protocol

import (
	"fmt"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/bitstream"
)

// VerdictReasons are the reasons of lag compensation's verdicts
// (lagcomp.Reason), in the order of their wire codes; a confirmation
// carries a reason as its index here.
var VerdictReasons = [...]string{"hit", "outside_window", "occluded", "fire_rate", "origin_mismatch",
	"not_visible", "no_target", "view_implausible", "shooter_dead"}

// ReasonCode returns the wire code of a verdict reason: its index in
// VerdictReasons, or len(VerdictReasons) for a reason a game's own judge
// made up (the client sees it as "other").
func ReasonCode(reason string) uint8 {
	for i, r := range VerdictReasons {
		if r == reason {
			return uint8(i)
		}
	}
	return uint8(len(VerdictReasons))
}

// ReasonName returns the reason of a wire code: "other" for
// len(VerdictReasons).
func ReasonName(code uint8) string {
	if int(code) < len(VerdictReasons) {
		return VerdictReasons[code]
	}
	return "other"
}

// MaxConfirms is the most verdicts one confirmation packet carries.
const MaxConfirms = 16

// Confirm is one judged shot's verdict for the shooter's client.
type Confirm struct {
	Seq    uint32   // per connection, from 0 up, wrapping
	Shot   ecs.Tick // the input tick of the shot it answers
	Hit    bool
	Reason uint8              // wire code (ReasonCode)
	Target components.GhostID // the ghost hit (or the visible one a wall hid); 0: none
	Part   uint8
}

// AppendConfirms appends a confirmation packet of cs (consecutive
// sequence numbers, 1..MaxConfirms of them) to buf and returns the
// extended buffer, as append does. It panics otherwise: the server builds
// them, never the network.
func AppendConfirms(buf []byte, cs []Confirm) []byte {
	if len(cs) == 0 || len(cs) > MaxConfirms {
		panic(fmt.Sprintf("netsync: %d confirmations in a packet; want 1..%d", len(cs), MaxConfirms))
	}
	var w bitstream.Writer
	begin(&w, buf, MsgConfirm)
	w.WriteBits(uint64(cs[0].Seq), 32)
	w.WriteBits(uint64(len(cs)-1), 4)
	for i := range cs {
		c := &cs[i]
		if c.Seq != cs[0].Seq+uint32(i) {
			panic(fmt.Sprintf("netsync: confirmation %d has sequence %d, want %d", i, c.Seq, cs[0].Seq+uint32(i)))
		}
		w.WriteBits(uint64(c.Shot), 32)
		w.WriteBool(c.Hit)
		w.WriteBits(uint64(c.Reason), 5)
		w.WriteBits(uint64(c.Target), 32)
		w.WriteBits(uint64(c.Part), 8)
	}
	return w.Bytes()
}

// DecodeConfirms decodes a confirmation packet into dst (reused, up to
// MaxConfirms entries) and returns it. It refuses a reason code beyond
// "other"; on error dst's contents are unspecified.
func DecodeConfirms(p []byte, dst []Confirm) ([]Confirm, error) {
	var r bitstream.Reader
	if err := open(&r, p, MsgConfirm); err != nil {
		return dst[:0], err
	}
	seq, _ := r.ReadBits(32)
	n, _ := r.ReadBits(4)
	dst = dst[:0]
	for i := 0; i <= int(n); i++ {
		shot, _ := r.ReadBits(32)
		hit, _ := r.ReadBool()
		reason, _ := r.ReadBits(5)
		target, _ := r.ReadBits(32)
		part, err := r.ReadBits(8)
		if err != nil {
			return dst[:0], err
		}
		if reason > uint64(len(VerdictReasons)) {
			return dst[:0], fmt.Errorf("netsync: confirmation reason %d outside 0..%d: %w", reason, len(VerdictReasons), bitstream.ErrOutOfRange)
		}
		dst = append(dst, Confirm{Seq: uint32(seq) + uint32(i), Shot: ecs.Tick(shot), Hit: hit, Reason: uint8(reason),
			Target: components.GhostID(target), Part: uint8(part)})
	}
	if err := end(&r); err != nil {
		return dst[:0], err
	}
	return dst, nil
}

// AppendConfirmAck appends a confirmation acknowledgement to buf: every
// verdict before sequence number next arrived.
func AppendConfirmAck(buf []byte, next uint32) []byte {
	var w bitstream.Writer
	begin(&w, buf, MsgConfirmAck)
	w.WriteBits(uint64(next), 32)
	return w.Bytes()
}

// DecodeConfirmAck decodes a confirmation acknowledgement.
func DecodeConfirmAck(p []byte) (uint32, error) {
	var r bitstream.Reader
	if err := open(&r, p, MsgConfirmAck); err != nil {
		return 0, err
	}
	next, _ := r.ReadBits(32)
	if err := end(&r); err != nil {
		return 0, err
	}
	return uint32(next), nil
}
