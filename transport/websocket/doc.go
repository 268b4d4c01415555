// Package websocket carries transport datagrams over WebSocket, for clients
// that cannot send UDP: a game in the browser (GOOS=js GOARCH=wasm), or one
// behind a network that lets only HTTP through.
//
// The server side is a Listener, an http.Handler: mount it on the game's own
// http.Server beside the page that opens the socket, and poll its Accept once
// per tick like a transport.Listener. The client side is Dial, which works
// natively and in the browser, where the browser's WebSocket carries it.
//
// # Semantics
//
// The connections that Dial and Accept return keep the transport.Conn
// contract. Each datagram travels as one
// binary WebSocket message, so boundaries are kept: Receive returns exactly
// what one Send sent. Sizes are 1 to transport.MaxDatagramSize bytes, and
// Send refuses others with an error matching transport.ErrDatagramSize.
//
// Nothing blocks. Send copies the datagram into a bounded send queue that a
// writer goroutine empties onto the socket; a reader goroutine fills a
// bounded receive queue that Receive empties. Datagrams are dropped, and
// counted, where a UDP socket would drop them:
//
//   - Send on a full send queue (the socket is slower than the sender, or the
//     peer has stopped reading): the sender's Stats.Dropped.
//   - An arriving datagram on a full receive queue (Receive is not called
//     often enough): the receiver's Stats.Dropped. Here, unlike on the
//     memory link, Dropped counts at the receiving end too.
//   - A datagram longer than the Receive buffer: the receiver's
//     Stats.Truncated, as on every Conn.
//   - A message from the peer that no Conn sends: an empty one is dropped and
//     counted in Stats.Truncated; one longer than MaxDatagramSize is counted
//     there too, is never delivered, in whole or in part, and ends the
//     connection with close status 1009 (message too big); a text message
//     ends it with status 1003 (unsupported data).
//
// Stats.Lost, Duplicated and Reordered stay zero: nothing on a WebSocket
// loses, copies or reorders a message.
//
// Both queues have a fixed length (Options), so a peer that stops reading or
// floods the link costs a connection at most its queues' buffers, never more.
//
// Close ends this side at once: Send returns transport.ErrClosed and
// Receive returns nothing. The writer then flushes what Send had queued,
// within Options.FlushTimeout, and closes the WebSocket with a handshake, so
// the peer still receives what was in flight. When the peer's close arrives,
// or the connection breaks, the peer's Sends return ErrClosed too; what it
// had already received stays receivable until it closes. The goroutines of a
// connection end once the connection is over, whichever end closed it.
//
// # Reliable and ordered, with head-of-line blocking
//
// WebSocket runs over TCP, so datagrams that are not dropped by a queue
// arrive in order and exactly once: nothing is lost, duplicated or reordered
// on the wire. The layers above still see an unreliable link (queues may
// drop) and must not depend on order, so the same code runs over UDP.
//
// The price is head-of-line blocking: when a TCP segment is lost, everything
// sent after it waits for the retransmission, typically a round trip or more.
// Snapshots then arrive late in a burst rather than some never arriving, and
// the send queue fills meanwhile. Keep the queues short enough that stale
// datagrams are dropped rather than delivered seconds late; prefer UDP where
// the client can use it.
//
// # Browser
//
// Under GOOS=js GOARCH=wasm the browser buffers outgoing messages itself
// (its bufferedAmount is not bounded by Options.SendQueue) and delivers
// incoming ones whole; the reader goroutine moves them into the bounded
// receive queue as they arrive.
package websocket
