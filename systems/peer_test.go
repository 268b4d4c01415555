package systems_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/packet"
)

// peer is a hand-written endpoint on a raw connection, for tests that
// craft protocol messages: it speaks through the packet layer, as the
// endpoints do. Junk below the packet layer goes to the raw connection.
type peer struct {
	t  *testing.T
	pc *packet.Conn
}

func newPeer(t *testing.T, conn transport.Conn, clock transport.Clock) *peer {
	pc, err := packet.NewConn(conn, clock, packet.Options{})
	require.NoError(t, err)
	return &peer{t: t, pc: pc}
}

// send sends msg on the unreliable channel, in a packet of its own.
func (p *peer) send(msg []byte) {
	_, err := p.pc.SendUnreliable(msg)
	require.NoError(p.t, err)
	require.NoError(p.t, p.pc.Flush())
}

// receive returns the next unreliable message that has arrived, or false.
func (p *peer) receive() ([]byte, bool) {
	for {
		m, ok := p.pc.Receive()
		if !ok {
			return nil, false
		}
		if m.Channel == packet.Unreliable {
			return m.Data, true
		}
	}
}
