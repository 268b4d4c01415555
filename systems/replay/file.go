package replay

import (
	"bufio"
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
// is not an error (File.Truncated). Nothing in the file makes it
// allocate more than MaxChunk beyond what it keeps, and it never keeps
// more than MaxFile bytes.
func Open(r io.Reader) (*File, error) {
	br := bufio.NewReader(r)
	f := &File{}
	var head [4]byte
	if _, err := io.ReadFull(br, head[:]); err != nil || head != magic {
		return nil, &FormatError{Detail: "not a ghostwire replay (its first bytes are not GWRP)"}
	}
	f.Size = 4
	v, err := binary.ReadUvarint(br)
	if err != nil {
		return nil, &FormatError{Offset: f.Size, Detail: "no format version"}
	}
	if v != Version {
		return nil, &FormatError{Offset: f.Size, Detail: fmt.Sprintf("file format version %d; this build reads version %d", v, Version)}
	}
	f.Size += int64(uvarintLen(v))
	f.Header.Version = int(v)
	var buf []byte
	for n := 0; ; n++ {
		at := f.Size
		kind, p, size, err := readChunk(br, &buf)
		if err == io.EOF && n > 0 {
			return f, nil
		}
		if errors.Is(err, io.ErrUnexpectedEOF) && n > 0 {
			f.Truncated = true
			return f, nil
		}
		if err != nil {
			if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, &FormatError{Offset: at, Detail: "the file ends before its header"}
			}
			return nil, &FormatError{Offset: at, Detail: err.Error()}
		}
		f.Size += size
		if f.Size > MaxFile {
			return nil, &FormatError{Offset: at, Detail: fmt.Sprintf("more than %d bytes", MaxFile)}
		}
		if n == 0 {
			if kind != chunkHeader {
				return nil, &FormatError{Offset: at, Detail: fmt.Sprintf("the first chunk is of kind %d, not the header", kind)}
			}
			if err := f.Header.decode(p); err != nil {
				return nil, &FormatError{Offset: at, Detail: err.Error()}
			}
			continue
		}
		d := decoder{b: p}
		t := gw.Tick(d.int(1<<32 - 1))
		if d.err != nil {
			return nil, &FormatError{Offset: at, Detail: "a chunk without its tick"}
		}
		switch kind {
		case chunkTicks:
			f.ticks = append(f.ticks, ticksChunk{first: t, body: append([]byte(nil), d.b...)})
		case chunkKeyframe:
			f.keyframes = append(f.keyframes, Keyframe{Tick: t, State: append([]byte(nil), d.b...)})
		default:
			return nil, &FormatError{Offset: at, Detail: fmt.Sprintf("a chunk of unknown kind %d", kind)}
		}
	}
}

// readChunk reads one chunk into *buf (grown to at most MaxChunk): its
// kind, payload and size in the file. A file that ends inside the chunk
// gives io.ErrUnexpectedEOF, one that ends before it io.EOF.
func readChunk(br *bufio.Reader, buf *[]byte) (kind byte, p []byte, size int64, err error) {
	kind, err = br.ReadByte()
	if err != nil {
		return 0, nil, 0, io.EOF
	}
	n, err := binary.ReadUvarint(br)
	if err != nil {
		return 0, nil, 0, io.ErrUnexpectedEOF
	}
	if n > MaxChunk {
		return 0, nil, 0, fmt.Errorf("a chunk of %d bytes; at most %d", n, MaxChunk)
	}
	need := 1 + uvarintLen(n) + int(n) + 4
	if cap(*buf) < need {
		*buf = make([]byte, need)
	}
	b := (*buf)[:need]
	b[0] = kind
	binary.PutUvarint(b[1:], n)
	if _, err := io.ReadFull(br, b[1+uvarintLen(n):]); err != nil {
		return 0, nil, 0, io.ErrUnexpectedEOF
	}
	if crc32.Checksum(b[:need-4], castagnoli) != binary.LittleEndian.Uint32(b[need-4:]) {
		return 0, nil, 0, errors.New("a chunk whose checksum does not match: the file is damaged")
	}
	return kind, b[1+uvarintLen(n) : need-4], int64(need), nil
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
