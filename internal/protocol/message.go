package protocol

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ghostwire/ghostwire/components"
	"github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/bitstream"
	"github.com/ghostwire/ghostwire/internal/codec"
)

// ProtocolVersion is carried in every packet's first byte; a peer speaking
// another version is refused.
const ProtocolVersion = 9

// MsgType says what a packet holds; it is the packet's second byte.
type MsgType uint8

// The message types.
const (
	MsgHello      MsgType = 1  // client → server: please connect
	MsgWelcome    MsgType = 2  // server → client: connected, here is the clock
	MsgReject     MsgType = 3  // server → client: refused, with a reason
	MsgInputs     MsgType = 4  // client → server: the newest input commands
	MsgSnapshot   MsgType = 5  // server → client: ghost states of one tick
	MsgDisconnect MsgType = 6  // either way: goodbye
	MsgConfirm    MsgType = 7  // server → client: verdicts of the client's shots, resent until acknowledged
	MsgConfirmAck MsgType = 8  // client → server: every verdict before a sequence number arrived
	MsgEvents     MsgType = 9  // server → client, reliable: the predicted events of the server's ticks
	MsgGame       MsgType = 10 // either way: one of the game's own messages (see game.go)
)

// String names the message type.
func (t MsgType) String() string {
	switch t {
	case MsgHello:
		return "hello"
	case MsgWelcome:
		return "welcome"
	case MsgReject:
		return "reject"
	case MsgInputs:
		return "inputs"
	case MsgSnapshot:
		return "snapshot"
	case MsgDisconnect:
		return "disconnect"
	case MsgConfirm:
		return "confirm"
	case MsgConfirmAck:
		return "confirm-ack"
	case MsgEvents:
		return "events"
	case MsgGame:
		return "game message"
	}
	return fmt.Sprintf("MsgType(%d)", uint8(t))
}

// PeekType checks a packet's version byte and returns its message type.
// It errors on a packet shorter than 2 bytes, another protocol version or
// an unknown type.
func PeekType(p []byte) (MsgType, error) {
	if len(p) < 2 {
		return 0, fmt.Errorf("netsync: packet of %d bytes is shorter than its 2-byte header: %w", len(p), bitstream.ErrShortBuffer)
	}
	if p[0] != ProtocolVersion {
		return 0, fmt.Errorf("netsync: protocol version %d, want %d: %w", p[0], ProtocolVersion, bitstream.ErrOutOfRange)
	}
	t := MsgType(p[1])
	if t < MsgHello || t > MsgGame {
		return 0, fmt.Errorf("netsync: message type %d outside %d..%d: %w", p[1], MsgHello, MsgGame, bitstream.ErrOutOfRange)
	}
	return t, nil
}

// begin starts a message appended to buf, as append does.
func begin(w *bitstream.Writer, buf []byte, t MsgType) {
	w.Append(buf)
	w.WriteBits(ProtocolVersion, 8)
	w.WriteBits(uint64(t), 8)
}

func open(r *bitstream.Reader, p []byte, want MsgType) error {
	t, err := PeekType(p)
	if err != nil {
		return err
	}
	if t != want {
		return fmt.Errorf("netsync: got a %v packet, want %v: %w", t, want, bitstream.ErrMalformed)
	}
	r.Reset(p[2:])
	return nil
}

// end checks that the reader met no error and that nothing but the last
// byte's padding follows the message.
func end(r *bitstream.Reader) error {
	if err := r.Err(); err != nil {
		return err
	}
	if rest := r.Remaining(); rest >= 8 {
		return fmt.Errorf("netsync: %d bits after the end of the message: %w", rest, bitstream.ErrMalformed)
	}
	return nil
}

// Hello asks a server for a connection. Beside the schema hash it carries
// one hash per component, so a server refusing another schema can name the
// component that differs.
type Hello struct {
	SchemaHash uint64 // the client's Schema.Hash
	// ComponentHashes holds the client's Schema.ComponentHash of every
	// component in order; at most codec.MaxComponents.
	ComponentHashes []uint64
	TickRate        uint16 // the client's tick rate; must equal the server's
	ClientTime      uint32 // client clock in ms, echoed for the first RTT sample
}

// AppendHello appends the packet of h to buf and returns the extended
// buffer, as append does; the packet is at most 1041 bytes. It panics if h holds more than codec.MaxComponents
// component hashes: the client library builds hellos from a [Schema],
// which holds no more.
func AppendHello(buf []byte, h *Hello) []byte {
	n := len(h.ComponentHashes)
	if n > codec.MaxComponents {
		panic(fmt.Sprintf("netsync: hello with %d component hashes; a schema holds at most %d", n, codec.MaxComponents))
	}
	var w bitstream.Writer
	begin(&w, buf, MsgHello)
	w.WriteBits(h.SchemaHash, 64)
	w.WriteBits(uint64(h.TickRate), 16)
	w.WriteBits(uint64(h.ClientTime), 32)
	w.WriteBits(uint64(n), 8)
	for _, c := range h.ComponentHashes {
		w.WriteBits(c, 64)
	}
	return w.Bytes()
}

