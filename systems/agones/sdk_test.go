package agones_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/systems/agones"
	"github.com/ghostwire/ghostwire/systems/agones/agonestest"
)

// fixture is a fake sidecar on loopback and an SDK talking to it, both on
// a fake clock.
type fixture struct {
	clock   *agonestest.Clock
	sidecar *agonestest.Sidecar
	server  *httptest.Server
	sdk     *agones.SDK
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{clock: agonestest.NewClock()}
	f.sidecar = agonestest.New(f.clock, "203.0.113.10", 7654, map[string]int64{"rooms": 16})
	f.server = httptest.NewServer(f.sidecar)
	t.Cleanup(f.server.Close)
	var err error
	f.sdk, err = agones.New(agones.Options{BaseURL: f.server.URL, Clock: f.clock})
	require.NoError(t, err)
	return f
}

// until spins (yielding, no sleep) until cond holds, advancing the fake
// clock by step whenever a goroutine waits on it; it fails after 10 s of
// real time.
func (f *fixture) until(t *testing.T, step time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "condition not met")
		if f.clock.Waiting() > 0 {
			f.clock.Advance(step)
		}
		runtime.Gosched()
	}
}

// calls returns the sidecar's answered calls to path.
func (f *fixture) calls(path string) []agonestest.Call {
	var out []agonestest.Call
	for _, c := range f.sidecar.Calls() {
		if c.Path == path {
			out = append(out, c)
		}
	}
	return out
}

// The sidecar starts after the game server: Ready, called as the server
// starts listening, retries through a 3 s outage and lands within a
// second of the sidecar coming up (backing off to 1 s at most).
func TestReadyRetriesUntilTheSidecarIsUp(t *testing.T) {
	f := newFixture(t)
	f.sidecar.SetDown(true)
	start := f.clock.Now()
	done := make(chan error, 1)
	go func() { done <- f.sdk.Ready(context.Background()) }()
	f.until(t, 100*time.Millisecond, func() bool { return f.clock.Now().Sub(start) >= 3*time.Second })
	f.sidecar.SetDown(false)
	up := f.clock.Now()
	var err error
	f.until(t, 100*time.Millisecond, func() bool {
		select {
		case err = <-done:
			return true
		default:
			return false
		}
	})
	require.NoError(t, err)
	ready := f.calls("/ready")
	require.Len(t, ready, 1)
	assert.LessOrEqual(t, ready[0].At.Sub(up), time.Second, "Ready within a second of the sidecar listening")
	assert.Equal(t, "Ready", f.sidecar.GameServer().Status.State)
	assert.Positive(t, f.sdk.Stats().Retries)
}

// A sidecar that never comes up: the call gives up after RetryFor,
// saying so.
func TestCallsGiveUpAfterRetryFor(t *testing.T) {
	f := newFixture(t)
	sdk, err := agones.New(agones.Options{BaseURL: f.server.URL, Clock: f.clock, RetryFor: 2 * time.Second})
	require.NoError(t, err)
	f.sidecar.SetDown(true)
	done := make(chan error, 1)
	go func() { done <- sdk.Allocate(context.Background()) }()
	f.until(t, 100*time.Millisecond, func() bool { return len(done) > 0 })
	err = <-done
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sidecar unreachable for 2s")
}

// Health pings come every half period, the first at once, and survive a
// 3 s outage: the failed ones are counted, the next after it lands.
func TestHealthEveryHalfPeriodThroughAnOutage(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	require.NoError(t, f.sdk.KeepHealthy(ctx, 2*time.Second))
	start := f.clock.Now()
	f.until(t, time.Second, func() bool { return f.clock.Now().Sub(start) >= 5*time.Second })
	f.sidecar.SetDown(true)
	f.until(t, time.Second, func() bool { return f.clock.Now().Sub(start) >= 8*time.Second })
	f.sidecar.SetDown(false)
	f.until(t, time.Second, func() bool { return f.clock.Now().Sub(start) >= 12*time.Second })
	pings := f.calls("/health")
	require.GreaterOrEqual(t, len(pings), 8)
	for i := 1; i < len(pings); i++ {
		gap := pings[i].At.Sub(pings[i-1].At)
		if across := pings[i-1].At.Sub(start) < 8*time.Second && pings[i].At.Sub(start) > 5*time.Second; !across {
			assert.LessOrEqualf(t, gap, time.Second, "ping %d", i)
		}
		assert.Equal(t, http.StatusOK, pings[i].Status)
	}
	assert.GreaterOrEqual(t, f.sdk.Stats().PingErr, uint64(2), "the pings of the outage failed, counted")
	assert.True(t, pings[len(pings)-1].At.Sub(start) >= 11*time.Second, "pinging goes on after the outage")
	assert.Error(t, f.sdk.KeepHealthy(ctx, 500*time.Millisecond))
}

