package replay

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/testgame"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
)

// recorded is a match of the test game recorded to a file, with the
// server's state hash after every tick.
type recorded struct {
	file   []byte
	hashes map[gw.Tick]uint64
	last   gw.Tick
}

// record plays a match of the test game with n bots for d, over links of
// 100 ms and 5 % loss, recorded.
func record(t testing.TB, n int, d time.Duration, opts RecorderOptions) *recorded {
	t.Helper()
	s, err := testgame.NewSchema()
	require.NoError(t, err)
	var buf bytes.Buffer
	rec, err := NewRecorder(&buf, s.Game(), opts)
	require.NoError(t, err)
	var players []testgame.Player
	for i := range n {
		b := testgame.NewBot(uint64(i+1), gw.Tick(d.Seconds()*testgame.TickRate))
		players = append(players, testgame.Player{Link: testgame.Link(100*time.Millisecond, 10*time.Millisecond, 0.05),
			Input: systems.InputFunc(b.Input)})
	}
	ho := s.Options(7, players...)
	ho.Server.Recorder = rec
	h, err := harness.New(ho)
	require.NoError(t, err)
	r := &recorded{hashes: map[gw.Tick]uint64{}}
	prev := h.Server.World().Tick()
	for h.Time.Now() < d {
		h.Run(time.Millisecond)
		if tk := h.Server.World().Tick(); tk != prev {
			r.hashes[tk], prev = h.Server.StateHash(), tk
		}
	}
	r.last = prev
	require.NoError(t, rec.Close())
	r.file = buf.Bytes()
	return r
}

// build is the test game's Build.
func build(*Header) (*Setup, error) {
	s, err := testgame.NewSchema()
	if err != nil {
		return nil, err
	}
	return &Setup{Game: s.Game()}, nil
}

func TestReplayReproducesEveryHash(t *testing.T) {
	r := record(t, 4, 5*time.Second, RecorderOptions{})
	f, err := Open(bytes.NewReader(r.file))
	require.NoError(t, err)
	require.False(t, f.Truncated)
	p, err := NewPlayer(f, build)
	require.NoError(t, err)
	for {
		ran, err := p.Step()
		require.NoError(t, err)
		if !ran {
			break
		}
		require.Equal(t, r.hashes[p.Tick()], p.Server().StateHash(), "tick %d", p.Tick())
	}
	require.Equal(t, r.last, p.Tick())
	t.Logf("%d bytes, %d ticks, %d hashes checked", len(r.file), p.Tick(), p.Checked())
	require.EqualValues(t, len(r.hashes), p.Checked())
}

func TestFileOfAnotherSchemaIsRefused(t *testing.T) {
	r := record(t, 1, time.Second, RecorderOptions{})
	f, err := Open(bytes.NewReader(r.file))
	require.NoError(t, err)
	f.Header.SchemaHash ^= 1
	_, err = NewPlayer(f, build)
	var se *SchemaError
	require.ErrorAs(t, err, &se)
	require.Contains(t, err.Error(), "recorded with schema")
}

// flipFirstChangedInput flips a bit of the first input byte the file
// records as changed, in the chunk already checked (as if the checksum
// had been made again), and returns the tick of that input.
func flipFirstChangedInput(t *testing.T, f *File) gw.Tick {
	t.Helper()
	for ci, c := range f.ticks {
		var rd chunkReader
		rd.reset(c, f.Header.InputSize)
		for {
			ev, err := rd.next()
			require.NoError(t, err)
			if ev.kind == 0 {
				break
			}
			for range ev.inputs {
				d := rd.d
				d.int(1 << 32)
				flags := d.byte()
				if flags&inBytes != 0 {
					skip := 0
					for _, bit := range []byte{inTick, inViewAge, inFraction, inDelay, inMaxAge, inAcked} {
						if flags&bit != 0 {
							skip++
						}
					}
					for range skip {
						d.svarint()
					}
					d.bytes((rd.size + 7) / 8)
					require.NoError(t, d.err)
					at := len(c.body) - len(d.b)
					f.ticks[ci].body[at] ^= 1
					return rd.tick
				}
				_, err := rd.input()
				require.NoError(t, err)
			}
		}
	}
	t.Fatal("no input changed in the whole file")
	return 0
}

