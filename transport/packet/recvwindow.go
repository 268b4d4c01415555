package packet

// verdict is what the receive window decides for one reliable entry of an
// arriving packet.
type verdict int

const (
	accept           verdict = iota
	duplicate                // already received: ignore, the packet stays acceptable
	outOfWindow              // refuse the packet
	receiveBytesFull         // refuse the packet
	fragmentCap              // refuse the packet
	fragmentRefused          // refuse the packet
	fragmentMismatch         // refuse the packet
)

// recvSlot holds one received reliable message until Receive returns it.
type recvSlot struct {
	present bool
	class   int // pool class of data, largeClass when data is the reassembly buffer
	data    []byte
}

// reassembly gathers the fragments of one message: always the next one
// missing, so one buffer is enough.
type reassembly struct {
	active   bool // fragments of id are being gathered
	complete bool // all arrived; the message sits in its slot until read
	id       uint16
	count    int
	got      bitset256
	gotN     int
	lastLen  int
	buf      []byte // grown once to the largest message allowed
}

// recvWindow is the reliable channel's receiving end. It accepts message ids
// in [deliverNext, deliverNext+reliableWindow) and hands them out in order.
type recvWindow struct {
	slots       [reliableWindow]recvSlot // indexed by id % reliableWindow
	deliverNext uint16                   // next id Receive returns
	recvNext    uint16                   // first id at or after deliverNext not yet received
	held        int                      // bytes of buffers in slots with a pool class
	maxHeld     int
	maxFrags    int
	asm         reassembly
	last        recvSlot // the message Receive returned last; freed on the next call
}

func (w *recvWindow) slot(id uint16) *recvSlot { return &w.slots[id%reliableWindow] }

// admission is the state of one packet's check: the bytes its earlier
// entries will hold out of order, and the id that would be next missing
// after them.
type admission struct {
	extra int
	next  uint16
}

func (w *recvWindow) begin() admission { return admission{next: w.recvNext} }

// admit decides whether entry e of an arriving packet can be stored, given
// the packet's earlier entries in a. It changes nothing but a.
//
// A message that continues the run of received ones (its id is next missing
// once the packet's earlier entries are in) is always admitted: Receive
// hands it out before it reads another datagram, so it never waits, and
// refusing it could lock out the very message later ones wait for. Only
// messages that must wait for a missing one count against maxHeld.
func (w *recvWindow) admit(e entry, a *admission) verdict {
	d := int16(e.id - w.deliverNext)
	switch {
	case d < 0:
		return duplicate
	case int(d) >= reliableWindow:
		return outOfWindow
	case w.slot(e.id).present:
		return duplicate
	}
	if e.kind == kindReliable {
		if e.id == a.next {
			w.skipReceived(a)
			return accept
		}
		c := classSizes[classOf(len(e.data))]
		if w.held+a.extra+c > w.maxHeld {
			return receiveBytesFull
		}
		a.extra += c
		return accept
	}
	asm := &w.asm
	switch {
	case int(e.count) > w.maxFrags:
		return fragmentCap
	case e.id != w.recvNext || asm.complete:
		// Receive hands out every deliverable message before it reads
		// the next datagram, so a complete reassembly has always been
		// delivered (its id is before recvNext) when this runs.
		return fragmentRefused
	case asm.active && asm.id == e.id && asm.count != int(e.count):
		return fragmentMismatch
	case asm.active && asm.id == e.id && asm.got.has(int(e.index)):
		return duplicate
	}
	if e.id == a.next && asm.active && asm.id == e.id && asm.gotN == asm.count-1 {
		w.skipReceived(a) // this fragment completes the message
	}
	return accept
}

// skipReceived moves a.next past itself and the messages already received
// after it.
func (w *recvWindow) skipReceived(a *admission) {
	a.next++
	for int(a.next-w.deliverNext) < reliableWindow && w.slot(a.next).present {
		a.next++
	}
}

// fresh reports whether an admitted entry still needs storing, now that the
// packet's earlier entries are stored: it is not a duplicate of one of them,
// and a misbehaving peer's self-contradicting fragments are skipped.
func (w *recvWindow) fresh(e entry) bool {
	if idBefore(e.id, w.deliverNext) || w.slot(e.id).present {
		return false
	}
	if e.kind == kindReliable {
		return true
	}
	asm := &w.asm
	if e.id != w.recvNext || asm.complete {
		return false
	}
	return !asm.active || asm.id != e.id || (asm.count == int(e.count) && !asm.got.has(int(e.index)))
}

// store keeps a reliable message sent whole; admit accepted it and fresh
// found it new.
func (w *recvWindow) store(e entry, pool *bufferPool) {
	class := classOf(len(e.data))
	*w.slot(e.id) = recvSlot{present: true, class: class, data: append(pool.get(class), e.data...)}
	w.held += classSizes[class]
	w.advance()
}

// storeFragment adds a fragment to the reassembly; admit accepted it and
// fresh found it new.
func (w *recvWindow) storeFragment(e entry) {
	a := &w.asm
	if !a.active || a.id != e.id {
		*a = reassembly{active: true, id: e.id, count: int(e.count), buf: a.buf}
		if a.buf == nil {
			a.buf = make([]byte, w.maxFrags*FragmentSize)
		}
	}
	a.got.set(int(e.index))
	a.gotN++
	copy(a.buf[int(e.index)*FragmentSize:], e.data)
	if int(e.index) == a.count-1 {
		a.lastLen = len(e.data)
	}
	if a.gotN == a.count {
		a.complete = true
		size := (a.count-1)*FragmentSize + a.lastLen
		*w.slot(a.id) = recvSlot{present: true, class: largeClass, data: a.buf[:size]}
		w.advance()
	}
}

// advance moves recvNext past the messages received contiguously, and drops
// a partial reassembly that a whole message of the same id overtook (only a
// misbehaving peer does that).
func (w *recvWindow) advance() {
	for int(w.recvNext-w.deliverNext) < reliableWindow && w.slot(w.recvNext).present {
		w.recvNext++
	}
	if w.asm.active && !w.asm.complete && idBefore(w.asm.id, w.recvNext) {
		w.asm.active = false
	}
}

// deliver returns the next message in order, if it has arrived. Its data
// stays valid until release.
func (w *recvWindow) deliver() ([]byte, bool) {
	s := w.slot(w.deliverNext)
	if !s.present {
		return nil, false
	}
	w.last = *s
	*s = recvSlot{}
	w.deliverNext++
	return w.last.data, true
}

// release frees the buffer of the message deliver returned last.
func (w *recvWindow) release(pool *bufferPool) {
	if !w.last.present {
		return
	}
	if w.last.class == largeClass {
		w.asm.active, w.asm.complete = false, false
	} else {
		pool.put(w.last.class, w.last.data)
		w.held -= classSizes[w.last.class]
	}
	w.last = recvSlot{}
}
