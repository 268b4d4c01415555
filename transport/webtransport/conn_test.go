//go:build !js

package webtransport

import (
	"testing"

	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/internal/conntest"
)

// TestConformance runs the transport.Conn suite with quic-go's WebTransport
// client as the peer, over loopback.
func TestConformance(t *testing.T) {
	conntest.Run(t, conntest.Harness{
		NewPair: func(t *testing.T) (transport.Conn, transport.Conn) {
			return pair(t, ListenerOptions{Conn: fast}, fast)
		},
		Settle: func(t *testing.T, cond func() bool) { settle(t, cond) },
	})
}
