package metrics_test

import (
	"context"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/systems/metrics"
)

// ServeListener serves on the caller's listener, whose port the caller
// knows before serving, until ctx ends; pprof off loopback is refused and
// the listener closed.
func TestServeListener(t *testing.T) {
	wide, err := net.Listen("tcp", "0.0.0.0:0")
	require.NoError(t, err)
	err = metrics.ServeListener(context.Background(), wide, metrics.NewHandler(metrics.Options{Pprof: true}), true)
	assert.ErrorContains(t, err, "only on a loopback address")
	_, err = wide.Accept()
	assert.ErrorIs(t, err, net.ErrClosed, "the refused listener is closed")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- metrics.ServeListener(ctx, ln, metrics.NewHandler(metrics.Options{}), false) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	cancel()
	assert.NoError(t, <-done)
}
