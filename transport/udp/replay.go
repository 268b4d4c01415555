package udp

// replaySize is the number of sequences the replay window remembers.
const replaySize = 256

// replayWindow rejects encrypted packets whose sequence was already received
// or is too old to tell. Only keep-alive, payload and disconnect packets go
// through it (types >= 4); challenge and denied packets use the server's
// global sequence, which would otherwise wreck the window.
type replayWindow struct {
	mostRecent uint64
	received   [replaySize]uint64
	valid      [replaySize / 64]uint64 // bit i: received[i] holds a sequence
}

// seen reports whether seq must be rejected: older than the window, or
// already received. The old-packet test is written subtraction-side, so
// sequences near 2^64-1 do not wrap (netcode errata).
func (w *replayWindow) seen(seq uint64) bool {
	if w.mostRecent >= replaySize && seq <= w.mostRecent-replaySize {
		return true
	}
	i := seq % replaySize
	if w.valid[i/64]&(1<<(i%64)) == 0 {
		return false
	}
	return w.received[i] >= seq
}

// advance records seq as received. Call it only after the packet
// authenticated.
func (w *replayWindow) advance(seq uint64) {
	if seq > w.mostRecent {
		w.mostRecent = seq
	}
	i := seq % replaySize
	w.received[i] = seq
	w.valid[i/64] |= 1 << (i % 64)
}
