package packet

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/transport"
)

type fakeClock struct{ now time.Duration }

func (c *fakeClock) Now() time.Duration { return c.now }

// hostile is a packet.Conn whose peer writes raw datagrams onto the link.
type hostile struct {
	t     testing.TB
	clock *fakeClock
	raw   transport.Conn // the attacker's end
	c     *Conn
	seq   Seq
}

func newHostile(t testing.TB, opts Options) *hostile {
	t.Helper()
	clock := &fakeClock{}
	raw, victim, err := transport.NewMemoryNetwork(clock, 1).Pair(transport.Conditions{})
	require.NoError(t, err)
	c, err := NewConn(victim, clock, opts)
	require.NoError(t, err)
	return &hostile{t: t, clock: clock, raw: raw, c: c}
}

// send writes one datagram with the next sequence and the given entries.
func (h *hostile) send(entries ...entry) {
	h.t.Helper()
	require.NoError(h.t, h.raw.Send(encode(header{seq: h.seq}, entries...)))
	h.seq++
}

// drain reads everything the victim has and returns the messages' data.
func (h *hostile) drain() [][]byte {
	var got [][]byte
	for {
		m, ok := h.c.Receive()
		if !ok {
			return got
		}
		got = append(got, bytes.Clone(m.Data))
	}
}

func reliable(id uint16, n int) entry {
	return entry{kind: kindReliable, id: id, data: bytes.Repeat([]byte{byte(id)}, n)}
}

func unordered(id uint16, n int) entry {
	return entry{kind: kindUnordered, id: id, data: bytes.Repeat([]byte{byte(id)}, n)}
}

// Unordered messages are handed out as their datagram is read, each id
// once: a copy in the same datagram, in a later one, or one so far behind
// the newest that an honest sender cannot have left it unacknowledged, is
// a duplicate. Nothing is held for them, whatever arrives.
func TestUnorderedMessagesOnceWithoutHolding(t *testing.T) {
	h := newHostile(t, Options{MaxReceiveBytes: maxSmallReliable})
	h.send(unordered(3, 10), unordered(3, 10), unordered(1, 10))
	h.send(unordered(1, 10), unordered(2, 10), unordered(300, 10))
	h.send(unordered(300-reliableWindow, 10), unordered(300-reliableWindow+1, 10), unordered(65535, 10))
	var ids []byte
	for _, m := range h.drain() {
		ids = append(ids, m[0])
	}
	assert.Equal(t, []byte{3, 1, 2, byte(300 % 256), byte((300 - reliableWindow + 1) % 256)}, ids)
	st := h.c.Stats()
	assert.Equal(t, uint64(5), st.UnorderedDelivered)
	assert.Equal(t, uint64(4), st.ReliableDuplicates, "3 again, 1 again, 44 and 65535 too far behind 300")
	assert.Zero(t, st.HeldBytes)
	assert.Zero(t, st.OutOfWindow+st.ReceiveBytesFull, "no cap applies: nothing waits")
}

func TestSeenWindowAcrossTheWrap(t *testing.T) {
	var w seenWindow
	for i := range 200_000 { // ids wrap three times; a few of each arrive twice
		id := uint16(i)
		require.True(t, w.first(id), "id %d", i)
		require.False(t, w.first(id), "id %d again", i)
		if i >= reliableWindow-1 {
			require.False(t, w.first(id-reliableWindow+1), "id %d, the oldest remembered", i)
			require.False(t, w.first(id-reliableWindow), "id %d, one too far behind", i)
		}
	}
	// Out of order within the window: each once.
	w = seenWindow{}
	perm := rand.New(rand.NewPCG(1, 2)).Perm(reliableWindow)
	for _, k := range perm {
		require.True(t, w.first(uint16(k)+65400), "id %d", k)
	}
	for _, k := range perm {
		require.False(t, w.first(uint16(k)+65400))
	}
}

func TestMalformedDuplicateAndStalePackets(t *testing.T) {
	h := newHostile(t, Options{})
	require.NoError(t, h.raw.Send([]byte("garbage that is no packet")))
	h.seq = 100
	h.send(entry{kind: kindUnreliable, data: []byte("a")})
	h.seq = 100
	h.send(entry{kind: kindUnreliable, data: []byte("a again")}) // same sequence
	h.seq = 60
	h.send(entry{kind: kindUnreliable, data: []byte("too old")}) // 40 behind the newest
	h.seq = 90
	h.send(entry{kind: kindUnreliable, data: []byte("late")}) // 10 behind: fine
	assert.Equal(t, [][]byte{[]byte("a"), []byte("late")}, h.drain())
	st := h.c.Stats()
	assert.Equal(t, uint64(1), st.Malformed)
	assert.Equal(t, uint64(1), st.DuplicatePackets)
	assert.Equal(t, uint64(1), st.StalePackets)
	assert.Equal(t, uint64(2), st.PacketsReceived)
	assert.Equal(t, uint64(5), st.DatagramsReceived)
	assert.Equal(t, recvAcks{newest: 100, bits: 1 << 9, any: true}, h.c.acks, "90 is bit 9 below 100")
}

