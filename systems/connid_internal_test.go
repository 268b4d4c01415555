package systems

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ghostwire/ghostwire/components"
)

// Past 2^32 connections the counter wraps: it skips 0 and the IDs still in
// use.
func TestNewConnIDSkipsZeroAndLiveIDsAcrossTheWrap(t *testing.T) {
	s := &Server{nextConn: math.MaxUint32 - 2, conns: []*serverConn{{id: math.MaxUint32}, {id: 1}, {id: 3}}}
	var got []components.ConnID
	for range 3 {
		got = append(got, s.newConnID())
	}
	assert.Equal(t, []components.ConnID{math.MaxUint32 - 1, 2, 4}, got)
}