func TestFlippedInputByteNamesTheFirstDifferingTick(t *testing.T) {
	r := record(t, 4, 3*time.Second, RecorderOptions{})
	f, err := Open(bytes.NewReader(r.file))
	require.NoError(t, err)
	tick := flipFirstChangedInput(t, f)
	p, err := NewPlayer(f, build)
	require.NoError(t, err)
	err = p.Run()
	var me *MismatchError
	require.ErrorAs(t, err, &me)
	// Every tick before it was checked equal: it is the first to differ,
	// and not before the input flipped.
	require.False(t, me.Tick.Before(tick), "flipped at %d, differs at %d", tick, me.Tick)
	require.True(t, me.HasLastEqual)
	require.Equal(t, me.Tick-1, me.LastEqual)
	require.Equal(t, r.hashes[me.Tick], me.Recorded)
	require.NotEqual(t, me.Recorded, me.Replayed)
	require.Equal(t, me.Tick, p.Tick())
	require.ErrorIs(t, p.Run(), err, "a player stays at its first mismatch")
	require.Contains(t, err.Error(), "differs from the recording")
	t.Log(err)
}

func TestFlippedFileByteIsDamage(t *testing.T) {
	r := record(t, 2, 2*time.Second, RecorderOptions{})
	b := bytes.Clone(r.file)
	b[len(b)/2] ^= 0x10
	_, err := Open(bytes.NewReader(b))
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	require.Contains(t, err.Error(), "checksum does not match")
}

func TestTruncatedFileReplaysToItsLastCompleteSecond(t *testing.T) {
	r := record(t, 3, 4*time.Second, RecorderOptions{})
	whole, err := Open(bytes.NewReader(r.file))
	require.NoError(t, err)
	// Cut inside the last chunk: at most its second is lost.
	cut := r.file[:len(r.file)-10]
	f, err := Open(bytes.NewReader(cut))
	require.NoError(t, err)
	require.True(t, f.Truncated)
	_, lastWhole := whole.Ticks()
	_, last := f.Ticks()
	require.Less(t, int(lastWhole.Sub(last)), 2*testgame.TickRate)
	require.Greater(t, int(last), 2*testgame.TickRate)
	p, err := NewPlayer(f, build)
	require.NoError(t, err)
	require.NoError(t, p.Run())
	require.Equal(t, last, p.Tick())
	require.Equal(t, r.hashes[last], p.Server().StateHash())
	// Every cut of the file reads, up to its last complete chunk.
	for n := 16; n < len(r.file); n += 97 {
		f, err := Open(bytes.NewReader(r.file[:n]))
		if err != nil {
			continue // inside the header
		}
		_, last := f.Ticks()
		p, err := NewPlayer(f, build)
		require.NoError(t, err)
		require.NoError(t, p.Run(), "cut at %d", n)
		require.Equal(t, last, p.Tick())
	}
}

func TestFileOfAnotherVersionIsRefused(t *testing.T) {
	r := record(t, 1, time.Second, RecorderOptions{})
	b := bytes.Clone(r.file)
	b[4] = Version + 1
	_, err := Open(bytes.NewReader(b))
	require.ErrorContains(t, err, "file format version 2; this build reads version 1")
	_, err = Open(bytes.NewReader([]byte("not a replay")))
	require.ErrorContains(t, err, "not a ghostwire replay")
}

func TestSeekGivesTheStateOfPlayingFromTheStart(t *testing.T) {
	r := record(t, 4, 4*time.Second, RecorderOptions{})
	f, err := Open(bytes.NewReader(r.file))
	require.NoError(t, err)
	p, err := NewPlayer(f, build)
	require.NoError(t, err)
	first, last := f.Ticks()
	rng := rand.New(rand.NewPCG(3, 4))
	for range 40 {
		tick := first + gw.Tick(rng.IntN(int(last.Sub(first))+1))
		require.NoError(t, p.Seek(tick))
		require.Equal(t, tick, p.Tick())
		require.Equal(t, r.hashes[tick], p.Server().StateHash(), "tick %d", tick)
		if k, ok := f.KeyframeAt(tick); ok && k.Tick == tick {
			require.Equal(t, k.State, p.Server().AppendState(nil))
		}
	}
}