// The rooms counter follows the rooms: +1 and −1 per room, a capacity
// below the count lowers the count, and a count outside the capacity is
// the sidecar's error.
func TestRoomsCounter(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for range 3 {
		_, err := f.sdk.AddCount(ctx, "rooms", 1)
		require.NoError(t, err)
	}
	c, err := f.sdk.AddCount(ctx, "rooms", -1)
	require.NoError(t, err)
	assert.Equal(t, agones.Counter{Count: 2, Capacity: 16}, c)
	c, err = f.sdk.SetCapacity(ctx, "rooms", 1)
	require.NoError(t, err)
	assert.Equal(t, agones.Counter{Count: 1, Capacity: 1}, c, "a capacity below the count lowers the count (in cluster)")
	c, err = f.sdk.SetCapacity(ctx, "rooms", 2)
	require.NoError(t, err)
	assert.Equal(t, agones.Counter{Count: 1, Capacity: 2}, c)
	c, err = f.sdk.AddCount(ctx, "rooms", 1)
	require.NoError(t, err)
	assert.Equal(t, agones.Counter{Count: 2, Capacity: 2}, c)
	_, err = f.sdk.AddCount(ctx, "rooms", 1)
	var e *agones.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, http.StatusInternalServerError, e.Status)
	assert.Equal(t, 2, e.Code)
	_, err = f.sdk.GetCounter(ctx, "players")
	require.ErrorAs(t, err, &e)
	assert.Contains(t, e.Message, "counter not found")
	got, err := f.sdk.Get(ctx)
	require.NoError(t, err)
	assert.Equal(t, agones.Counter{Count: 2, Capacity: 2}, got.Status.Counters["rooms"])
}

// Shutdown reaches the sidecar once, however often it is called.
func TestShutdownOnce(t *testing.T) {
	f := newFixture(t)
	for range 3 {
		require.NoError(t, f.sdk.Shutdown(context.Background()))
	}
	assert.Len(t, f.calls("/shutdown"), 1)
	assert.Equal(t, "Shutdown", f.sidecar.GameServer().Status.State)
}

// Watch learns the allocation and the public address, and reopens a
// stream the sidecar dropped.
func TestWatchLearnsAllocationAndAddress(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	seen := make(chan agones.GameServer, 64)
	go func() { _ = f.sdk.Watch(ctx, func(g agones.GameServer) { seen <- g }) }()
	defer cancel()
	first := <-seen
	addr, ok := first.PublicAddress("default")
	require.True(t, ok)
	assert.Equal(t, netip.MustParseAddrPort("203.0.113.10:7654"), addr)
	f.sidecar.Allocate()
	var g agones.GameServer
	f.until(t, time.Second, func() bool {
		select {
		case g = <-seen:
			return g.Status.State == "Allocated"
		default:
			return false
		}
	})
	assert.Equal(t, "Allocated", g.Status.State)
}

// Labels: a key Kubernetes refuses is an error before any call; a good
// one is stored under the SDK prefix.
func TestLabels(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	require.NoError(t, f.sdk.SetLabel(ctx, "map", "dust2"))
	require.NoError(t, f.sdk.SetAnnotation(ctx, "rooms", "3 of 16, free text allowed"))
	err := f.sdk.SetLabel(ctx, "bad key!", "x")
	assert.EqualError(t, err, `agones: label key "bad key!": character ' ' at 3 is not a letter, digit, '-', '_' or '.'`)
	assert.Error(t, f.sdk.SetLabel(ctx, "k", strings.Repeat("v", 64)))
	longest := strings.Repeat("k", agones.MaxLabelKey)
	require.NoError(t, f.sdk.SetLabel(ctx, longest, "v"))
	err = f.sdk.SetLabel(ctx, longest+"k", "v")
	assert.EqualError(t, err, `agones: label key "`+longest+`k": length 60 outside 1..59`, "too long once prefixed with sdk-")
	assert.Len(t, f.calls("/metadata/label"), 2, "refused labels never reach the sidecar")
	g := f.sidecar.GameServer()
	assert.Equal(t, "dust2", g.ObjectMeta.Labels["agones.dev/sdk-map"])
	assert.Equal(t, "v", g.ObjectMeta.Labels["agones.dev/sdk-"+longest])
	assert.Equal(t, "3 of 16, free text allowed", g.ObjectMeta.Annotations["agones.dev/sdk-rooms"])
}

// Bad options are refused, naming the value.
func TestNewRefusesBadOptions(t *testing.T) {
	_, err := agones.New(agones.Options{BaseURL: "localhost:9358"})
	assert.EqualError(t, err, `agones: BaseURL "localhost:9358" is not an http:// URL`)
	_, err = agones.New(agones.Options{RetryFor: time.Hour})
	assert.EqualError(t, err, "agones: RetryFor 1h0m0s outside 0..10m")
	t.Setenv("AGONES_SDK_HTTP_PORT", "99999")
	_, err = agones.New(agones.Options{})
	assert.EqualError(t, err, `agones: AGONES_SDK_HTTP_PORT "99999" is not a port (1..65535)`)
	sdk, err := agones.New(agones.Options{BaseURL: "http://127.0.0.1:9"})
	require.NoError(t, err)
	assert.Error(t, sdk.Reserve(context.Background(), 500*time.Millisecond))
	var e *agones.Error
	assert.False(t, errors.As(sdk.Reserve(context.Background(), 0), &e))
}
