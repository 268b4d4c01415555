package udp

import (
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSourceKey(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"203.0.113.7", "203.0.113.7"},
		{"::ffff:203.0.113.7", "203.0.113.7"},
		{"2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::"},
		{"2001:db8:1:2::1", "2001:db8:1:2::"},
		{"fe80::1%eth0", "fe80::"},
	} {
		assert.Equal(t, netip.MustParseAddr(tc.b), sourceKey(netip.MustParseAddr(tc.a)), tc.a)
	}
	assert.NotEqual(t, sourceKey(netip.MustParseAddr("2001:db8:1:2::1")), sourceKey(netip.MustParseAddr("2001:db8:1:3::1")))
}

// Two IPv6 addresses of one /64 share one rate bucket: a host cannot
// multiply its budget by the 2⁶⁴ addresses it is given.
func TestAddressLimiterSharesAPrefix(t *testing.T) {
	l := newAddressLimiter(Rate{Packets: 10}, 4096)
	a, b := netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("2001:db8::ffff:2")
	for range 10 {
		require.True(t, l.allow(a, 1, 100))
	}
	assert.False(t, l.allow(b, 1, 100), "b is in a's /64: the bucket is empty")
	assert.True(t, l.allow(netip.MustParseAddr("2001:db8:0:1::1"), 1, 100), "another /64 has its own")
}

// The pending quota counts a /64 as one source.
func TestPendingQuotaKeysOnThePrefix(t *testing.T) {
	s, _, t0 := newTestServer(t, nil)
	params := testParams()
	for i := range DefaultMaxPendingPerIP + 5 {
		params.ClientID = uint64(500 + i)
		_, tok := makeTestToken(t, params)
		from := netip.AddrPortFrom(netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 15: byte(i + 1)}), 4000)
		s.receive(t0, from, appendRequest(nil, tok))
	}
	assert.Len(t, s.pending, DefaultMaxPendingPerIP)
	assert.Equal(t, uint64(5), s.stats.PendingAddressFull)
}

// An attacker holding 16 valid tokens fills a victim IP's pending quota
// with requests from spoofed ports, which it never answers (the challenges
// go to the victim). The honest client at that IP, retrying every 100 ms
// as a Client does, connects once the oldest squatter has waited
// PendingFairAge: under 0.7 s, where it waited for the squatters'
// handshake timeout (5 s) before. A displaced token is not admitted
// again, so the attacker cannot take the place back with it.
func TestSquattedSourceAdmitsTheHonestClient(t *testing.T) {
	s, w, t0 := newTestServer(t, nil)
	params := testParams()
	victim := netip.MustParseAddr("198.51.100.9")
	var squat [][]byte
	for i := range DefaultMaxPendingPerIP {
		params.ClientID = uint64(900 + i)
		_, tok := makeTestToken(t, params)
		squat = append(squat, appendRequest(nil, tok))
		s.receive(t0, netip.AddrPortFrom(victim, uint16(7000+i)), squat[i])
	}
	params.ClientID = 1
	honest := newFakeClient(t, netip.AddrPortFrom(victim, 5000), params)
	var at time.Duration
	for try := time.Duration(0); try < 6*time.Second; try += 100 * time.Millisecond {
		now := t0.Add(10*time.Millisecond + try)
		s.update(now)
		// The squatter re-sends every request each round, displaced or not.
		for i, r := range squat {
			s.receive(now, netip.AddrPortFrom(victim, uint16(7000+i)), r)
		}
		s.receive(now, honest.addr, honest.request())
		if sent := w.take(honest.addr); len(sent) > 0 {
			typ, body := honest.open(t, sent[0])
			require.Equal(t, byte(packetChallenge), typ)
			s.receive(now, honest.addr, honest.seal(packetResponse, body))
			require.NotNil(t, s.byAddr[honest.addr], "connected")
			at = 10*time.Millisecond + try
			break
		}
	}
	require.NotZero(t, at, "the honest client never connected")
	for i, r := range squat { // the squatter's next round
		s.receive(t0.Add(at+100*time.Millisecond), netip.AddrPortFrom(victim, uint16(7000+i)), r)
	}
	t.Logf("honest client connected after %v; %d displaced, %d refused as reused", at, s.stats.PendingDisplaced, s.stats.TokenReused)
	assert.Less(t, at, 700*time.Millisecond)
	assert.Equal(t, uint64(1), s.stats.PendingDisplaced)
	assert.Positive(t, s.stats.TokenReused, "the displaced token came back and was refused")
}

// A token that connected stays refused for its whole lifetime, whatever
// followed: 100,000 newer admissions recorded (more than the address
// history's ring holds) and it is still refused, from its address and
// from any other.
func TestSpentTokenRefusedAfterManyAdmissions(t *testing.T) {
	s, w, t0 := newTestServer(t, nil)
	params := testParams()
	fc := newFakeClient(t, addr(1), params)
	c := handshake(t, s, w, fc, t0)
	require.NoError(t, c.Close())
	w.take(fc.addr) // the disconnect packets
	unix := uint64(t0.Unix())
	for i := range 100_000 {
		var mac [macSize]byte
		mac[0], mac[1], mac[2], mac[15] = byte(i), byte(i>>8), byte(i>>16), 0xee
		s.history.add(mac, addr(10+i), unix+60, unix)
		require.True(t, s.spent.room(unix))
		s.spent.add(mac, unix+60)
	}
	before := s.stats.TokenReused
	s.receive(t0.Add(time.Second), fc.addr, fc.request())
	s.receive(t0.Add(time.Second), addr(2), fc.request())
	assert.Equal(t, before+2, s.stats.TokenReused)
	assert.Empty(t, w.take(fc.addr))
	assert.Empty(t, w.take(addr(2)))
}

// The record of spent tokens is capped: full of live tokens it refuses new
// handshakes, counted; once they expire it admits again.
func TestSpentTokensCap(t *testing.T) {
	s, w, t0 := newTestServer(t, func(o *Options) { o.SpentTokens = 3 })
	params := testParams()
	params.Expire = t0.Add(30 * time.Second)
	for i := range 3 {
		params.ClientID = uint64(i + 1)
		c := handshake(t, s, w, newFakeClient(t, addr(100+i), params), t0)
		require.NoError(t, c.Close())
	}
	params.ClientID = 4
	late := newFakeClient(t, addr(200), params)
	s.receive(t0, late.addr, late.request())
	assert.Equal(t, uint64(1), s.stats.SpentTokensFull)
	assert.Empty(t, w.take(late.addr))
	params.Create, params.Expire = t0.Add(time.Minute), t0.Add(2*time.Minute)
	params.ClientID = 5
	later := newFakeClient(t, addr(201), params)
	handshake(t, s, w, later, t0.Add(31*time.Second))
	assert.Len(t, s.spent.expire, 1, "the expired three were forgotten")
}
