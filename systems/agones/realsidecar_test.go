package agones_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/systems/agones"
	"github.com/ghostwire/ghostwire/systems/agones/agonestest"
)

// sidecarEnv names the base URL of a real sidecar; unset, the test skips,
// so CI (no network, no 140 s build) never needs one.
const sidecarEnv = "GHOSTWIRE_AGONES_SIDECAR"

// TestRealSidecar runs every SDK call against the real Agones sidecar in
// local mode, freshly started with testdata/gameserver.yaml (the test
// changes its state, so a second run needs a new sidecar):
//
//	systems/agones/testdata/run-real-sidecar.sh
func TestRealSidecar(t *testing.T) {
	base := os.Getenv(sidecarEnv)
	if base == "" {
		t.Skipf("%s unset: run systems/agones/testdata/run-real-sidecar.sh, which builds the Agones sidecar from source and sets it", sidecarEnv)
	}
	sidecarLife(t, base, agones.ObjectMeta{Name: "ghostwire-local", Labels: map[string]string{"fleet": "arena"}})
}

// The fake sidecar passes what the real one passed: where they differ, it
// is local mode that is laxer than in cluster, and sidecarLife asserts
// only what both do.
func TestFakeSidecarLivesAsTheRealOne(t *testing.T) {
	srv := httptest.NewServer(agonestest.New(nil, "203.0.113.10", 7654, map[string]int64{"rooms": 16}))
	defer srv.Close()
	sidecarLife(t, srv.URL, agones.ObjectMeta{Name: "gameserver-test"})
}

