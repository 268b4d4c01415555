package web

import (
	"net/http"
	"time"

	"github.com/ghostwire/ghostwire/transport/webtransport"
)

// The page's transports (Options.Transport): it tries WebTransport first
// and falls back to WebSocket, or uses the one named.
const (
	TransportAuto         = "auto"
	TransportWebTransport = "webtransport"
	TransportWebSocket    = "websocket"
)

// devValidity is the development certificate's validity: a day short of
// the most a browser accepts (webtransport.MaxDevValidity), so a clock a
// little off on either side does not make it too long.
const devValidity = webtransport.MaxDevValidity - 24*time.Hour

// Transports tells the page how to reach the game: Mode is the server's
// Options.Transport; URL is WebTransport's (empty when the server does not
// serve it) and CertHash, in hex, the SHA-256 of its development
// certificate for serverCertificateHashes (empty for a certificate from
// files, which the browser verifies itself).
type Transports struct {
	Mode     string
	URL      string
	CertHash string
}

// serveTransports answers where the page finds WebTransport.
func (s *Server) serveTransports(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, s.transports)
}
