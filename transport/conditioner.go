package transport

import (
	"math"
	"math/rand/v2"
	"strconv"
	"time"
)

// maxLinkDelay bounds LinkConfig.Latency and LinkConfig.Jitter. No game link
// is that slow, and the bound keeps delivery-time arithmetic far from
// overflow.
const maxLinkDelay = time.Hour

// reorderMinDelay is the least extra delay a reordered datagram gets, so that
// a datagram sent in the same instant right after it always overtakes it.
const reorderMinDelay = time.Millisecond

// LinkConfig describes one direction of a link. The zero value is a perfect
// link: no delay, no loss, no duplication, no reordering, no bandwidth
// limit.
//
// With a Bandwidth, a datagram first waits for the link to finish sending
// the ones before it, then takes len/Bandwidth seconds to send: it leaves
// at max(now, when the link is free) + len/Bandwidth, and the rest below
// counts from then, not from now. A burst of datagrams therefore delays
// the ones behind it, as a real link's queue does (lost datagrams spent
// their time on the link too). The queue holds at most the in-flight bound
// of datagrams (see NewMemoryNetwork); it has no byte bound.
//
// Each datagram is treated independently. It is lost with probability Loss.
// Otherwise its delivery time is now + Latency + a uniform draw from
// [-Jitter, +Jitter], never earlier than now. Unless it is reordered, it is
// also never delivered before an earlier datagram of the same direction
// (its delivery time is raised to the previous one), so jitter alone delays
// datagrams but does not reorder them. With probability Reorder it skips that
// rule and gets an extra delay uniform in [1ms, 1ms + Latency/2], so later
// datagrams can overtake it. With probability Duplicate a second copy is
// scheduled like an ordinary in-order datagram, with its own jitter.
type LinkConfig struct {
	Latency   time.Duration // one-way base delay, in [0, 1h]
	Jitter    time.Duration // half-width of the uniform delay noise, in [0, 1h]
	Loss      float64       // probability a datagram is lost, in [0, 1]
	Duplicate float64       // probability a delivered datagram arrives twice, in [0, 1]
	Reorder   float64       // probability a delivered datagram may be overtaken, in [0, 1]
	Bandwidth int           // bytes per second the link sends, in [0, 1e10]; 0 is unlimited
}

// maxBandwidth bounds LinkConfig.Bandwidth: beyond it a datagram takes less
// than a nanosecond to send.
const maxBandwidth int64 = 10_000_000_000

// validate returns nil when every field is in range, and otherwise an error
// matching errInvalidConfig that names the first bad field (prefix.Field),
// its value and the allowed range (NaN is never in range).
func (c LinkConfig) validate(prefix string) error {
	durations := [...]struct {
		name string
		v    time.Duration
	}{{"Latency", c.Latency}, {"Jitter", c.Jitter}}
	for _, d := range durations {
		if d.v < 0 || d.v > maxLinkDelay {
			return &configError{field: prefix + "." + d.name, value: d.v.String(),
				allowed: "[0s, " + maxLinkDelay.String() + "]"}
		}
	}
	fractions := [...]struct {
		name string
		v    float64
	}{{"Loss", c.Loss}, {"Duplicate", c.Duplicate}, {"Reorder", c.Reorder}}
	for _, f := range fractions {
		if math.IsNaN(f.v) || f.v < 0 || f.v > 1 {
			return &configError{field: prefix + "." + f.name,
				value: strconv.FormatFloat(f.v, 'g', -1, 64), allowed: "[0, 1]"}
		}
	}
	if c.Bandwidth < 0 || int64(c.Bandwidth) > maxBandwidth {
		return &configError{field: prefix + ".Bandwidth", value: strconv.Itoa(c.Bandwidth),
			allowed: "[0, " + strconv.FormatInt(maxBandwidth, 10) + "]"}
	}
	return nil
}

// Conditions are the two directions of a link. Up is client to server, Down
// is server to client. The zero value is a perfect link both ways.
type Conditions struct {
	Up   LinkConfig
	Down LinkConfig
}

// validate checks Up, then Down, and returns the first error, naming the
// field as Conditions.Up.X or Conditions.Down.X; it matches errInvalidConfig.
func (c Conditions) validate() error {
	if err := c.Up.validate("Conditions.Up"); err != nil {
		return err
	}
	return c.Down.validate("Conditions.Down")
}

// configError names the offending field so a bad table entry in a test or a
// config file can be found without a debugger.
type configError struct {
	field, value, allowed string
}

func (e *configError) Error() string {
	return "transport: invalid " + e.field + " = " + e.value + ", want a value in " + e.allowed
}

func (e *configError) Is(target error) bool { return target == errInvalidConfig }

// verdict is what the conditioner decided for one sent datagram.
type verdict struct {
	lost      bool
	at        time.Duration // delivery time of the datagram
	reordered bool
	dup       bool
	dupAt     time.Duration // delivery time of the extra copy
}

// conditioner applies one direction's LinkConfig. It owns its random source,
// so the draws of one direction of one link depend only on the network seed,
// the link's index and that direction's own traffic.
type conditioner struct {
	cfg  LinkConfig
	rng  *rand.Rand
	last time.Duration // delivery time of the latest in-order datagram
	free time.Duration // when the link has sent every datagram so far (Bandwidth)
}

func newConditioner(cfg LinkConfig, seed, stream uint64) conditioner {
	s1 := splitmix64(seed ^ splitmix64(stream))
	s2 := splitmix64(s1 ^ stream)
	return conditioner{cfg: cfg, rng: rand.New(rand.NewPCG(s1, s2))}
}

// decide draws the fate of a datagram of size bytes sent at now. It only
// draws for the effects that are enabled, so a perfect link costs no random
// numbers.
func (c *conditioner) decide(now time.Duration, size int) verdict {
	var v verdict
	now = c.send(now, size)
	if c.hit(c.cfg.Loss) {
		v.lost = true
		return v
	}
	v.at = c.delay(now)
	if c.hit(c.cfg.Reorder) {
		v.reordered = true
		v.at += reorderMinDelay + c.uniform(c.cfg.Latency/2)
	} else {
		v.at = c.inOrder(v.at)
	}
	if c.hit(c.cfg.Duplicate) {
		v.dup = true
		v.dupAt = c.inOrder(c.delay(now))
	}
	return v
}

// send returns when a datagram of size bytes handed to the link at now has
// left it, after the ones before it (Bandwidth); now without a bandwidth.
func (c *conditioner) send(now time.Duration, size int) time.Duration {
	if c.cfg.Bandwidth == 0 {
		return now
	}
	c.free = max(c.free, now) + time.Duration(int64(size)*int64(time.Second)/int64(c.cfg.Bandwidth))
	return c.free
}

func (c *conditioner) hit(p float64) bool { return p > 0 && c.rng.Float64() < p }

// uniform returns a duration uniform in [0, d].
func (c *conditioner) uniform(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(c.rng.Int64N(int64(d) + 1))
}

// delay returns now + Latency ± Jitter, clamped to now.
func (c *conditioner) delay(now time.Duration) time.Duration {
	at := now + c.cfg.Latency
	if c.cfg.Jitter > 0 {
		at += c.uniform(2*c.cfg.Jitter) - c.cfg.Jitter
	}
	return max(at, now)
}

// inOrder keeps FIFO order: a datagram is never due before the previous
// in-order datagram of this direction.
func (c *conditioner) inOrder(at time.Duration) time.Duration {
	at = max(at, c.last)
	c.last = at
	return at
}

// splitmix64 scrambles seeds so that neighbouring link indices give unrelated
// PCG states.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
