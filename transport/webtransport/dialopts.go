package webtransport

import "net/http"

// DialOptions configures Dial. The zero value verifies the server's
// certificate against the system's roots.
type DialOptions struct {
	// Conn tunes the connection.
	Conn Options

	// CertificateHashes pins the server's certificate by the SHA-256 of its
	// DER (CertificateHash), as the browser's serverCertificateHashes does:
	// when set, the certificate must match one of them and be valid now
	// for at most MaxDevValidity, and no authority is consulted. Empty,
	// the certificate must chain to a trusted root.
	CertificateHashes [][32]byte

	// Header is sent with the native client's request (an Origin, say);
	// the browser sends its own headers and ignores it.
	Header http.Header
}