// DecodeHello decodes a hello packet into h, reusing the capacity of
// h.ComponentHashes (it grows to codec.MaxComponents at most, so a hostile packet
// cannot make it grow further). More than codec.MaxComponents component hashes
// are refused. On error h is left unchanged.
func DecodeHello(p []byte, h *Hello) error {
	var r bitstream.Reader
	if err := open(&r, p, MsgHello); err != nil {
		return err
	}
	hash, _ := r.ReadBits(64)
	rate, _ := r.ReadBits(16)
	ct, _ := r.ReadBits(32)
	count, err := r.ReadBits(8)
	if err != nil {
		return err
	}
	n := int(count)
	if n > codec.MaxComponents {
		return fmt.Errorf("netsync: hello with %d component hashes, at most %d allowed: %w", n, codec.MaxComponents, bitstream.ErrOutOfRange)
	}
	// Check the length before writing into h, so a refused packet leaves it
	// alone.
	if need := 64 * n; r.Remaining() < need {
		return fmt.Errorf("netsync: hello announces %d component hashes (%d bits); only %d bits remain: %w", n, need, r.Remaining(), bitstream.ErrShortBuffer)
	} else if rest := r.Remaining() - need; rest >= 8 {
		return fmt.Errorf("netsync: %d bits after the end of the message: %w", rest, bitstream.ErrMalformed)
	}
	hashes := h.ComponentHashes
	if cap(hashes) < n {
		hashes = make([]uint64, 0, codec.MaxComponents)
	}
	hashes = hashes[:n]
	for i := range hashes {
		hashes[i], _ = r.ReadBits(64)
	}
	if err := end(&r); err != nil {
		return err
	}
	*h = Hello{SchemaHash: hash, ComponentHashes: hashes, TickRate: uint16(rate), ClientTime: uint32(ct)}
	return nil
}

// Welcome accepts a connection and starts the client's clock.
type Welcome struct {
	Conn       components.ConnID  // the client's connection ID
	Player     components.GhostID // the ghost the server spawned for it
	ServerTick ecs.Tick           // the server's last simulated tick when sent
	TickRate   uint16
	EchoTime   uint32 // the hello's ClientTime
	Hold       uint16 // ms between receiving the hello and sending this
}

// AppendWelcome appends the packet of m to buf and returns the extended
// buffer, as append does.
func AppendWelcome(buf []byte, m *Welcome) []byte {
	var w bitstream.Writer
	begin(&w, buf, MsgWelcome)
	w.WriteBits(uint64(m.Conn), 32)
	w.WriteBits(uint64(m.Player), 32)
	w.WriteBits(uint64(m.ServerTick), 32)
	w.WriteBits(uint64(m.TickRate), 16)
	w.WriteBits(uint64(m.EchoTime), 32)
	w.WriteBits(uint64(m.Hold), 16)
	return w.Bytes()
}

// DecodeWelcome decodes a welcome packet. A zero connection ID or tick
// rate is refused; a zero player means the connection owns no ghost.
func DecodeWelcome(p []byte, m *Welcome) error {
	var r bitstream.Reader
	if err := open(&r, p, MsgWelcome); err != nil {
		return err
	}
	conn, _ := r.ReadBits(32)
	player, _ := r.ReadBits(32)
	tick, _ := r.ReadBits(32)
	rate, _ := r.ReadBits(16)
	echo, _ := r.ReadBits(32)
	hold, _ := r.ReadBits(16)
	if err := end(&r); err != nil {
		return err
	}
	if conn == 0 || rate == 0 {
		return fmt.Errorf("netsync: welcome with connection %d and tick rate %d; both must be > 0: %w", conn, rate, bitstream.ErrOutOfRange)
	}
	*m = Welcome{Conn: components.ConnID(conn), Player: components.GhostID(player), ServerTick: ecs.Tick(tick), TickRate: uint16(rate), EchoTime: uint32(echo), Hold: uint16(hold)}
	return nil
}

// RejectReason says why a server refused or dropped a connection.
type RejectReason uint8

