package codec

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"unsafe"

	"github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/bitstream"
)

// MessageID is a message type's wire identity: its index in the [Schema].
type MessageID uint16

const (
	// MaxMessages bounds the message types of a schema: a message names
	// its type in one byte.
	MaxMessages = 256
	// MaxMessageBytes bounds the encoded fields of one message.
	MaxMessageBytes = 256_000
	// MaxUnreliableMessageBytes bounds the encoded fields of a message on
	// an unreliable channel, which rides one packet: a 1,200-byte datagram
	// less the packet layer's 9-byte header and 3-byte entry and the
	// message's own header of at most 9 bytes.
	MaxUnreliableMessageBytes = 1200 - 9 - 3 - 9
	// MaxMessagesPerSecond and MaxMessageBurst bound a message type's rate
	// limit.
	MaxMessagesPerSecond = 10_000
	MaxMessageBurst      = 100_000
	// DefaultMessagesPerSecond is a message type's rate limit when its
	// rules give none.
	DefaultMessagesPerSecond = 10
)

// Channel says how a message type travels.
type Channel uint8

// The channels.
const (
	ChannelOrdered    Channel = iota // reliable, in the order sent
	ChannelUnordered                 // reliable, each as soon as it arrives
	ChannelUnreliable                // at most once, in any order
	ChannelSequenced                 // at most once, never an older one after a newer one
)

// String returns "reliable-ordered", "reliable-unordered", "unreliable" or
// "unreliable-sequenced".
func (c Channel) String() string {
	switch c {
	case ChannelOrdered:
		return "reliable-ordered"
	case ChannelUnordered:
		return "reliable-unordered"
	case ChannelUnreliable:
		return "unreliable"
	case ChannelSequenced:
		return "unreliable-sequenced"
	}
	return fmt.Sprintf("Channel(%d)", uint8(c))
}

// Reliable reports whether messages on c are resent until they arrive.
func (c Channel) Reliable() bool { return c == ChannelOrdered || c == ChannelUnordered }

// Direction says which way a message type may travel.
type Direction uint8

// The directions.
const (
	BothWays Direction = iota
	ToServer
	ToClient
)

// String returns "both ways", "to the server" or "to clients".
func (d Direction) String() string {
	switch d {
	case BothWays:
		return "both ways"
	case ToServer:
		return "to the server"
	case ToClient:
		return "to clients"
	}
	return fmt.Sprintf("Direction(%d)", uint8(d))
}

// Allows reports whether a message may travel to the server (toServer) or
// to a client.
func (d Direction) Allows(toServer bool) bool {
	return d == BothWays || (d == ToServer) == toServer
}

// MessageRules are a message type's channel, direction and limits, as
// declared; [SchemaBuilder.AddMessage] fills in the defaults.
type MessageRules struct {
	Channel   Channel
	Direction Direction
	// MaxBytes bounds the encoded fields; 0 means the most the description
	// can encode.
	MaxBytes int
	// PerSecond and Burst are the token bucket a server keeps per
	// connection and a client for itself: PerSecond tokens a second, at
	// most Burst held. 0 means DefaultMessagesPerSecond and
	// max(1, ⌈PerSecond⌉).
	PerSecond float64
	Burst     int
}

// MessageType is what a schema knows of one message type: its
// description, and its rules with the defaults filled in.
type MessageType struct {
	component
	Rules MessageRules
}

// Name returns the message type's Go type name ("game.Chat").
func (m *MessageType) Name() string { return m.name }

// Type returns the message type's Go type.
func (m *MessageType) Type() reflect.Type { return m.typ }

// AddMessage declares a message type t whose one description is
// serialize, and returns its wire ID. A type that is not plain data, a
// description that fails, a type declared twice, more than MaxMessages
// types, or rules out of range (an unknown channel or direction, MaxBytes
// beyond MaxMessageBytes, or beyond MaxUnreliableMessageBytes for an
// unreliable channel once the description's own bound is applied, a rate
// beyond MaxMessagesPerSecond or MaxMessageBurst) makes Build fail naming
// the type.
func (b *SchemaBuilder) AddMessage(t reflect.Type, serialize func(p unsafe.Pointer, s *Stream), rules MessageRules) MessageID {
	id := MessageID(len(b.s.messages))
	if err := b.addMessage(t, serialize, rules); err != nil {
		b.fail(fmt.Errorf("netsync: message %v: %w", t, err))
	}
	return id
}

