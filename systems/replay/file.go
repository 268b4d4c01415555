package replay

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sort"

	gw "github.com/ghostwire/ghostwire/ecs"
)

// File is a recording read by [Open]: its header and its chunks, checked.
type File struct {
	Header Header
	// Size is the bytes read.
	Size int64
	// Truncated is true when the file ends inside a chunk (a recording
	// cut short by a crash): the chunks before it are read, the rest
	// dropped.
	Truncated bool
	ticks     []ticksChunk
	keyframes []Keyframe
}

// ticksChunk is a ticks chunk's payload after its first tick.
type ticksChunk struct {
	first gw.Tick
	body  []byte
}

// Keyframe is the replicated state of every ghost after one tick
// (systems.Server.AppendState's bytes).
type Keyframe struct {
	Tick  gw.Tick
	State []byte
}

// FormatError says a file is not a recording this package reads: another
// format version, not a recording at all, or damaged.
type FormatError struct {
	Offset int64 // where in the file
	Detail string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("replay: byte %d: %s", e.Offset, e.Detail)
}

// Open reads a recording from r: the version, the header and every
// complete chunk, each checked against its checksum. It errors with a
// *FormatError naming the version for a file of another format version,
// and for a damaged chunk (a checksum that does not match, a length past
// MaxChunk) or more than MaxFile bytes; a file that ends inside a chunk
// is not an error (File.Truncated). It never reads more than MaxFile
// bytes.
func Open(r io.Reader) (*File, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFile+1))
	if err != nil {
		return nil, fmt.Errorf("replay: reading the file: %w", err)
	}
	if len(data) > MaxFile {
		return nil, &FormatError{Offset: MaxFile, Detail: fmt.Sprintf("more than %d bytes", MaxFile)}
	}
	f := &File{}
	ps := parser{f: f}
	n, err := ps.feed(data)
	if err != nil {
		return nil, err
	}
	if ps.stage < stageChunks {
		if ps.stage == stageMagic {
			return nil, &FormatError{Detail: "not a ghostwire replay (its first bytes are not GWRP)"}
		}
		return nil, &FormatError{Offset: ps.off, Detail: "the file ends before its header"}
	}
	f.Truncated = n < len(data)
	return f, nil
}

// The stages of a parser.
const (
	stageMagic  = iota // the magic and the version come next
	stageHeader        // the header chunk
	stageChunks        // the ticks and keyframes
)

// parser reads a recording's bytes into a File as they come.
type parser struct {
	f     *File
	off   int64 // the bytes consumed
	stage int
}

// feed parses every complete item at the start of b into the file and
// returns the bytes it consumed: the rest is an incomplete item, for a
// later call with more bytes. err is a *FormatError.
func (ps *parser) feed(b []byte) (int, error) {
	n := 0
	for {
		rest := b[n:]
		if ps.stage == stageMagic {
			if len(rest) < len(magic)+1 {
				if !bytes.HasPrefix(magic[:], rest[:min(len(rest), len(magic))]) {
					return n, &FormatError{Detail: "not a ghostwire replay (its first bytes are not GWRP)"}
				}
				return n, nil
			}
			if [4]byte(rest[:4]) != magic {
				return n, &FormatError{Detail: "not a ghostwire replay (its first bytes are not GWRP)"}
			}
			v, k := binary.Uvarint(rest[4:])
			if k == 0 {
				return n, nil
			}
			if k < 0 || v != Version {
				return n, &FormatError{Offset: 4, Detail: fmt.Sprintf("file format version %d; this build reads version %d", v, Version)}
			}
			ps.f.Header.Version = int(v)
			ps.stage = stageHeader
			n += 4 + k
			ps.off += int64(4 + k)
			continue
		}
		if len(rest) == 0 {
			return n, nil
		}
		ln, k := binary.Uvarint(rest[1:])
		if k == 0 {
			return n, nil
		}
		if k < 0 || ln > MaxChunk {
			return n, &FormatError{Offset: ps.off, Detail: fmt.Sprintf("a chunk of %d bytes; at most %d", ln, MaxChunk)}
		}
		need := 1 + k + int(ln) + 4
		if len(rest) < need {
			return n, nil
		}
		c := rest[:need]
		if crc32.Checksum(c[:need-4], castagnoli) != binary.LittleEndian.Uint32(c[need-4:]) {
			return n, &FormatError{Offset: ps.off, Detail: "a chunk whose checksum does not match: the file is damaged"}
		}
		if err := ps.chunk(c[0], c[1+k:need-4]); err != nil {
			return n, &FormatError{Offset: ps.off, Detail: err.Error()}
		}
		n += need
		ps.off += int64(need)
		ps.f.Size = ps.off
	}
}

// chunk takes one checked chunk of kind with payload p.
func (ps *parser) chunk(kind byte, p []byte) error {
	if ps.stage == stageHeader {
		if kind != chunkHeader {
			return fmt.Errorf("the first chunk is of kind %d, not the header", kind)
		}
		if err := ps.f.Header.decode(p); err != nil {
			return err
		}
		ps.stage = stageChunks
		return nil
	}
	d := decoder{b: p}
	t := gw.Tick(d.int(1<<32 - 1))
	if d.err != nil {
		return errors.New("a chunk without its tick")
	}
	switch kind {
	case chunkTicks:
		ps.f.ticks = append(ps.f.ticks, ticksChunk{first: t, body: append([]byte(nil), d.b...)})
	case chunkKeyframe:
		ps.f.keyframes = append(ps.f.keyframes, Keyframe{Tick: t, State: append([]byte(nil), d.b...)})
	default:
		return fmt.Errorf("a chunk of unknown kind %d", kind)
	}
	return nil
}

func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// Ticks returns the first and last ticks the file records (first after
// last when it records none): the last is that of the last complete
// chunk.
func (f *File) Ticks() (first, last gw.Tick) {
	first = gw.Tick(f.Header.StartTick + 1)
	last = gw.Tick(f.Header.StartTick)
	if n := len(f.ticks); n > 0 {
		// The ticks of the last chunk: counted by walking it.
		c := f.ticks[n-1]
		last = c.first - 1
		var rd chunkReader
		rd.reset(c, f.Header.InputSize)
	walk:
		for {
			ev, err := rd.next()
			if err != nil || ev.kind == 0 {
				break
			}
			for range ev.inputs {
				if _, err := rd.input(); err != nil {
					break walk
				}
			}
			if ev.kind == recTick {
				last = rd.tick
			}
		}
	}
	return first, last
}

// Keyframes returns the keyframes, in tick order.
func (f *File) Keyframes() []Keyframe { return f.keyframes }

// KeyframeAt returns the newest keyframe at or before tick t; ok is false
// when there is none.
func (f *File) KeyframeAt(t gw.Tick) (k Keyframe, ok bool) {
	i := sort.Search(len(f.keyframes), func(i int) bool { return f.keyframes[i].Tick.After(t) })
	if i == 0 {
		return Keyframe{}, false
	}
	return f.keyframes[i-1], true
}
