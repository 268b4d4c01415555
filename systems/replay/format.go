package replay

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Version is the file format this package writes and reads.
const Version = 1

// magic opens every file.
var magic = [4]byte{'G', 'W', 'R', 'P'}

// The kinds of chunk. A file is the magic, the format version (a
// uvarint), then chunks: a kind byte, the payload's length (a uvarint),
// the payload, and a CRC-32C (little endian) of the three.
const (
	chunkHeader   = 1 // the Header
	chunkTicks    = 2 // a second of ticks: the first tick, then records
	chunkKeyframe = 3 // a tick, then the replicated state after it
)

// The records of a ticks chunk.
const (
	recConnect    = 1 // conn, player
	recReconnect  = 2 // conn, old
	recDisconnect = 3 // conn
	recMessage    = 4 // conn, length, bytes
	recTick       = 5 // inputs (count), each: conn, flags, fields; the tick runs
	recHash       = 6 // 8 bytes: the state hash after the last tick
)

// The flags of an input record: which fields follow, each a change from
// the previous input of the same connection in the chunk (the first is
// compared with zero values).
const (
	inTick     = 1 << iota // svarint: the input's tick less the tick applied
	inHasView              // HasView (no field)
	inViewAge              // svarint: the tick applied less ViewTick
	inFraction             // uvarint: ViewFraction on its 1/256 grid, or its bits (see gridded)
	inDelay                // uvarint: InterpolationDelay on its 1/16 grid, or its bits
	inMaxAge               // svarint: MaxViewAge's bits, the same
	inAcked                // svarint: the tick applied less Acked
	inBytes                // a bitmap of the changed bytes, then those bytes
)

// Bounds every reader keeps, whatever a file says: nothing in a file makes
// the reader allocate more.
const (
	// MaxChunk bounds a chunk's payload.
	MaxChunk = 8 << 20
	// MaxConfig bounds the game's configuration bytes (Header.Config).
	MaxConfig = 64 << 10
	// MaxFile bounds the bytes Open reads.
	MaxFile = 1 << 30
	// maxInputSize bounds the input type's size a header may state.
	maxInputSize = 1024
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Header is what a file says of its match before the first tick.
type Header struct {
	// Version is the file's format version.
	Version int
	// SchemaHash is the hash of the schema it was recorded with
	// (netsync.Schema.Hash): a file replays only with the same schema.
	SchemaHash uint64
	// TickRate is the server's ticks per second.
	TickRate int
	// StartTick is the last tick run before the first one recorded.
	StartTick uint32
	// HashEvery is how many ticks apart the state hashes are;
	// KeyframeEvery how many the keyframes are.
	HashEvery, KeyframeEvery int
	// InputSize is the bytes of the input type's value.
	InputSize int
	// Config is the game's configuration and seed, as the game gave them
	// (RecorderOptions.Config): what it needs to build the same server.
	Config []byte
}

func (h *Header) append(b []byte) []byte {
	b = binary.LittleEndian.AppendUint64(b, h.SchemaHash)
	for _, v := range []int{h.TickRate, int(h.StartTick), h.HashEvery, h.KeyframeEvery, h.InputSize, len(h.Config)} {
		b = binary.AppendUvarint(b, uint64(v))
	}
	return append(b, h.Config...)
}

func (h *Header) decode(p []byte) error {
	d := decoder{b: p}
	h.SchemaHash = d.u64()
	h.TickRate = d.int(1000)
	h.StartTick = uint32(d.int(1<<32 - 1))
	h.HashEvery = d.int(1 << 20)
	h.KeyframeEvery = d.int(1 << 24)
	h.InputSize = d.int(maxInputSize)
	n := d.int(MaxConfig)
	h.Config = append([]byte(nil), d.bytes(n)...)
	if d.err == nil && (h.TickRate < 1 || h.HashEvery < 1 || h.KeyframeEvery < 1) {
		d.err = fmt.Errorf("tick rate %d, hash every %d, keyframe every %d ticks: each must be at least 1", h.TickRate, h.HashEvery, h.KeyframeEvery)
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%d bytes after the header", len(d.b))
	}
	if d.err != nil {
		return fmt.Errorf("replay: bad header: %w", d.err)
	}
	return nil
}

// appendChunk appends a chunk of kind with payload p to b.
func appendChunk(b []byte, kind byte, p []byte) []byte {
	start := len(b)
	b = append(b, kind)
	b = binary.AppendUvarint(b, uint64(len(p)))
	b = append(b, p...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
}

// decoder reads the fields of a payload; the first error sticks, and
// every read after it returns zero values.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("a bad uvarint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// svarint reads a varint: binary.AppendVarint's zigzag form of a uvarint.
func (d *decoder) svarint() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// int reads a uvarint of at most limit.
func (d *decoder) int(limit int) int {
	v := d.uvarint()
	if v > uint64(limit) {
		d.fail("%d outside 0..%d", v, limit)
		return 0
	}
	return int(v)
}

func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.fail("the payload ends early")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b) {
		d.fail("%d bytes wanted, %d left", n, len(d.b))
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

func (d *decoder) u32() uint32 {
	p := d.bytes(4)
	if p == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(p)
}

func (d *decoder) u64() uint64 {
	p := d.bytes(8)
	if p == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(p)
}
