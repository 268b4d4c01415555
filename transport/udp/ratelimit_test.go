package udp

import (
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestBucketPacketsAndBytes(t *testing.T) {
	r := Rate{Packets: 10, Bytes: 1000, Burst: 2}
	var b bucket
	now := int64(time.Second)
	n := 0
	for b.allow(&r, now, 100) {
		n++
	}
	assert.Equal(t, 20, n, "a full bucket holds Burst seconds: 2000 bytes in 100-byte packets")
	assert.False(t, b.allow(&r, now+int64(50*time.Millisecond), 100), "half a packet's worth of bytes refilled")
	assert.True(t, b.allow(&r, now+int64(100*time.Millisecond), 100), "100 bytes refilled")
	assert.False(t, b.allow(&r, now+int64(time.Hour), 2001), "never more than the burst")
}

func TestBucketDisabledHalves(t *testing.T) {
	var b bucket
	r := Rate{Packets: 1}
	assert.True(t, b.allow(&r, 1, 1<<20), "bytes unlimited")
	assert.False(t, b.allow(&r, 1, 1))
	l := newAddressLimiter(Rate{Packets: -1, Bytes: -1}, 1)
	for range 1000 {
		assert.True(t, l.allow(netip.MustParseAddr("10.0.0.1"), 1, 1200))
	}
}

func TestAddressLimiterPerIP(t *testing.T) {
	l := newAddressLimiter(Rate{Packets: 5}, 1024)
	a := netip.MustParseAddr("10.0.0.1")
	b := a.Next()
	for l.slot(b) == l.slot(a) { // the hash key is random: step past a shared slot
		b = b.Next()
	}
	for range 5 {
		assert.True(t, l.allow(a, 1, 10))
	}
	assert.False(t, l.allow(a, 1, 10), "a's budget is spent")
	for range 5 {
		assert.True(t, l.allow(b, 1, 10), "b has its own")
	}
	assert.False(t, l.allow(netip.MustParseAddr("::ffff:10.0.0.1").Unmap(), 1, 10), "the same IP, however written")
}
