package fleet_test

import (
	"context"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/systems/agones"
	"github.com/ghostwire/ghostwire/systems/agones/agonestest"
	"github.com/ghostwire/ghostwire/systems/fleet"
)

// The address to listen with comes from the sidecar, even one that starts
// after the game server; a port the game server does not have is an
// error once the context ends, naming it.
func TestAgonesAddress(t *testing.T) {
	clock := agonestest.NewClock()
	sidecar := agonestest.New(clock, "203.0.113.10", 7654, nil)
	web := httptest.NewServer(sidecar)
	defer web.Close()
	sdk, err := agones.New(agones.Options{BaseURL: web.URL, Clock: clock})
	require.NoError(t, err)
	sidecar.SetDown(true)
	got := make(chan netip.AddrPort, 1)
	go func() {
		a, err := fleet.AgonesAddress(context.Background(), sdk, "default")
		assert.NoError(t, err)
		got <- a
	}()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for start := clock.Now(); clock.Now().Sub(start) < 3*time.Second; <-tick.C {
		if clock.Waiting() > 0 {
			clock.Advance(100 * time.Millisecond) // the watch retries each second
		}
	}
	sidecar.SetDown(false)
	var a netip.AddrPort
	require.Eventually(t, func() bool {
		if clock.Waiting() > 0 {
			clock.Advance(100 * time.Millisecond)
		}
		select {
		case a = <-got:
			return true
		default:
			return false
		}
	}, 10*time.Second, time.Millisecond)
	assert.Equal(t, netip.MustParseAddrPort("203.0.113.10:7654"), a)

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = fleet.AgonesAddress(ctx, sdk, "game")
	assert.EqualError(t, err, `fleet: the game server (Scheduled) has no public address for port "game": context deadline exceeded`)
}
