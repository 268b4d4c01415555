package webtransport

import "errors"

// errTooLarge is a session's send error for a datagram the path cannot
// carry now (a QUIC packet's room is estimated per path, and a path may
// carry less than transport.MaxDatagramSize): that datagram is dropped,
// the session goes on.
var errTooLarge = errors.New("webtransport: datagram too large for the path")

// session is what a conn needs of a WebTransport session: quic-go's on a
// native build, the browser's under GOOS=js GOARCH=wasm. Its methods may
// block; only the conn's own goroutines call them.
type session interface {
	// send hands one datagram to the session. It may block while the
	// session's own queue is full. It fails with errTooLarge for a
	// datagram the path cannot carry, otherwise only once the session is
	// over.
	send(p []byte) error

	// receive blocks until a datagram arrives, returning it (the session
	// does not touch it again), or fails once the session is over.
	receive() ([]byte, error)

	// close ends the session at once, so that send and receive fail, and
	// tells the peer. Calling it again does nothing.
	close()
}
