package packet_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ghostwire/ghostwire/transport/packet"
)

func TestSeqBeforeAndChannelString(t *testing.T) {
	assert.Equal(t, "reliable", packet.Reliable.String())
	assert.Equal(t, "unreliable", packet.Unreliable.String())
	assert.True(t, packet.Seq(65535).Before(0), "wrap")
	assert.False(t, packet.Seq(0).Before(65535))
	assert.True(t, packet.Seq(1).Before(2))
}
