// Package webtransport carries transport datagrams as WebTransport
// datagrams (HTTP/3 datagrams over QUIC), for a game in the browser
// (GOOS=js GOARCH=wasm) that should get the netcode a native client gets
// over UDP: unreliable, unordered, and free of the head-of-line blocking
// that a WebSocket's TCP imposes (see the websocket package).
//
// The server side is a Listener: Serve runs HTTP/3 on a UDP socket,
// ServeHTTP upgrades each WebTransport request to a session, and the game
// loop polls Accept once per tick like any transport.Listener. The client
// side is Dial: over quic-go natively, through the browser's WebTransport
// API under GOOS=js GOARCH=wasm.
//
// # Semantics
//
// The connections that Dial and Accept return keep the transport.Conn
// contract. Each datagram travels as one WebTransport datagram, so
// boundaries are kept; sizes are 1 to transport.MaxDatagramSize bytes (1,200,
// which Chromium carries both ways: it drops a datagram of more than 1,215
// bytes without telling), and Send refuses others with an error matching
// transport.ErrDatagramSize.
//
// Nothing blocks. Send copies the datagram into a bounded send queue that a
// writer goroutine empties into the session at Options.SendRate; a reader
// goroutine fills a bounded receive queue that Receive empties. Datagrams
// are dropped, and counted, where this package can see it:
//
//   - Send on a full send queue: the sender's Stats.Dropped.
//   - An arriving datagram over Options.ReceiveRate, or on a full receive
//     queue: the receiver's Stats.Dropped.
//   - A datagram longer than the Receive buffer: Stats.Truncated, as on
//     every Conn; one longer than MaxDatagramSize, which no Conn sends,
//     is never delivered and is counted there too.
//
// Like UDP datagrams, WebTransport datagrams may also be lost on the way
// (the network, or a QUIC stack whose queue for a session is full: quic-go
// keeps 32 per session, Chromium its own) and nothing counts those; the
// send pacing keeps a burst from overflowing the peer's stack. Stats.Lost,
// Duplicated and Reordered stay zero: they count what a simulated link
// does.
//
// Both queues have a fixed length (Options), so a peer that stops reading or
// floods the link costs a connection at most its queues' buffers.
//
// Close ends this side at once: Send returns transport.ErrClosed and
// Receive returns nothing. The writer then sends what Send had queued and
// an empty datagram, the close marker, which no Send makes; the peer ends
// the session when it receives the marker, so it receives everything sent
// before it (closing the session straight away could overtake datagrams in
// flight). A marker lost on the way is replaced by Options.FlushTimeout,
// after which the closing end ends the session itself. Once the session is
// over, the peer's Sends return ErrClosed; what it had already received
// stays receivable until it closes. The goroutines of a connection end
// once the session is over, whichever end closed it.
//
// # Security and limits
//
// A session is set up the way a WebSocket is: the Origin header must be
// the request's own host or match ListenerOptions.OriginPatterns (a
// forbidden one is answered 403 and counted in ListenerStats.Failed); a
// game checks its own rules (a session name, a token) in the handler it
// gives Serve before calling ServeHTTP. Each QUIC connection carries at
// most one session. MaxSessions bounds the connections open at once (more
// are closed at once, counted in Refused), MaxPending the sessions waiting
// for Accept (more answered 503, counted in Refused), SetupTimeout how long
// a connection may stay without a session (closed, counted in TimedOut),
// IdleTimeout how long a session may stay silent. Datagrams that arrive
// before their session is set up are never delivered: quic-go drops those
// for a stream it does not know and queues at most 32 for a request being
// set up, which a refused request frees.
//
// # Certificates
//
// Browsers open WebTransport only to a server whose certificate they trust.
// In production that is a certificate from an authority (LoadCertificate).
// For development, NewDevCertificate makes a self-signed one that Chromium
// accepts when the page passes its SHA-256 (CertificateHash) in the
// WebTransport constructor's serverCertificateHashes, under the rules it
// applies there: an ECDSA key (P-256 here; RSA and Ed25519 are refused), a
// validity of at most 14 days (MaxDevValidity), valid now. Every failure
// reads "Opening handshake failed" in JavaScript; the reason appears only
// in the browser's network log. The page must be a secure context (https,
// or http from 127.0.0.1 or localhost): elsewhere the browser has no
// WebTransport, and a game falls back to WebSocket.
//
// # Browser
//
// Under GOOS=js GOARCH=wasm, Dial uses the browser's WebTransport: the
// browser queues outgoing datagrams itself and drops them when its queue
// is full, silently, as quic-go's writer does not; incoming ones are moved
// into the bounded receive queue as they arrive.
package webtransport
