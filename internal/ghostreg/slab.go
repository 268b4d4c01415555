package ghostreg

// slab hands out byte slices of one size, carved from chunks of
// slabChunk, and takes back those of ghosts that went: the rings of
// ghosts that start moving (see states and encodings) cost an allocation
// per chunk, not one or more per ghost, and a match that spawns and
// despawns for months reuses them.
type slab struct {
	size  int
	chunk []byte
	free  [][]byte
}

// slabChunk is how many slices a slab allocates at once.
const slabChunk = 64

// get returns a slice of the slab's size, its contents unspecified.
func (p *slab) get() []byte {
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free = p.free[:n-1]
		return b
	}
	if len(p.chunk) < p.size {
		p.chunk = make([]byte, slabChunk*p.size)
	}
	b := p.chunk[:p.size:p.size]
	p.chunk = p.chunk[p.size:]
	return b
}

// put takes back b, got from p, for a later get.
func (p *slab) put(b []byte) { p.free = append(p.free, b) }
