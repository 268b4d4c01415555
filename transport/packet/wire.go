package packet

import (
	"encoding/binary"
	"errors"

	"github.com/ghostwire/ghostwire/transport"
)

// Wire constants; doc.go describes the layout they define.
const (
	// HeaderSize is the size in bytes of the header every packet starts with.
	HeaderSize = 9

	// FragmentSize is the payload size of every fragment of a fragmented
	// reliable message but the last, which carries 1 to FragmentSize bytes.
	FragmentSize = 1024

	// MaxFragments is the most fragments one message can have on the wire
	// (the count is one byte), so no Options.MaxMessageSize exceeds
	// MaxFragments × FragmentSize.
	MaxFragments = 255

	// MaxUnreliableSize is the largest unreliable message in bytes: one
	// datagram minus the packet header and the 3-byte entry header.
	// Unreliable messages are never fragmented.
	MaxUnreliableSize = transport.MaxDatagramSize - HeaderSize - unreliableOverhead

	// maxSmallReliable is the largest reliable message sent whole; larger
	// ones are fragmented.
	maxSmallReliable = transport.MaxDatagramSize - HeaderSize - reliableOverhead

	versionBits = 0x01 // low nibble of the first byte: protocol version 1
	flagAck     = 0x10 // the header's ack fields are valid

	unreliableOverhead = 3 // kind, length
	reliableOverhead   = 5 // kind, id, length (an unordered entry too)
	fragmentOverhead   = 7 // kind, id, index, count, length
)

// kind is the first byte of a message entry.
type kind uint8

const (
	kindUnreliable kind = 0
	kindReliable   kind = 1
	kindFragment   kind = 2
	kindUnordered  kind = 3
)

// Decoding errors. They are sentinels so a flood of malformed datagrams
// costs no allocation; Conn counts them in Stats.Malformed.
var (
	errShort    = errors.New("packet: datagram shorter than the header")
	errVersion  = errors.New("packet: unknown version or flags")
	errKind     = errors.New("packet: unknown message kind")
	errTrunc    = errors.New("packet: message entry runs past the datagram")
	errFragment = errors.New("packet: fragment index, count or length out of range")
)

// header is the fixed start of every packet.
type header struct {
	seq     Seq
	ack     Seq    // newest sequence received from the peer, when hasAck
	ackBits uint32 // bit i set: ack-1-i was received too
	hasAck  bool   // false until the sender has received a packet
}

// put writes h into b[:HeaderSize].
func (h header) put(b []byte) {
	b[0] = versionBits
	if h.hasAck {
		b[0] |= flagAck
	}
	binary.LittleEndian.PutUint16(b[1:], uint16(h.seq))
	binary.LittleEndian.PutUint16(b[3:], uint16(h.ack))
	binary.LittleEndian.PutUint32(b[5:], h.ackBits)
}

// parseHeader decodes the header of datagram b.
func parseHeader(b []byte) (header, error) {
	if len(b) < HeaderSize {
		return header{}, errShort
	}
	if b[0]&^flagAck != versionBits {
		return header{}, errVersion
	}
	h := header{
		seq:     Seq(binary.LittleEndian.Uint16(b[1:])),
		ack:     Seq(binary.LittleEndian.Uint16(b[3:])),
		ackBits: binary.LittleEndian.Uint32(b[5:]),
		hasAck:  b[0]&flagAck != 0,
	}
	if !h.hasAck && (h.ack != 0 || h.ackBits != 0) {
		return header{}, errVersion // one encoding per header keeps decode∘encode the identity
	}
	return h, nil
}

// entry is one message entry of a packet. data aliases the datagram.
type entry struct {
	kind  kind
	id    uint16 // reliable message id (reliable, fragment and unordered kinds)
	index uint8  // fragment index, < count
	count uint8  // fragment count, >= 2
	data  []byte
}

// size is the encoded size of e.
func (e entry) size() int {
	switch e.kind {
	case kindUnreliable:
		return unreliableOverhead + len(e.data)
	case kindReliable, kindUnordered:
		return reliableOverhead + len(e.data)
	default:
		return fragmentOverhead + len(e.data)
	}
}

// appendEntry appends the encoding of e to b. The caller has checked that
// e is well formed and fits.
func appendEntry(b []byte, e entry) []byte {
	b = append(b, byte(e.kind))
	switch e.kind {
	case kindReliable, kindUnordered:
		b = binary.LittleEndian.AppendUint16(b, e.id)
	case kindFragment:
		b = binary.LittleEndian.AppendUint16(b, e.id)
		b = append(b, e.index, e.count)
	}
	b = binary.LittleEndian.AppendUint16(b, uint16(len(e.data)))
	return append(b, e.data...)
}

// entryReader walks the message entries of a datagram whose header has been
// parsed. It allocates nothing.
type entryReader struct {
	b   []byte
	pos int
}

func newEntryReader(datagram []byte) entryReader {
	return entryReader{b: datagram, pos: HeaderSize}
}

// next decodes the next entry. It returns false and a nil error at the end
// of the datagram, and false and an error for a malformed entry.
func (r *entryReader) next() (entry, bool, error) {
	rest := r.b[r.pos:]
	if len(rest) == 0 {
		return entry{}, false, nil
	}
	e := entry{kind: kind(rest[0])}
	var fixed int
	switch e.kind {
	case kindUnreliable:
		fixed = unreliableOverhead
	case kindReliable, kindUnordered:
		fixed = reliableOverhead
	case kindFragment:
		fixed = fragmentOverhead
	default:
		return entry{}, false, errKind
	}
	if len(rest) < fixed {
		return entry{}, false, errTrunc
	}
	n := int(binary.LittleEndian.Uint16(rest[fixed-2:]))
	if len(rest) < fixed+n {
		return entry{}, false, errTrunc
	}
	e.data = rest[fixed : fixed+n : fixed+n]
	if e.kind != kindUnreliable {
		e.id = binary.LittleEndian.Uint16(rest[1:])
	}
	if e.kind == kindFragment {
		e.index, e.count = rest[3], rest[4]
		if !validFragment(e) {
			return entry{}, false, errFragment
		}
	}
	r.pos += fixed + n
	return e, true, nil
}

// validFragment checks a fragment's shape: at least two fragments, the index
// below the count, FragmentSize bytes in every fragment but the last, and
// 1 to FragmentSize bytes in the last.
func validFragment(e entry) bool {
	if e.count < 2 || e.index >= e.count {
		return false
	}
	if e.index < e.count-1 {
		return len(e.data) == FragmentSize
	}
	return len(e.data) >= 1 && len(e.data) <= FragmentSize
}

// validate parses a whole datagram and reports its first error, without
// acting on it.
func validate(datagram []byte) (header, error) {
	h, err := parseHeader(datagram)
	if err != nil {
		return header{}, err
	}
	r := newEntryReader(datagram)
	for {
		_, ok, err := r.next()
		if err != nil {
			return header{}, err
		}
		if !ok {
			return h, nil
		}
	}
}