func TestReliableWindowCaps(t *testing.T) {
	h := newHostile(t, Options{MaxReceiveBytes: 4 * maxSmallReliable})
	h.send(reliable(reliableWindow, 10)) // one past the window
	h.send(reliable(1, 10), reliable(2, 10))
	assert.Empty(t, h.drain(), "1 and 2 wait for 0")
	st := h.c.Stats()
	assert.Equal(t, uint64(1), st.OutOfWindow)
	assert.Equal(t, 2*classSizes[0], st.HeldBytes)
	assert.False(t, h.c.acks.bits&1 != 0 && h.c.acks.newest == 0, "the refused packet 0 is not acked")
	assert.Equal(t, Seq(1), h.c.acks.newest)

	// Filling the held bytes refuses the packet whole, with whatever else it carries.
	for id := uint16(3); id < 7; id++ {
		h.send(reliable(id, 1000), entry{kind: kindUnreliable, data: []byte("u")})
	}
	got := h.drain()
	st = h.c.Stats()
	assert.Equal(t, uint64(1), st.ReceiveBytesFull)
	assert.Len(t, got, 3, "the refused packet's unreliable message is dropped too")
	assert.LessOrEqual(t, st.HeldBytes, 4*maxSmallReliable)

	// The next message to deliver is always admitted, and frees the way.
	h.send(reliable(0, 10))
	got = h.drain()
	require.Len(t, got, 6, "0 to 5")
	for i, m := range got {
		assert.Equal(t, byte(i), m[0])
	}
	assert.Zero(t, h.c.Stats().HeldBytes, "the last Receive freed the last message")
}

func TestFragmentCaps(t *testing.T) {
	h := newHostile(t, Options{MaxMessageSize: 4 * FragmentSize})
	h.send(fragmentOf(0, 0, 5, FragmentSize)) // 5 fragments > 4 allowed
	h.send(fragmentOf(1, 0, 2, FragmentSize)) // not the next message missing
	h.send(fragmentOf(0, 0, 3, FragmentSize))
	h.send(fragmentOf(0, 1, 4, FragmentSize)) // disagrees on the count
	h.send(fragmentOf(0, 0, 3, FragmentSize)) // duplicate fragment
	h.send(fragmentOf(0, 2, 3, 5), fragmentOf(0, 1, 3, FragmentSize))
	got := h.drain()
	require.Len(t, got, 1)
	assert.Len(t, got[0], 2*FragmentSize+5)
	st := h.c.Stats()
	assert.Equal(t, uint64(1), st.FragmentCap)
	assert.Equal(t, uint64(1), st.FragmentRefused)
	assert.Equal(t, uint64(1), st.FragmentMismatch)
	assert.Equal(t, uint64(1), st.ReliableDuplicates)
	assert.Equal(t, uint64(3), st.FragmentsReceived)
	assert.Equal(t, 4*FragmentSize, st.ReassemblyBytes)
}

