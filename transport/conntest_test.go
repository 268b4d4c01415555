package transport_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/internal/conntest"
)

// TestMemoryConformance runs the shared Conn conformance suite on memory
// links made both ways, with latency so that Settle has time to advance.
func TestMemoryConformance(t *testing.T) {
	slow := transport.Conditions{
		Up:   transport.LinkConfig{Latency: 5 * time.Millisecond},
		Down: transport.LinkConfig{Latency: 3 * time.Millisecond},
	}
	for _, m := range connMakers {
		t.Run(m.name, func(t *testing.T) {
			var clock *testClock
			conntest.Run(t, conntest.Harness{
				NewPair: func(t *testing.T) (transport.Conn, transport.Conn) {
					clock = &testClock{}
					client, server := m.make(t, transport.NewMemoryNetwork(clock, 1), slow)
					t.Cleanup(func() {
						_ = client.Close()
						_ = server.Close()
					})
					return client, server
				},
				Settle: func(t *testing.T, cond func() bool) {
					t.Helper()
					for range 1000 {
						if cond() {
							return
						}
						clock.Advance(time.Millisecond)
					}
					require.True(t, cond(), "condition not met within 1s of virtual time")
				},
			})
		})
	}
}
