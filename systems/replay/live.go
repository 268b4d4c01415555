package replay

import "errors"

// Live is a recording as it is written: give it to NewRecorder as its
// writer (beside a file: io.MultiWriter) and a [Player] follows the match
// while it runs, as far behind it as the caller keeps it (RunTo): a view
// of the match some seconds late, served from the recording and not from
// the live world, such as tournament spectators get. Every complete chunk
// is parsed and checked as it arrives; the recording is kept in memory
// (44 KB per player per minute in the arena).
//
// It is not safe for concurrent use: write and follow it from one
// goroutine (a room's).
type Live struct {
	f       File
	ps      parser
	pending []byte // the start of a chunk not complete yet
	err     error
}

// NewLive returns an empty live recording.
func NewLive() *Live {
	l := &Live{}
	l.ps.f = &l.f
	return l
}

// Write takes the recorder's next bytes and parses every chunk they
// complete. It returns the first *FormatError (a recorder of another
// format version, damaged bytes), and every later write returns it too.
func (l *Live) Write(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	b := p
	if len(l.pending) > 0 {
		l.pending = append(l.pending, p...)
		b = l.pending
	}
	n, err := l.ps.feed(b)
	if err != nil {
		l.err = err
		return 0, err
	}
	rest := b[n:]
	if len(rest) > MaxChunk+16 { // a chunk's length is checked as soon as it is read: never reached
		l.err = errors.New("replay: a chunk longer than MaxChunk")
		return 0, l.err
	}
	l.pending = append(l.pending[:0], rest...)
	return len(p), nil
}

// File returns the recording so far; it grows as chunks arrive. NewPlayer
// needs its header: the recorder writes it with the match's first change.
func (l *Live) File() *File { return &l.f }

// Started reports whether the header has arrived.
func (l *Live) Started() bool { return l.ps.stage == stageChunks }
