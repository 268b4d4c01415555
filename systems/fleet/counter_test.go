package fleet_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/systems/agones"
	"github.com/ghostwire/ghostwire/systems/fleet"
)

// A counter the fleet does not declare is left alone: the rooms run and
// the drain ends with Shutdown all the same, and no update is retried
// forever.
func TestUndeclaredCounterIsLeftAlone(t *testing.T) {
	f := newFixture(t, true, func(o *fleet.Options) { o.Counter = "matches" })
	f.run()
	f.until("Ready", 100*time.Millisecond, func() bool { return f.readyz() == http.StatusOK })
	require.NoError(t, f.srv.Rooms().Open("a"))
	f.srv.Drain()
	var r result
	f.until("the end", 100*time.Millisecond, func() bool {
		var ok bool
		r, ok = f.finished()
		return ok
	})
	require.NoError(t, r.err)
	assert.Equal(t, fleet.ReasonDrain, r.r.Reason)
	assert.Equal(t, 1, r.r.Finished)
	assert.Len(t, f.calls("/v1beta1/counters/matches"), 1, "refused once, never again")
	assert.Zero(t, r.r.CounterErrors)
	assert.Equal(t, agones.Counter{}, r.r.Counter)
	assert.Len(t, f.calls("/shutdown"), 1)
}