func (b *SchemaBuilder) addMessage(t reflect.Type, serialize func(p unsafe.Pointer, s *Stream), rules MessageRules) error {
	switch {
	case b.built:
		return fmt.Errorf("declared after Build")
	case len(b.s.messages) >= MaxMessages:
		return fmt.Errorf("would be the %dth message type; a schema holds at most %d", len(b.s.messages)+1, MaxMessages)
	case rules.Channel > ChannelSequenced:
		return fmt.Errorf("channel %d outside %d..%d", rules.Channel, ChannelOrdered, ChannelSequenced)
	case rules.Direction > ToClient:
		return fmt.Errorf("direction %d outside %d..%d", rules.Direction, BothWays, ToClient)
	case rules.MaxBytes < 0 || rules.MaxBytes > MaxMessageBytes:
		return fmt.Errorf("MaxBytes %d outside 0..%d", rules.MaxBytes, MaxMessageBytes)
	case !(rules.PerSecond >= 0 && rules.PerSecond <= MaxMessagesPerSecond):
		return fmt.Errorf("PerSecond %v outside 0..%d", rules.PerSecond, MaxMessagesPerSecond)
	case rules.Burst < 0 || rules.Burst > MaxMessageBurst:
		return fmt.Errorf("Burst %d outside 0..%d", rules.Burst, MaxMessageBurst)
	}
	for i := range b.s.messages {
		if b.s.messages[i].typ == t {
			return fmt.Errorf("declared twice")
		}
	}
	if err := ecs.CheckPlainData(t); err != nil {
		return err
	}
	fields, err := describe(serialize, reflect.New(t).UnsafePointer(), t)
	if err != nil {
		return err
	}
	most := 0
	for _, f := range fields {
		most += f.bits
	}
	most = (most + 7) / 8
	if rules.MaxBytes == 0 || rules.MaxBytes > most {
		rules.MaxBytes = most
	}
	limit := MaxMessageBytes
	if !rules.Channel.Reliable() {
		limit = MaxUnreliableMessageBytes
	}
	if rules.MaxBytes > limit {
		return fmt.Errorf("up to %d bytes on the %v channel, which carries at most %d: lower MaxBytes or use a reliable channel",
			rules.MaxBytes, rules.Channel, limit)
	}
	if rules.PerSecond == 0 {
		rules.PerSecond = DefaultMessagesPerSecond
	}
	if rules.Burst == 0 {
		rules.Burst = max(1, int(math.Ceil(rules.PerSecond)))
	}
	m := MessageType{component: component{name: t.String(), typ: t, serialize: serialize, fields: fields,
		names: fieldNames(t, fields)}, Rules: rules}
	// The rules are in the hash: both ends must agree on how a type
	// travels and on the limits the client keeps to.
	m.hash = hashComponent("message "+m.name, t.Size(), fields)
	var buf [8]byte
	for _, v := range [...]uint64{uint64(rules.Channel), uint64(rules.Direction), uint64(rules.MaxBytes),
		math.Float64bits(rules.PerSecond), uint64(rules.Burst)} {
		binary.LittleEndian.PutUint64(buf[:], v)
		m.hash = fnv(m.hash, buf[:])
	}
	b.s.messages = append(b.s.messages, m)
	return nil
}

// NumMessages returns the number of declared message types.
func (s *Schema) NumMessages() int { return len(s.messages) }

// Message returns message type id; ok is false for an unknown ID (which a
// decoder must treat as bad input).
func (s *Schema) Message(id MessageID) (m *MessageType, ok bool) {
	if int(id) >= len(s.messages) {
		return nil, false
	}
	return &s.messages[id], true
}

// MessageOf returns the ID of message type t; ok is false when t is not
// one of the schema's message types. It costs a walk of the types.
func (s *Schema) MessageOf(t reflect.Type) (id MessageID, ok bool) {
	for i := range s.messages {
		if s.messages[i].typ == t {
			return MessageID(i), true
		}
	}
	return 0, false
}

// EncodeMessage writes the fields of message type id's value at p, using
// st as scratch. It never fails (see Stream.Text).
func (s *Schema) EncodeMessage(st *Stream, id MessageID, w *bitstream.Writer, p unsafe.Pointer) {
	*st = Stream{mode: modeEncode, w: w, codes: st.codes}
	s.messages[id].serialize(p, st)
}

// DecodeMessage reads a value of message type id into p, using st as
// scratch; the error names the field.
func (s *Schema) DecodeMessage(st *Stream, id MessageID, r *bitstream.Reader, p unsafe.Pointer) error {
	*st = Stream{mode: modeDecode, r: r, codes: st.codes}
	m := &s.messages[id]
	m.serialize(p, st)
	if st.err != nil && st.n > 0 && st.n <= len(m.names) {
		return fmt.Errorf("field %s: %w", m.names[st.n-1], st.err)
	}
	return st.err
}