// A match recorded with the server's determinism check on replays with
// it off and on (Setup.Options.SyncTest): the check runs on the replay's
// ticks too, with the inputs the recording applied, and finds nothing.
func TestReplayRunsTheDeterminismCheck(t *testing.T) {
	s, err := testgame.NewSchema()
	require.NoError(t, err)
	var buf bytes.Buffer
	rec, err := NewRecorder(&buf, s.Game(), RecorderOptions{})
	require.NoError(t, err)
	var players []testgame.Player
	for i := range 3 {
		b := testgame.NewBot(uint64(i+1), 200)
		players = append(players, testgame.Player{Link: testgame.Link(100*time.Millisecond, 10*time.Millisecond, 0.05),
			Input: systems.InputFunc(b.Input)})
	}
	ho := s.Options(7, players...)
	ho.Server.Recorder, ho.Server.SyncTest = rec, 8
	h, err := harness.New(ho)
	require.NoError(t, err)
	h.Run(4 * time.Second)
	require.Zero(t, h.Server.Stats().Desyncs)
	require.NoError(t, rec.Close())
	for _, depth := range []int{0, 8} {
		f, err := Open(bytes.NewReader(buf.Bytes()))
		require.NoError(t, err)
		p, err := NewPlayer(f, func(*Header) (*Setup, error) {
			s, err := testgame.NewSchema()
			return &Setup{Game: s.Game(), Options: systems.ServerOptions{SyncTest: depth}}, err
		})
		require.NoError(t, err)
		require.NoError(t, p.Run())
		require.Equal(t, h.Server.World().Tick(), p.Tick())
		st := p.Server().Stats()
		require.Zero(t, st.Desyncs, "%v", st.FirstDesync)
		if depth > 0 {
			require.Positive(t, st.SyncTestChecks)
		}
	}
}

// A match recorded across the tick wrap (2³²) replays, seeks and names
// its keyframes.
func TestReplayAcrossTheTickWrap(t *testing.T) {
	s, err := testgame.NewSchema()
	require.NoError(t, err)
	var buf bytes.Buffer
	rec, err := NewRecorder(&buf, s.Game(), RecorderOptions{KeyframeEvery: 60})
	require.NoError(t, err)
	b := testgame.NewBot(1, 1<<31)
	ho := s.Options(3, testgame.Player{Link: testgame.Link(50*time.Millisecond, 0, 0.02), Input: systems.InputFunc(b.Input)})
	ho.Server.Recorder, ho.Server.StartTick = rec, gw.Tick(math.MaxUint32-100)
	h, err := harness.New(ho)
	require.NoError(t, err)
	h.Run(4 * time.Second)
	require.NoError(t, rec.Close())
	end := h.Server.World().Tick()
	require.Less(t, uint32(end), uint32(1000), "past the wrap")
	f, err := Open(&buf)
	require.NoError(t, err)
	first, last := f.Ticks()
	require.Equal(t, gw.Tick(math.MaxUint32-99), first)
	require.Equal(t, end, last)
	p, err := NewPlayer(f, func(*Header) (*Setup, error) {
		s, err := testgame.NewSchema()
		return &Setup{Game: s.Game()}, err
	})
	require.NoError(t, err)
	require.NoError(t, p.Run())
	require.Equal(t, end, p.Tick())
	require.Equal(t, h.Server.StateHash(), p.Server().StateHash())
	require.NoError(t, p.Seek(gw.Tick(math.MaxUint32-10)))
	require.Equal(t, gw.Tick(math.MaxUint32-10), p.Tick())
	k, ok := f.KeyframeAt(5)
	require.True(t, ok)
	require.True(t, k.Tick.After(gw.Tick(math.MaxUint32-100)), "a keyframe before the wrap is older than one after: %d", k.Tick)
}
