package metrics_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/testgame"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/metrics"
	"github.com/ghostwire/ghostwire/systems/rooms"
	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/udp"
	"github.com/ghostwire/ghostwire/transport/udp/tokens"
)

// sources runs two rooms (no clients) until both have updated, and a
// token service that issued one token and refused one request.
func sources(t *testing.T) metrics.Sources {
	t.Helper()
	schema, err := testgame.NewSchema()
	require.NoError(t, err)
	ln, err := transport.NewMemoryNetwork(gw.NewRealTime(), 1).Listen("rooms")
	require.NoError(t, err)
	m, err := rooms.New(rooms.Options{Listener: ln, EmptyFor: -1,
		NewRoom: func(string) (*systems.Game, systems.ServerOptions, error) {
			return schema.Game(), systems.ServerOptions{}, nil
		}})
	require.NoError(t, err)
	require.NoError(t, m.Open("a"))
	require.NoError(t, m.Open("b"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	require.Eventually(t, func() bool {
		rs := m.Rooms()
		return len(rs) == 2 && rs[0].Ticks > 2 && rs[1].Ticks > 2
	}, 10*time.Second, 10*time.Millisecond)

	svc, err := tokens.New(tokens.Options{Key: [udp.KeySize]byte{1}, Secret: "a secret of sixteen+", PublicAddress: netip.MustParseAddrPort("203.0.113.1:7777")})
	require.NoError(t, err)
	for _, auth := range []string{"Bearer a secret of sixteen+", "Bearer wrong"} {
		req := httptest.NewRequest(http.MethodPost, "/token", strings.NewReader(`{"room":"a","identity":"p"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", auth)
		svc.ServeHTTP(httptest.NewRecorder(), req)
	}
	return metrics.Sources{Rooms: m, Tokens: svc}
}

// The collector's series are there, lint-clean, with the values the
// sources hold.
func TestCollectorSeries(t *testing.T) {
	c := metrics.NewCollector(sources(t))
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(c))
	problems, err := testutil.GatherAndLint(reg)
	require.NoError(t, err)
	assert.Empty(t, problems)
	for name, want := range map[string]int{
		"ghostwire_room_tick_seconds": 2, "ghostwire_room_ticks_behind": 2, "ghostwire_room_clients": 2,
		"ghostwire_room_held": 2, "ghostwire_room_reconnects_total": 2, "ghostwire_room_held_given_up_total": 2,
		"ghostwire_room_cpu_seconds_total": 2, "ghostwire_room_bytes_received_total": 2, "ghostwire_room_bytes_sent_total": 2,
		"ghostwire_room_dropped_total": 2, "ghostwire_rooms": 1, "ghostwire_rooms_max": 1, "ghostwire_rooms_opened_total": 1,
		"ghostwire_rooms_ended_total": 1, "ghostwire_connections_routed_total": 1, "ghostwire_connections_refused_total": 4,
		"ghostwire_token_requests_total": 9,
	} {
		assert.Equalf(t, want, testutil.CollectAndCount(c, name), "series of %s", name)
	}
	assert.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(`
# HELP ghostwire_rooms Rooms open.
# TYPE ghostwire_rooms gauge
ghostwire_rooms 2
# HELP ghostwire_token_requests_total Token requests, by result: issued, or the refusal's reason.
# TYPE ghostwire_token_requests_total counter
ghostwire_token_requests_total{result="content_type"} 0
ghostwire_token_requests_total{result="issued"} 1
ghostwire_token_requests_total{result="malformed"} 0
ghostwire_token_requests_total{result="method"} 0
ghostwire_token_requests_total{result="no_address"} 0
ghostwire_token_requests_total{result="rate_limited"} 0
ghostwire_token_requests_total{result="too_large"} 0
ghostwire_token_requests_total{result="unauthorized"} 1
ghostwire_token_requests_total{result="unknown_room"} 0
`), "ghostwire_rooms", "ghostwire_token_requests_total"))
}

// /metrics serves the text format with the rooms' histograms and Go's
// runtime; /healthz answers; /readyz follows SetReady; pprof is absent
// unless asked for.
func TestHandlerEndpoints(t *testing.T) {
	h := metrics.NewHandler(metrics.Options{Sources: sources(t)})
	srv := httptest.NewServer(h)
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get("/metrics")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, `ghostwire_room_tick_seconds_bucket{room="a",le="0.001"}`)
	assert.Contains(t, body, `ghostwire_room_clients{room="b"} 0`)
	assert.Contains(t, body, "go_goroutines")
	code, _ = get("/healthz")
	assert.Equal(t, http.StatusOK, code)
	code, _ = get("/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	h.SetReady(true)
	code, _ = get("/readyz")
	assert.Equal(t, http.StatusOK, code)
	code, _ = get("/debug/pprof/")
	assert.Equal(t, http.StatusNotFound, code, "pprof off by default")

	withPprof := httptest.NewServer(metrics.NewHandler(metrics.Options{Sources: metrics.Sources{}, Pprof: true}))
	defer withPprof.Close()
	resp, err := http.Get(withPprof.URL + "/debug/pprof/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

// pprof only on a loopback address.
func TestServeRefusesPprofOffLoopback(t *testing.T) {
	h := metrics.NewHandler(metrics.Options{Pprof: true})
	err := metrics.Serve(context.Background(), "0.0.0.0:0", h, true)
	assert.EqualError(t, err, `metrics: pprof on "0.0.0.0:0": only on a loopback address (127.0.0.1:port, [::1]:port)`)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.NoError(t, metrics.Serve(ctx, "127.0.0.1:0", h, true), "a loopback address serves until ctx ends")
}
