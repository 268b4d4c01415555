// Package packet is ghostwire's packet layer. It runs above any
// transport.Conn (the memory link in tests and simulations, UDP and WebSocket
// in a shipped game), so the simulation harness exercises the code a game
// ships. It knows nothing of ECS and imports only the standard library and
// package transport.
//
// A Conn numbers its packets, acknowledges the peer's with a sequence and a
// 32-bit field, as in Glenn Fiedler's "reliable" library, and estimates RTT
// and packet loss from those acks. Above that it carries three channels:
//
//   - Unreliable: a message rides in exactly one packet and arrives at most
//     once (duplicated packets are dropped), maybe never, in any order.
//     SendUnreliable returns the sequence of the packet carrying it, so an
//     upper layer can learn through Acked or Options.OnAck that it arrived;
//     delta-compression baselines build on that. Messages are never
//     fragmented: one is at most MaxUnreliableSize (1188) bytes.
//   - Reliable: a message is resent until a packet carrying it is
//     acknowledged and is delivered exactly once, in order. Messages larger
//     than one packet are cut into fragments of FragmentSize bytes, each
//     acknowledged and resent on its own, up to Options.MaxMessageSize.
//   - ReliableUnordered: a message is resent until acknowledged like a
//     reliable one and delivered exactly once, but as soon as a packet
//     carrying it arrives: one lost message holds back no other, and the
//     receiver holds nothing. Messages are never fragmented: one is at most
//     1186 bytes.
//
// Options.ReliableBytesPerFlush spreads what the reliable channels send
// over several Flushes, so a large message shares the link with the
// unreliable traffic instead of going in one burst before it.
//
// Each packet acknowledges the 33 newest packets received when it is sent,
// so an end should send (Flush) at least once per 33 packets it receives;
// an ack-only packet goes out when there is nothing else to send.
//
// Several messages share a datagram. The API is polled, with time from a
// transport.Clock: SendUnreliable, SendReliable and SendUnordered queue,
// Flush sends, Receive reads. Every cap (send queue, pending messages, held
// and reassembly bytes, fragments per message, send budget, reliable bytes
// per flush) is counted in Stats
// when it bites; Backlogged tells a server that a peer stopped acknowledging
// or reading.
//
// # Wire layout
//
// All integers are little-endian. A packet is a 9-byte header followed by
// zero or more message entries, to the end of the datagram:
//
//	offset size field
//	0      1    flags: low nibble = version 1; 0x10 = the ack fields are valid
//	                   (clear until the sender has received a packet; the ack
//	                   fields are then zero); other bits zero
//	1      2    sequence of this packet
//	3      2    ack: the newest sequence received from the peer
//	5      4    ack bits: bit i set = sequence ack-1-i was received too
//
// Each entry starts with a kind byte:
//
//	kind 0, unreliable: length u16, data
//	kind 1, reliable:   message id u16, length u16, data
//	kind 2, fragment:   message id u16, index u8, count u8, length u16, data
//	kind 3, unordered:  message id u16, length u16, data
//
// A fragment has count >= 2 and index < count; every fragment but the last
// holds exactly FragmentSize bytes and the last 1 to FragmentSize. A packet
// with no entries is ack-only; it is never acknowledged on its own account.
// Message ids wrap like sequences; the ordered and the unordered channel
// number their messages apart. A sender keeps each channel's messages on
// the wire within 256 ids of its oldest unacknowledged one; it sends a
// fragmented message only once it is that oldest one, with no other ordered
// message beside its fragments; and a packet carrying the oldest ordered
// message carries after it only an unbroken run of ordered messages. An
// unordered message 256 ids or more behind the newest one received is
// therefore one received before, and is ignored. A receiver accepts ordered ids
// within 256 of the next it will deliver and fragments only of the next
// message it misses, and always admits the messages that continue its
// in-order run; only messages that must wait for a missing one count against
// its byte cap. So caps can make a receiver drop packets (unacknowledged, to
// be resent) but never lock the channel. Anything else wrong with a datagram
// (short, unknown version or kind, an entry running past the end, a
// malformed fragment) drops it whole.
package packet
