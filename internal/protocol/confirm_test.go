package protocol_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/internal/protocol"
)

// Confirmations round-trip, across the sequence wrap.
func TestConfirmsRoundTrip(t *testing.T) {
	cs := []protocol.Confirm{
		{Seq: 1<<32 - 1, Shot: 7, Hit: true, Reason: protocol.ReasonCode("hit"), Target: 42, Part: 2},
		{Seq: 0, Shot: 1<<32 - 1, Reason: protocol.ReasonCode("not_visible")},
		{Seq: 1, Shot: 9, Reason: protocol.ReasonCode("a game's own")},
	}
	p := protocol.AppendConfirms(nil, cs)
	got, err := protocol.DecodeConfirms(p, nil)
	require.NoError(t, err)
	assert.Equal(t, cs, got)
	assert.Equal(t, "other", protocol.ReasonName(got[2].Reason))
	assert.Equal(t, "not_visible", protocol.ReasonName(got[1].Reason))
	next, err := protocol.DecodeConfirmAck(protocol.AppendConfirmAck(nil, 1<<32-1))
	require.NoError(t, err)
	assert.Equal(t, uint32(1<<32-1), next)
	assert.Panics(t, func() { protocol.AppendConfirms(nil, make([]protocol.Confirm, protocol.MaxConfirms+1)) })
	assert.Panics(t, func() { protocol.AppendConfirms(nil, []protocol.Confirm{{Seq: 1}, {Seq: 3}}) })
}

func FuzzDecodeConfirms(f *testing.F) {
	f.Add(protocol.AppendConfirms(nil, []protocol.Confirm{{Seq: 5, Shot: 9, Hit: true, Target: 3, Part: 1}}))
	full := make([]protocol.Confirm, protocol.MaxConfirms)
	for i := range full {
		full[i].Seq = uint32(i)
	}
	f.Add(protocol.AppendConfirms(nil, full))
	f.Add(protocol.AppendConfirmAck(nil, 12))
	f.Add([]byte{protocol.ProtocolVersion, byte(protocol.MsgConfirm), 0xff})
	f.Fuzz(func(t *testing.T, p []byte) {
		dst := make([]protocol.Confirm, 0, protocol.MaxConfirms)
		got, err := protocol.DecodeConfirms(p, dst)
		if err != nil {
			requireDecodeError(t, err)
			return
		}
		require.LessOrEqual(t, len(got), protocol.MaxConfirms)
		for _, c := range got {
			require.LessOrEqual(t, int(c.Reason), len(protocol.VerdictReasons))
		}
		again, err := protocol.DecodeConfirms(protocol.AppendConfirms(nil, got), nil)
		require.NoError(t, err)
		require.Equal(t, got, again)
		if _, err := protocol.DecodeConfirmAck(p); err != nil {
			requireDecodeError(t, err)
		}
	})
}
