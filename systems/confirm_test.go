package systems_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/mlange-42/arche/ecs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
)

// A server confirms 3 shots a tick for each client's player through the
// public ConfirmShot, as a game's own judge would. The first client's
// acknowledgements never arrive, so the server's queue of 256 verdicts
// fills: past it the oldest are given up and counted, and that client
// still gets each verdict the resent window (the oldest 16) slid over,
// once and in order. The other client gets every verdict once, in order.
func TestUnacknowledgedConfirmationsAreCapped(t *testing.T) {
	g := newTestGame()
	opts := g.options(2, link(40*time.Millisecond, 0, 0))
	opts.Clients[0].Wrap = func(c transport.Conn) transport.Conn { return &ackDropper{Conn: c} }
	type verdict struct{ shot gw.Tick }
	got := make([][]verdict, 2)
	for i := range opts.Clients {
		opts.Clients[i].Options.OnConfirm = func(_ *gw.World, shot gw.Tick, hit bool, reason string, _ ecs.Entity, _ uint8) {
			require.True(t, hit)
			require.Equal(t, "hit", reason)
			got[i] = append(got[i], verdict{shot})
		}
	}
	var judged [2]int
	opts.SetupServer = func(s *systems.Server) error {
		s.Schedule().Add(gw.StageSimulation, gw.SystemFunc(func(w *gw.World) {
			for i, conn := range s.Conns() {
				if p, ok := s.Player(conn); ok && w.Tick()%5 == 0 {
					for range 3 {
						s.ConfirmShot(p, w.Tick(), true, "hit", p, 1)
						judged[i]++
					}
				}
			}
		}))
		return nil
	}
	h, err := harness.New(opts)
	require.NoError(t, err)
	h.Run(20 * time.Second)

	st := h.Server.Stats()
	require.Greater(t, judged[0], 300, "the shots outrun the queue")
	assert.Equal(t, uint64(judged[0]-256), st.ConfirmsDropped, "all but the newest 256 were given up")
	// A batch of 3 verdicts every 5 ticks, 20 ms one way: at most one
	// batch is still on its way when the run ends.
	window := int(st.ConfirmsDropped) + protocol.MaxConfirms
	assert.LessOrEqual(t, len(got[0]), window, "the given-up verdicts and the last window, no more")
	assert.GreaterOrEqual(t, len(got[0]), window-3, "the given-up verdicts and the last window")
	assert.Zero(t, h.Clients[0].Stats().ConfirmsMissed)
	assert.LessOrEqual(t, len(got[1]), judged[1])
	assert.GreaterOrEqual(t, len(got[1]), judged[1]-3, "the honest client got every verdict but those in flight")
	assert.Positive(t, h.Clients[1].Stats().Confirmations)
	for i := range got {
		for k := 1; k < len(got[i]); k++ {
			require.False(t, got[i][k].shot.Before(got[i][k-1].shot), "client %d: in order", i)
		}
	}
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

// Entry kinds and sizes of transport/packet's wire (its doc.go).
const (
	packetHeader     = 9
	entryUnreliable  = 0
	entryReliable    = 1
	entryFragment    = 2
	unreliableFixed  = 3 // kind, length
	reliableFixed    = 5 // kind, id, length
	fragmentFixed    = 7 // kind, id, index, count, length
	lengthFieldBytes = 2
)

// rewriteUnreliable appends to dst the packet p (transport/packet's wire:
// a 9-byte header, then per entry a kind byte, a reliable id or fragment
// fields, and a 2-byte little-endian length) with each unreliable message
// replaced by what edit returns for it: the message itself to keep it, nil
// to leave it out. It returns false when p does not parse.
func rewriteUnreliable(dst, p []byte, edit func(msg []byte) []byte) ([]byte, bool) {
	if len(p) < packetHeader {
		return dst, false
	}
	dst = append(dst, p[:packetHeader]...)
	rest := p[packetHeader:]
	for len(rest) > 0 {
		fixed := unreliableFixed
		switch rest[0] {
		case entryReliable:
			fixed = reliableFixed
		case entryFragment:
			fixed = fragmentFixed
		}
		if len(rest) < fixed {
			return dst, false
		}
		n := int(binary.LittleEndian.Uint16(rest[fixed-lengthFieldBytes:]))
		if len(rest) < fixed+n {
			return dst, false
		}
		data := rest[fixed : fixed+n]
		if rest[0] == entryUnreliable {
			data = edit(data)
		}
		if data != nil {
			dst = append(dst, rest[:fixed-lengthFieldBytes]...)
			dst = binary.LittleEndian.AppendUint16(dst, uint16(len(data)))
			dst = append(dst, data...)
		}
		rest = rest[fixed+n:]
	}
	return dst, true
}
