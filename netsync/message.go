package netsync

import (
	"reflect"
	"unsafe"

	"github.com/ghostwire/ghostwire/internal/codec"
)

// MessageID is a message type's wire identity: its index in the [Schema].
type MessageID codec.MessageID

// Channel says how a message type travels (see docs/messages.md). The
// zero value is ReliableOrdered.
type Channel codec.Channel

const (
	// ReliableOrdered messages arrive exactly once, in the order sent, with
	// every other ordered message of the connection: chat, "round over".
	// One lost packet holds back the ordered messages after it until it is
	// resent, and a large one (fragmented) the ordered ones after it until
	// it has arrived.
	ReliableOrdered = Channel(codec.ChannelOrdered)
	// ReliableUnordered messages arrive exactly once, each as soon as its
	// packet does: a kill feed, a ready flag. One larger than one packet
	// (about 1,150 bytes) travels on the ordered channel, still once.
	ReliableUnordered = Channel(codec.ChannelUnordered)
	// Unreliable messages arrive at most once, maybe never, in any order:
	// a sound cue, a marker.
	Unreliable = Channel(codec.ChannelUnreliable)
	// UnreliableSequenced messages arrive at most once, and never one older
	// than a message of its type already delivered from that sender (the
	// latest wins): a cursor, a voice level.
	UnreliableSequenced = Channel(codec.ChannelSequenced)
)

// String returns "reliable-ordered", "reliable-unordered", "unreliable" or
// "unreliable-sequenced".
func (c Channel) String() string { return codec.Channel(c).String() }

// Direction says which way a message type may travel. The zero value is
// BothWays.
type Direction codec.Direction

const (
	BothWays = Direction(codec.BothWays) // from clients to the server and from the server to clients
	ToServer = Direction(codec.ToServer) // from clients to the server only
	ToClient = Direction(codec.ToClient) // from the server to clients only
)

// String returns "both ways", "to the server" or "to clients".
func (d Direction) String() string { return codec.Direction(d).String() }

// Limits of a message type's rules.
const (
	// MaxMessageBytes bounds MessageRules.MaxBytes.
	MaxMessageBytes = codec.MaxMessageBytes
	// MaxUnreliableMessageBytes bounds the MaxBytes of a type on an
	// unreliable channel: it rides one packet.
	MaxUnreliableMessageBytes = codec.MaxUnreliableMessageBytes
	// MaxMessageTypes bounds the message types of a schema.
	MaxMessageTypes = codec.MaxMessages
)

// MessageRules says how a message type travels and what a server accepts
// of it from each connection. The zero value is a reliable ordered type
// both ends may send, capped at the most its description encodes, at 10
// a second with a burst of 10.
type MessageRules struct {
	// Channel is the channel the type travels on.
	Channel Channel
	// Direction is which way the type may travel; a send the other way is
	// an error, and a server refuses such a type from a client as unknown.
	Direction Direction
	// MaxBytes caps the encoded fields of one message; a longer one is an
	// error to send and is refused as oversized by a server. 0 means the
	// most the Serialize description can encode (a Text field counted
	// full), which no honest message passes. Allowed: 0..MaxMessageBytes;
	// on an unreliable channel the cap, once the description's own
	// maximum is applied, must be at most MaxUnreliableMessageBytes.
	MaxBytes int
	// PerSecond and Burst are a token bucket, kept by the server per
	// connection and by each client for itself: PerSecond messages a
	// second on average, at most Burst at once. A client's send beyond it
	// is an error (systems.ErrMessageRate) and a server refuses a message
	// beyond it as over rate (counted; its bucket holds a second of
	// PerSecond more than Burst, for what the network does to an honest
	// client's spacing: docs/messages.md). 0 means 10 a second and a burst of
	// max(1, ⌈PerSecond⌉). Allowed: 0..10,000 a second, bursts of
	// 0..100,000.
	PerSecond float64
	Burst     int
}

// Message declares the message type T, whose pointer implements
// [Serializer], and returns its wire ID. A message is a game's own data
// sent once, not state kept in sync: chat, "round over", a kill feed, a
// lobby's ready flag. T is plain data, like a component; its Serialize
// method is its one description, and may code text or bytes with
// [Stream.Text] and [Stream.Bytes]. The type's rules, fields and name are
// part of the schema hash, so both ends agree on them. A type that is not
// plain data, a description that fails, a type declared twice, more than
// MaxMessageTypes types or rules out of range make Build fail naming the
// type. The systems package sends and handles messages
// (systems.SendToServer, systems.SendToClients, systems.Handle;
// docs/messages.md).
func Message[T any, PT interface {
	*T
	Serializer
}](b *SchemaBuilder, rules MessageRules) MessageID {
	return MessageID((*codec.SchemaBuilder)(b).AddMessage(reflect.TypeFor[T](), func(p unsafe.Pointer, s *codec.Stream) {
		PT((*T)(p)).Serialize((*Stream)(s))
	}, codec.MessageRules{Channel: codec.Channel(rules.Channel), Direction: codec.Direction(rules.Direction),
		MaxBytes: rules.MaxBytes, PerSecond: rules.PerSecond, Burst: rules.Burst}))
}
