package packet_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/packet"
)

func TestOptionsValidate(t *testing.T) {
	require.NoError(t, packet.Options{}.Validate())
	for _, tc := range []struct {
		o    packet.Options
		want string
	}{
		{packet.Options{MaxMessageSize: 300000}, "packet: invalid Options.MaxMessageSize = 300000, want a value in [1, 261120]"},
		{packet.Options{MaxMessageSize: 100000, MaxQueuedBytes: 1000}, "packet: invalid Options.MaxQueuedBytes = 1000, want a value in [100000, 1073741824]"},
		{packet.Options{MaxReliablePending: 40000}, "packet: invalid Options.MaxReliablePending = 40000, want a value in [1, 32768]"},
		{packet.Options{MaxReceiveBytes: 10}, "packet: invalid Options.MaxReceiveBytes = 10, want a value in [1186, 1073741824]"},
		{packet.Options{SendBudget: -1}, "packet: invalid Options.SendBudget = -1, want a value in [0, 1073741824]"},
		{packet.Options{ReliableBytesPerFlush: -1}, "packet: invalid Options.ReliableBytesPerFlush = -1, want a value in [0, 1073741824]"},
		{packet.Options{AckInterval: -time.Second}, "packet: invalid Options.AckInterval = -1s, want a value in [0s, ∞)"},
	} {
		err := tc.o.Validate()
		require.ErrorIs(t, err, packet.ErrInvalidOptions)
		assert.Equal(t, tc.want, err.Error())
	}
	clock := &testClock{}
	raw, _, err := transport.NewMemoryNetwork(clock, 1).Pair(transport.Conditions{})
	require.NoError(t, err)
	_, err = packet.NewConn(raw, clock, packet.Options{SendBudget: -5})
	require.ErrorIs(t, err, packet.ErrInvalidOptions)
	assert.Panics(t, func() { _, _ = packet.NewConn(nil, clock, packet.Options{}) })
}
