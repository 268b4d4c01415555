package game

import (
	"testing"
	"time"

	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
)

// Under 10 % loss, duplication and reordering each way, every judged shot
// is confirmed to its shooter's client exactly once, in the order of the
// shots, and the hit markers match the server's hits.
func TestEveryVerdictIsConfirmedOnceInOrder(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration, cfg.Loss, cfg.Dup, cfg.Reorder = 4, 20*time.Second, 10, 10, 10
	m, r := run(t, cfg)
	byConn := m.Shots.Stats.ByConn
	var judged uint64
	for i, ps := range m.Players {
		cs := byConn[ownConn(t, m.Harness.Clients[i])]
		require.NotNil(t, cs, "client %d fired", i)
		judged += cs.Judged
		assert.Equal(t, cs.Judged, ps.Confirmations, "client %d: every verdict once", i)
		assert.Equal(t, cs.Hits, ps.ConfirmedHits, "client %d: its hit markers", i)
		assert.Zero(t, ps.ConfirmsOutOfOrder, "client %d", i)
		assert.Equal(t, cs.Hits, r.Clients[i].ConfirmedHits)
	}
	assert.Greater(t, judged, uint64(100))
	var dups uint64
	for _, c := range m.Harness.Clients {
		st := c.Stats()
		dups += st.ConfirmsDuplicate
		assert.Zero(t, st.ConfirmsMissed)
	}
	assert.Positive(t, dups, "the resent and duplicated copies were dropped")
	assert.Equal(t, judged, m.Harness.Server.Stats().Confirms)
	assert.Zero(t, m.Harness.Server.Stats().ConfirmsDropped)
}

// ownConn returns the connection of a client: the owner of its own player.
func ownConn(t *testing.T, c *systems.Client) components.ConnID {
	q := generic.NewFilter1[components.Ghost]().With(generic.T[components.InputHeader]()).Query(c.World().Arche())
	require.True(t, q.Next(), "the client has its player")
	owner := q.Get().Owner
	q.Close()
	return owner
}

// ackDropper loses every confirmation acknowledgement its client sends:
// it takes them out of the packets below the client's packet layer.
type ackDropper struct {
	transport.Conn
	buf []byte
}

func (a *ackDropper) Send(p []byte) error {
	out, ok := rewriteUnreliable(a.buf[:0], p, func(msg []byte) []byte {
		if t, err := protocol.PeekType(msg); err == nil && t == protocol.MsgConfirmAck {
			return nil
		}
		return msg
	})
	if !ok {
		return a.Conn.Send(p)
	}
	a.buf = out
	return a.Conn.Send(out)
}

// A client whose acknowledgements never arrive fills the server's queue of
// 256 verdicts: past it the oldest are given up and counted. The client
// still gets each verdict the resent window (the oldest 16) slid over,
// once and in order: the given-up ones and the last window.
func TestUnacknowledgedConfirmationsAreCapped(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Duration, cfg.Cheaters, cfg.Cheat, cfg.Loss = 2, 30*time.Second, 1, CheatFireRate, 0
	cfg.Client = func(i int, spec *harness.ClientSpec) {
		if i == 1 {
			spec.Wrap = func(c transport.Conn) transport.Conn { return &ackDropper{Conn: c} }
		}
	}
	m, _ := run(t, cfg)
	st := m.Harness.Server.Stats()
	cs := m.Shots.Stats.ByConn[ownConn(t, m.Harness.Clients[1])]
	require.NotNil(t, cs)
	require.Greater(t, cs.Judged, uint64(300), "the rapid fire outruns the queue")
	assert.Equal(t, cs.Judged-256, st.ConfirmsDropped, "all but the newest 256 were given up")
	assert.Equal(t, st.ConfirmsDropped+protocol.MaxConfirms, m.Players[1].Confirmations)
	assert.Zero(t, m.Players[1].ConfirmsOutOfOrder)
	assert.Zero(t, m.Harness.Clients[1].Stats().ConfirmsMissed)
}