// The reject and disconnect reasons.
const (
	RejectSchema   RejectReason = 1 // the schemas differ
	RejectTickRate RejectReason = 2 // the tick rates differ
	RejectFull     RejectReason = 3 // no free connection slot
	RejectTimeout  RejectReason = 4 // nothing heard for too long
	RejectClosed   RejectReason = 5 // the peer closed
	RejectSpawn    RejectReason = 6 // the game's OnConnect or the ghost spawn failed
	RejectMessages RejectReason = 7 // the client kept sending messages the server refused
)

// String describes the reason.
func (r RejectReason) String() string {
	switch r {
	case RejectSchema:
		return "schema mismatch"
	case RejectTickRate:
		return "tick rate mismatch"
	case RejectFull:
		return "server full"
	case RejectTimeout:
		return "timeout"
	case RejectClosed:
		return "closed"
	case RejectSpawn:
		return "the game refused the player"
	case RejectMessages:
		return "too many refused messages"
	}
	return fmt.Sprintf("RejectReason(%d)", uint8(r))
}

// lastReason is the highest reason on the wire.
const lastReason = RejectMessages

// MaxRejectDetail bounds the detail of a [Reject], in bytes.
const MaxRejectDetail = 200

// Reject is the body of a reject or a disconnect packet: why the server
// refused or ended the connection, and a short text for people, such as
// the component whose schema differs.
type Reject struct {
	Reason RejectReason
	// Detail is UTF-8 without control characters, at most MaxRejectDetail
	// bytes; "" when the reason says it all.
	Detail string
}

// AppendReject encodes m as a packet of type t (MsgReject or
// MsgDisconnect), appended to buf; it returns the extended buffer, as
// append does. A detail longer than
// MaxRejectDetail bytes is cut at a character boundary, and control
// characters and invalid UTF-8 in it are replaced, so that it decodes. It
// panics on another message type.
func AppendReject(buf []byte, t MsgType, m *Reject) []byte {
	if t != MsgReject && t != MsgDisconnect {
		panic(fmt.Sprintf("netsync: a reject is sent as %v or %v, not %v", MsgReject, MsgDisconnect, t))
	}
	d := clipDetail(m.Detail)
	var w bitstream.Writer
	begin(&w, buf, t)
	w.WriteBits(uint64(m.Reason), 8)
	w.WriteBits(uint64(len(d)), 8)
	for i := 0; i < len(d); i++ {
		w.WriteBits(uint64(d[i]), 8)
	}
	return w.Bytes()
}

// clipDetail makes d a valid detail: control characters become spaces,
// invalid UTF-8 becomes U+FFFD, and it is cut to MaxRejectDetail bytes at
// a character boundary. It allocates only when it replaces something.
func clipDetail(d string) string {
	d = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, d)
	if len(d) <= MaxRejectDetail {
		return d
	}
	n := MaxRejectDetail
	for !utf8.RuneStart(d[n]) {
		n--
	}
	return d[:n]
}

// DecodeReject decodes a reject or disconnect packet (t says which) into
// m. It refuses an unknown reason, a detail longer than MaxRejectDetail
// bytes, and one that is not UTF-8 or holds control characters (a hostile
// server must not write into the client's logs and terminal). On error m is
// left unchanged.
func DecodeReject(p []byte, t MsgType, m *Reject) error {
	var r bitstream.Reader
	if err := open(&r, p, t); err != nil {
		return err
	}
	v, _ := r.ReadBits(8)
	n, err := r.ReadBits(8)
	if err != nil {
		return err
	}
	if n > MaxRejectDetail {
		return fmt.Errorf("netsync: reject detail of %d bytes, at most %d allowed: %w", n, MaxRejectDetail, bitstream.ErrOutOfRange)
	}
	var buf [MaxRejectDetail]byte
	d, err := r.ReadBytes(int(n), buf[:0])
	if err != nil {
		return err
	}
	if err := end(&r); err != nil {
		return err
	}
	if v < uint64(RejectSchema) || v > uint64(lastReason) {
		return fmt.Errorf("netsync: reason %d outside %d..%d: %w", v, RejectSchema, lastReason, bitstream.ErrOutOfRange)
	}
	if i := badDetailByte(d); i >= 0 {
		return fmt.Errorf("netsync: reject detail has invalid UTF-8 or a control character at byte %d of %d: %w", i, len(d), bitstream.ErrMalformed)
	}
	*m = Reject{Reason: RejectReason(v), Detail: string(d)}
	return nil
}

// badDetailByte returns the offset of the first invalid UTF-8 sequence or
// control character in d, or -1.
func badDetailByte(d []byte) int {
	for i := 0; i < len(d); {
		r, size := utf8.DecodeRune(d[i:])
		if (r == utf8.RuneError && size == 1) || unicode.IsControl(r) {
			return i
		}
		i += size
	}
	return -1
}

