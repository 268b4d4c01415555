package websocket

import (
	"testing"

	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/internal/conntest"
)

func TestConformance(t *testing.T) {
	conntest.Run(t, conntest.Harness{
		NewPair: func(t *testing.T) (transport.Conn, transport.Conn) {
			return pair(t, ListenerOptions{}, Options{})
		},
		Settle: func(t *testing.T, cond func() bool) { settle(t, cond) },
	})
}