func TestFragmentFloodCannotGrowMemory(t *testing.T) {
	opts := Options{MaxReceiveBytes: 32 << 10}
	h := newHostile(t, opts)
	rng := rand.New(rand.NewPCG(1, 2))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for round := range 20000 {
		count := uint8(2 + rng.IntN(254))
		index := uint8(rng.IntN(int(count)))
		n := FragmentSize
		if index == count-1 {
			n = 1 + rng.IntN(FragmentSize)
		}
		id := uint16(rng.IntN(8)) // mostly near the next id, so many are reassembled or mismatch
		if round%3 == 0 {
			id = uint16(rng.Uint32())
		}
		e := fragmentOf(id, index, count, n)
		if round%5 == 0 {
			e = reliable(uint16(1+rng.IntN(reliableWindow-1)), 1+rng.IntN(maxSmallReliable))
		}
		h.seq = Seq(rng.Uint32()) // sequences all over, as an attacker would
		h.send(e)
		h.drain()
		st := h.c.Stats()
		require.LessOrEqual(t, st.ReassemblyBytes, 64*FragmentSize)
		require.LessOrEqual(t, st.HeldBytes, opts.MaxReceiveBytes+maxSmallReliable)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	st := h.c.Stats()
	assert.Positive(t, st.FragmentCap, "counts above 64 fragments")
	assert.Positive(t, st.FragmentRefused, "fragments of other messages")
	assert.Positive(t, st.FragmentMismatch, "counts that disagree")
	assert.Positive(t, st.ReceiveBytesFull, "held bytes at the cap")
	assert.Positive(t, st.OutOfWindow)
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	assert.Less(t, grown, int64(64*FragmentSize+opts.MaxReceiveBytes+(1<<20)),
		"heap growth stays within the caps plus the memory link's buffers")
}

// FuzzReceive feeds arbitrary datagrams to a Conn: the input is a list of
// datagrams, each prefixed by its length as a uint16. Nothing may panic,
// and the caps must hold after every datagram.
func FuzzReceive(f *testing.F) {
	frame := func(datagrams ...[]byte) []byte {
		var b []byte
		for _, d := range datagrams {
			b = binary.LittleEndian.AppendUint16(b, uint16(len(d)))
			b = append(b, d...)
		}
		return b
	}
	f.Add(frame(encode(header{seq: 1}, entry{kind: kindUnreliable, data: []byte("hi")})))
	f.Add(frame(
		encode(header{seq: 1, hasAck: true}, reliable(1, 3)),
		encode(header{seq: 2}, reliable(0, 3)),
		encode(header{seq: 2}, reliable(2, 3)),
	))
	f.Add(frame(
		encode(header{seq: 10}, fragmentOf(0, 0, 2, FragmentSize)),
		encode(header{seq: 11}, fragmentOf(0, 1, 3, 10)),
		encode(header{seq: 9}, fragmentOf(0, 1, 2, 10)),
	))
	f.Add(frame(encode(header{seq: 5}, fragmentOf(0, 0, 9, FragmentSize)), []byte{0x11}))
	f.Add(frame(encode(header{seq: 65535, ack: 0, ackBits: 0xffffffff, hasAck: true}, reliable(300, 1))))
	f.Add(frame(
		encode(header{seq: 1}, unordered(5, 3), unordered(5, 3)),
		encode(header{seq: 2}, unordered(40000, 3), unordered(4, 1)),
	))
	opts := Options{MaxMessageSize: 8 * FragmentSize, MaxReceiveBytes: 2 * maxSmallReliable, MaxReliablePending: 16}
	f.Fuzz(func(t *testing.T, input []byte) {
		h := newHostile(t, opts)
		require.NoError(t, h.c.SendReliable([]byte("so acks have something to ack")))
		require.NoError(t, h.c.Flush())
		for len(input) >= 2 {
			n := int(binary.LittleEndian.Uint16(input))
			input = input[2:]
			n = min(n, len(input), transport.MaxDatagramSize)
			if n > 0 {
				require.NoError(t, h.raw.Send(input[:n]))
			}
			input = input[n:]
			h.clock.now += time.Millisecond
			h.drain()
			require.NoError(t, h.c.Flush())
			st := h.c.Stats()
			require.LessOrEqual(t, st.HeldBytes, opts.MaxReceiveBytes+maxSmallReliable)
			require.LessOrEqual(t, st.ReassemblyBytes, 8*FragmentSize)
			require.LessOrEqual(t, int(h.c.window.recvNext-h.c.window.deliverNext), reliableWindow)
		}
	})
}

// A Conn keeps no record of sent packets before its first send: acks that
// arrive before then, forged ones included, acknowledge nothing.
func TestAcksBeforeTheFirstSendAcknowledgeNothing(t *testing.T) {
	h := newHostile(t, Options{})
	var acked []Seq
	h.c.opts.OnAck = func(s Seq) { acked = append(acked, s) }
	require.NoError(t, h.raw.Send(encode(header{seq: 0, hasAck: true, ack: 0, ackBits: ^uint32(0)},
		entry{kind: kindUnreliable, data: []byte{1}})))
	assert.Len(t, h.drain(), 1, "the message still arrives")
	assert.Nil(t, h.c.history, "nothing sent, nothing recorded")
	assert.False(t, h.c.Acked(0))
	assert.Empty(t, acked)
	assert.Zero(t, h.c.Stats().PacketsAcked)

	_, err := h.c.SendUnreliable([]byte{2})
	require.NoError(t, err)
	require.NoError(t, h.c.Flush())
	require.NoError(t, h.raw.Send(encode(header{seq: 1, hasAck: true, ack: 0}, entry{kind: kindUnreliable, data: []byte{3}})))
	h.drain()
	assert.True(t, h.c.Acked(0), "the first sent packet is acknowledged")
	assert.Equal(t, []Seq{0}, acked)
}