// InputBatch is what a client sends every tick: its newest inputs (oldest
// first, consecutive ticks) for redundancy against loss, the newest
// snapshot tick it has received, and its clock for RTT measurement.
type InputBatch struct {
	ClientTime uint32   // client clock in ms
	AckTick    ecs.Tick // newest snapshot tick received (0: none yet)
	AckParts   uint8    // bit i: part i of AckTick's snapshot was applied
	// Resync asks the server to send every ghost in full again: the
	// client dropped a delta record whose baseline it did not hold.
	Resync bool
	Heads  []components.InputHeader
	// Data holds the records of the schema's input type, InputSize bytes
	// each, one per header.
	Data []byte
	st   codec.Stream
	w    bitstream.Writer
	r    bitstream.Reader
}

// AppendInputs appends the packet of b to buf and returns the extended
// buffer, as append does. It panics if
// b holds no input, more than codec.MaxInputsPerBatch, non-consecutive ticks or
// records that do not match the headers: the client library builds
// batches, never the network. It allocates nothing.
func AppendInputs(buf []byte, s *codec.Schema, b *InputBatch) []byte {
	n := len(b.Heads)
	size := s.InputSize()
	if n == 0 || n > codec.MaxInputsPerBatch || len(b.Data) != n*size {
		panic(fmt.Sprintf("netsync: input batch of %d inputs and %d record bytes; want 1..%d inputs of %d bytes", n, len(b.Data), codec.MaxInputsPerBatch, size))
	}
	w := &b.w
	begin(w, buf, MsgInputs)
	w.WriteBits(uint64(b.ClientTime), 32)
	w.WriteBits(uint64(b.AckTick), 32)
	if b.AckParts == 1 && !b.Resync { // the common case, a snapshot in one packet, costs one bit
		w.WriteBool(true)
	} else {
		w.WriteBool(false)
		w.WriteBits(uint64(b.AckParts), MaxSnapshotParts)
		w.WriteBool(b.Resync)
	}
	newest := b.Heads[n-1].Tick
	w.WriteBits(uint64(newest), 32)
	w.WriteBits(uint64(n-1), 5)
	var prevH *components.InputHeader
	var prev []byte
	for i := range b.Heads {
		h := &b.Heads[i]
		if h.Tick != newest.Add(-(n - 1 - i)) {
			panic(fmt.Sprintf("netsync: input batch ticks are not consecutive at %d", h.Tick))
		}
		rec := b.Data[i*size : (i+1)*size]
		s.WriteInput(&b.st, w, h, prevH, rec, prev)
		prevH, prev = h, rec
	}
	return w.Bytes()
}

// DecodeInputs decodes an inputs packet into b, reusing its capacity (at
// most codec.MaxInputsPerBatch inputs, so a hostile packet cannot make it grow).
// Every value is checked by the input type's description; the game's
// Validate runs later, in the InputBuffer.
func DecodeInputs(p []byte, s *codec.Schema, b *InputBatch) error {
	r := &b.r
	if err := open(r, p, MsgInputs); err != nil {
		return err
	}
	ct, _ := r.ReadBits(32)
	ack, _ := r.ReadBits(32)
	parts, resync := uint64(1), false
	if one, _ := r.ReadBool(); !one {
		parts, _ = r.ReadBits(MaxSnapshotParts)
		resync, _ = r.ReadBool()
	}
	newest, _ := r.ReadBits(32)
	n1, err := r.ReadBits(5)
	if err != nil {
		return err
	}
	n := int(n1) + 1
	size := s.InputSize()
	b.ClientTime, b.AckTick, b.AckParts, b.Resync = uint32(ct), ecs.Tick(ack), uint8(parts), resync
	if cap(b.Heads) < codec.MaxInputsPerBatch {
		b.Heads = make([]components.InputHeader, 0, codec.MaxInputsPerBatch)
	}
	if cap(b.Data) < codec.MaxInputsPerBatch*size {
		b.Data = make([]byte, 0, codec.MaxInputsPerBatch*size)
	}
	b.Heads, b.Data = b.Heads[:n], b.Data[:n*size]
	var prevH *components.InputHeader
	var prev []byte
	for i := 0; i < n; i++ {
		rec := b.Data[i*size : (i+1)*size]
		if err := s.ReadInput(&b.st, r, &b.Heads[i], prevH, rec, prev, ecs.Tick(newest).Add(-(n - 1 - i))); err != nil {
			b.Heads, b.Data = b.Heads[:0], b.Data[:0]
			return err
		}
		prevH, prev = &b.Heads[i], rec
	}
	if err := end(r); err != nil {
		b.Heads, b.Data = b.Heads[:0], b.Data[:0]
		return err
	}
	return nil
}