// sidecarLife runs every SDK call against the sidecar at base, whose game
// server is fresh: Scheduled at 203.0.113.10:7654 with rooms 0 of 16 and
// the name and labels of manifest. Local mode differs from in cluster
// where docs/operations.md says (label keys unvalidated, counter changes
// not watched, a count above a lowered capacity kept); the fake keeps the
// in-cluster contract.
func sidecarLife(t *testing.T, base string, manifest agones.ObjectMeta) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sdk, err := agones.New(agones.Options{BaseURL: base})
	require.NoError(t, err)

	// Every change of state the watch sees, in order.
	states := make(chan string, 64)
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go func() {
		last := ""
		_ = sdk.Watch(watchCtx, func(g agones.GameServer) {
			if g.Status.State != last {
				last = g.Status.State
				states <- last
			}
		})
	}()
	// watched waits for the watch to see state next, failing on any other
	// state first: the watch must see every transition, in order.
	watched := func(t *testing.T, next string) {
		t.Helper()
		select {
		case got := <-states:
			assert.Equal(t, next, got, "the watch's next state")
		case <-time.After(10 * time.Second):
			t.Fatalf("the watch did not see %s within 10 s", next)
		}
	}
	state := func(t *testing.T) string {
		t.Helper()
		g, err := sdk.Get(ctx)
		require.NoError(t, err)
		return g.Status.State
	}

	ok := t.Run("Get", func(t *testing.T) {
		g, err := sdk.Get(ctx)
		require.NoError(t, err)
		require.Equal(t, "Scheduled", g.Status.State, "a fresh sidecar (run-real-sidecar.sh starts one from testdata/gameserver.yaml)")
		assert.Equal(t, manifest.Name, g.ObjectMeta.Name)
		for k, v := range manifest.Labels {
			assert.Equal(t, v, g.ObjectMeta.Labels[k], "label %s of the manifest", k)
		}
		addr, ok := g.PublicAddress("default")
		require.True(t, ok)
		assert.Equal(t, netip.MustParseAddrPort("203.0.113.10:7654"), addr)
		assert.Equal(t, map[string]agones.Counter{"rooms": {Count: 0, Capacity: 16}}, g.Status.Counters)
	})
	require.True(t, ok, "the sidecar is not the fresh one the rest expects")

	t.Run("Watch first update", func(t *testing.T) { watched(t, "Scheduled") })

	t.Run("Ready", func(t *testing.T) {
		require.NoError(t, sdk.Ready(ctx))
		assert.Equal(t, "Ready", state(t))
		watched(t, "Ready")
	})

	t.Run("KeepHealthy", func(t *testing.T) {
		healthCtx, stop := context.WithCancel(ctx)
		defer stop()
		require.NoError(t, sdk.KeepHealthy(healthCtx, 2*time.Second))
		// A ping is counted as it starts and pings run one after another:
		// at 3 started, the first 2 have been answered.
		deadline := time.Now().Add(10 * time.Second)
		for sdk.Stats().Pings < 3 {
			require.True(t, time.Now().Before(deadline), "3 pings not started within 10 s at one a second")
			time.Sleep(20 * time.Millisecond) // polling the real sidecar process, which runs on wall time
		}
		assert.Zero(t, sdk.Stats().PingErr, "the sidecar took every ping")
	})

	t.Run("Counters", func(t *testing.T) {
		c, err := sdk.GetCounter(ctx, "rooms")
		require.NoError(t, err)
		assert.Equal(t, agones.Counter{Count: 0, Capacity: 16}, c)
		for _, step := range []struct {
			diff int64
			want agones.Counter
		}{{1, agones.Counter{Count: 1, Capacity: 16}}, {1, agones.Counter{Count: 2, Capacity: 16}}, {-1, agones.Counter{Count: 1, Capacity: 16}}} {
			c, err = sdk.AddCount(ctx, "rooms", step.diff)
			require.NoError(t, err)
			assert.Equal(t, step.want, c, "after %+d", step.diff)
		}
		c, err = sdk.SetCount(ctx, "rooms", 5)
		require.NoError(t, err)
		assert.Equal(t, agones.Counter{Count: 5, Capacity: 16}, c)
		c, err = sdk.SetCapacity(ctx, "rooms", 6)
		require.NoError(t, err)
		assert.Equal(t, agones.Counter{Count: 5, Capacity: 6}, c)

		var e *agones.Error
		_, err = sdk.AddCount(ctx, "rooms", 2)
		require.ErrorAs(t, err, &e, "count 7 of capacity 6")
		assert.Equal(t, http.StatusInternalServerError, e.Status)
		assert.Equal(t, 2, e.Code)
		assert.Contains(t, e.Message, "out of range")
		_, err = sdk.SetCount(ctx, "rooms", -1)
		require.ErrorAs(t, err, &e)
		assert.Equal(t, 2, e.Code)
		_, err = sdk.SetCapacity(ctx, "rooms", -1)
		require.ErrorAs(t, err, &e)
		assert.Equal(t, 2, e.Code)
		_, err = sdk.GetCounter(ctx, "players")
		require.ErrorAs(t, err, &e)
		assert.Equal(t, http.StatusInternalServerError, e.Status)
		assert.Contains(t, e.Message, "not found")

		g, err := sdk.Get(ctx)
		require.NoError(t, err)
		assert.Equal(t, agones.Counter{Count: 5, Capacity: 6}, g.Status.Counters["rooms"], "refused updates changed nothing")

		// A capacity below the count is taken; in cluster it lowers the
		// count to 4 (the fake does that), local mode keeps 5.
		c, err = sdk.SetCapacity(ctx, "rooms", 4)
		require.NoError(t, err)
		assert.Equal(t, int64(4), c.Capacity)
		_, err = sdk.SetCapacity(ctx, "rooms", 6)
		require.NoError(t, err)
		c, err = sdk.SetCount(ctx, "rooms", 5)
		require.NoError(t, err)
		assert.Equal(t, agones.Counter{Count: 5, Capacity: 6}, c)
	})

	t.Run("Labels and annotations", func(t *testing.T) {
		require.NoError(t, sdk.SetLabel(ctx, "map", "dust2"))
		require.NoError(t, sdk.SetAnnotation(ctx, "rooms", "5 of 6, free text allowed"))
		longest := strings.Repeat("k", agones.MaxLabelKey)
		require.NoError(t, sdk.SetLabel(ctx, longest, "v"))
		var e *agones.Error
		for _, key := range []string{"bad key!", longest + "k"} {
			err := sdk.SetLabel(ctx, key, "x")
			require.Error(t, err)
			assert.NotErrorAs(t, err, &e, "%q refused by the SDK, before the sidecar (local mode would store it)", key)
		}
		g, err := sdk.Get(ctx)
		require.NoError(t, err)
		assert.Equal(t, "dust2", g.ObjectMeta.Labels["agones.dev/sdk-map"])
		for k, v := range manifest.Labels {
			assert.Equal(t, v, g.ObjectMeta.Labels[k], "label %s of the manifest kept", k)
		}
		assert.Equal(t, "5 of 6, free text allowed", g.ObjectMeta.Annotations["agones.dev/sdk-rooms"])
		assert.Equal(t, "v", g.ObjectMeta.Labels["agones.dev/sdk-"+longest])
		assert.NotContains(t, g.ObjectMeta.Labels, "agones.dev/sdk-bad key!")
	})

	t.Run("Reserve", func(t *testing.T) {
		require.NoError(t, sdk.Reserve(ctx, 30*time.Second))
		assert.Equal(t, "Reserved", state(t))
		watched(t, "Reserved")
	})

	t.Run("Allocate", func(t *testing.T) {
		require.NoError(t, sdk.Allocate(ctx))
		assert.Equal(t, "Allocated", state(t))
		watched(t, "Allocated")
	})

	t.Run("Shutdown", func(t *testing.T) {
		require.NoError(t, sdk.Shutdown(ctx))
		assert.Equal(t, "Shutdown", state(t))
		watched(t, "Shutdown")
		require.NoError(t, sdk.Shutdown(ctx), "a second Shutdown returns the first's result")
	})
}
