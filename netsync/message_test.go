package netsync_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/netsync"
)

// Say is a chat line: text in a fixed buffer with its length.
type Say struct {
	Text [64]byte
	Len  uint32
}

func (m *Say) Serialize(s *netsync.Stream) { s.Text(m.Text[:], &m.Len) }

// Label is a component that tries to hold text.
type Label struct {
	Text [16]byte
	Len  uint32
}

func (l *Label) Serialize(s *netsync.Stream) { s.Text(l.Text[:], &l.Len) }

// Message declares a type with its rules, which are part of the schema
// hash; a component may not code a variable number of bytes.
func TestMessageDeclaresATypeInTheSchema(t *testing.T) {
	build := func(rules netsync.MessageRules) (*netsync.Schema, netsync.MessageID) {
		var b netsync.SchemaBuilder
		netsync.Component[Position](&b)
		id := netsync.Message[Say](&b, rules)
		s, err := b.Build()
		require.NoError(t, err)
		return s, id
	}
	a, id := build(netsync.MessageRules{})
	assert.Equal(t, netsync.MessageID(0), id)
	b, _ := build(netsync.MessageRules{Channel: netsync.ReliableUnordered})
	assert.NotEqual(t, a, b)

	var sb netsync.SchemaBuilder
	netsync.Message[Say](&sb, netsync.MessageRules{Channel: netsync.Unreliable, MaxBytes: netsync.MaxUnreliableMessageBytes + 1})
	_, err := sb.Build()
	assert.NoError(t, err, "a cap above what the description encodes gives way to it: 65 bytes ride one packet")

	var cb netsync.SchemaBuilder
	netsync.Component[Label](&cb)
	_, err = cb.Build()
	assert.EqualError(t, err, "netsync: component netsync_test.Label: field Text codes a variable number of bytes, which only message types may (netsync.Message)")

	assert.Equal(t, "reliable-ordered", netsync.Channel(0).String())
	assert.Equal(t, "unreliable-sequenced", netsync.UnreliableSequenced.String())
	assert.Equal(t, "both ways", netsync.Direction(0).String())
	assert.Equal(t, "to the server", netsync.ToServer.String())
	assert.Equal(t, "to clients", netsync.ToClient.String())
}
