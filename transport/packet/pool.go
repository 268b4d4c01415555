package packet

// classSizes are the capacities of the buffers that hold reliable messages
// sent whole, on both ends. A message takes the smallest class that fits, so
// a buffer wastes at most 4× of its size below 256 bytes; caps count the
// class size, which makes them bound the memory actually retained.
var classSizes = [...]int{64, 256, maxSmallReliable}

// largeClass marks a buffer that belongs to no class: a fragmented message's
// own allocation on the sending end, or the reassembly buffer on the
// receiving end.
const largeClass = -1

// classOf returns the class of a message of n bytes, or largeClass when it is
// fragmented.
func classOf(n int) int {
	for i, s := range classSizes {
		if n <= s {
			return i
		}
	}
	return largeClass
}

// bufferPool keeps freed message buffers per class, so steady-state traffic
// reuses them instead of allocating. It retains at most the peak of what the
// caps let be held at once.
type bufferPool struct {
	free [len(classSizes)][][]byte
}

// get returns an empty buffer with the capacity of class.
func (p *bufferPool) get(class int) []byte {
	if k := len(p.free[class]); k > 0 {
		b := p.free[class][k-1]
		p.free[class] = p.free[class][:k-1]
		return b
	}
	return make([]byte, 0, classSizes[class])
}

// put returns a buffer taken with get(class).
func (p *bufferPool) put(class int, b []byte) {
	p.free[class] = append(p.free[class], b[:0])
}
