package protocol

import (
	"fmt"
	"unsafe"

	"github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/bitstream"
	"github.com/ghostwire/ghostwire/internal/codec"
)

// GameHeader is the head of a game message (MsgGame): its type, the tick
// it refers to and, on the unreliable sequenced channel, its sequence.
// Every field falls on a byte boundary: the type at byte 2, the tick at
// bytes 3..6, the sequence at bytes 7..8 (little-endian), so a sender
// writes a message once and patches the sequence per connection.
type GameHeader struct {
	ID   codec.MessageID
	Tick ecs.Tick
	Seq  uint16 // the unreliable sequenced channel only
}

// GameSeqOffset is the byte offset of a sequenced message's sequence.
const GameSeqOffset = 7

// GameHeaderBytes returns the bytes of a game message's header on channel
// c: 7, or 9 with the sequence of the unreliable sequenced channel. With
// the packet layer's 9-byte header and 3-byte entry, a message whose
// fields take codec.MaxUnreliableMessageBytes fills a 1,200-byte datagram.
func GameHeaderBytes(c codec.Channel) int {
	if c == codec.ChannelSequenced {
		return 9
	}
	return 7
}

// Refusal says why a receiver refuses a game message; RefuseNone accepts
// it.
type Refusal uint8

// The refusals a header or its fields can earn; a receiver adds its own
// (a rate limit).
const (
	RefuseNone      Refusal = iota
	RefuseUnknown           // a type ID the schema lacks, or a type that does not travel this way
	RefuseMalformed         // a short or wrong header, fields that do not decode, trailing bits
	RefuseOversized         // fields longer than the type's MaxBytes
)

// AppendGame appends a game message packet to buf: h, then the fields of
// message type h.ID's value at p, coded by the type's description with st
// and w as scratch. It returns the extended buffer and the bytes the
// fields took (the count MaxBytes caps). It allocates nothing once buf
// and w's buffer have grown to the message's size. It panics on an
// unknown type ID: the endpoints look IDs up in the schema first.
func AppendGame(buf []byte, s *codec.Schema, st *codec.Stream, w *bitstream.Writer, h *GameHeader, p unsafe.Pointer) ([]byte, int) {
	m, ok := s.Message(h.ID)
	if !ok {
		panic(fmt.Sprintf("netsync: message type %d outside 0..%d", h.ID, s.NumMessages()-1))
	}
	begin(w, buf, MsgGame)
	w.WriteBits(uint64(h.ID), 8)
	w.WriteBits(uint64(h.Tick), 32)
	if m.Rules.Channel == codec.ChannelSequenced {
		w.WriteBits(uint64(h.Seq), 16)
	}
	start := w.BitLen()
	s.EncodeMessage(st, h.ID, w, p)
	return w.Bytes(), (w.BitLen() - start + 7) / 8
}

// ReadGameHeader reads the header of game message p into h and checks it
// against the schema for a receiver that is the server (toServer) or a
// client: an ID the schema lacks or a type that does not travel this way
// is RefuseUnknown, a short packet or another message type
// RefuseMalformed, fields longer than the type's MaxBytes
// RefuseOversized (told by the packet's length alone, before any field
// is decoded). It returns the type with RefuseNone. It allocates nothing,
// so a flood of refused messages costs no garbage.
func ReadGameHeader(p []byte, s *codec.Schema, toServer bool, h *GameHeader) (*codec.MessageType, Refusal) {
	if len(p) < 3 || p[0] != ProtocolVersion || MsgType(p[1]) != MsgGame {
		return nil, RefuseMalformed
	}
	h.ID = codec.MessageID(p[2])
	m, ok := s.Message(h.ID)
	if !ok || !m.Rules.Direction.Allows(toServer) {
		return nil, RefuseUnknown
	}
	n := GameHeaderBytes(m.Rules.Channel)
	if len(p) < n {
		return nil, RefuseMalformed
	}
	h.Tick = ecs.Tick(uint32(p[3]) | uint32(p[4])<<8 | uint32(p[5])<<16 | uint32(p[6])<<24)
	h.Seq = 0
	if m.Rules.Channel == codec.ChannelSequenced {
		h.Seq = uint16(p[7]) | uint16(p[8])<<8
	}
	if len(p)-n > m.Rules.MaxBytes {
		return nil, RefuseOversized
	}
	return m, RefuseNone
}

// DecodeGameFields decodes the fields of game message p, whose header
// ReadGameHeader accepted into h, into dst: a value of the type, zeroed
// first, so what a handler sees depends on the wire alone. It refuses a
// field its description refuses and more than the last byte's padding
// after the fields; the error wraps one of the bitstream errors and names
// the field.
func DecodeGameFields(p []byte, s *codec.Schema, st *codec.Stream, r *bitstream.Reader, h *GameHeader, dst unsafe.Pointer) error {
	m, ok := s.Message(h.ID)
	if !ok {
		return fmt.Errorf("netsync: message type %d outside 0..%d: %w", h.ID, s.NumMessages()-1, bitstream.ErrOutOfRange)
	}
	clear(unsafe.Slice((*byte)(dst), m.Type().Size()))
	r.Reset(p[GameHeaderBytes(m.Rules.Channel):])
	if err := s.DecodeMessage(st, h.ID, r, dst); err != nil {
		return err
	}
	return end(r)
}
