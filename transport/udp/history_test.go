package udp

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTokenHistoryEvicts(t *testing.T) {
	h := newTokenHistory(2)
	assert.False(t, h.add([16]byte{1}, addr(1), 100, 50))
	assert.False(t, h.add([16]byte{2}, addr(2), 40, 50), "expired entries are not counted")
	assert.False(t, h.add([16]byte{1}, addr(1), 100, 50), "already recorded")
	assert.False(t, h.check([16]byte{1}, addr(9)))
	assert.True(t, h.check([16]byte{1}, addr(1)))
	assert.True(t, h.add([16]byte{3}, addr(3), 100, 50), "the ring evicts live token 1")
	assert.True(t, h.check([16]byte{1}, addr(9)), "token 1 forgotten")
	assert.False(t, h.add([16]byte{4}, addr(4), 100, 50), "token 2 had expired")
	assert.True(t, h.add([16]byte{5}, addr(5), 100, 50), "token 3 was live")
	assert.Len(t, h.index, 2)
}
