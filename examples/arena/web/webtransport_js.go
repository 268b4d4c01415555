//go:build js

package web

import "errors"

// wtServer is empty in a WebAssembly build: QUIC needs a UDP socket, which
// a browser does not give a program, so the page's server is never one.
type wtServer struct{}

// setupWebTransport refuses to serve WebTransport unless Options.Transport
// is websocket.
func (s *Server) setupWebTransport(string) error {
	s.transports = Transports{Mode: s.opts.Transport}
	if s.opts.Transport == TransportWebSocket {
		return nil
	}
	return errors.New("web: WebTransport is not served from a WebAssembly build (use -web-transport websocket)")
}

// closeWebTransport has nothing to close.
func (s *Server) closeWebTransport() error { return nil }
