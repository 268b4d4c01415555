//go:build !js

package webtransport

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/quic-go/quic-go/http3"
	wt "github.com/quic-go/webtransport-go"

	"github.com/ghostwire/ghostwire/transport"
)

// Dial opens a WebTransport session to url (https://host:port/path) and
// returns it as a transport.Conn. ctx bounds the handshake only; the
// session lasts until either end closes it. Natively it runs over
// quic-go; under GOOS=js GOARCH=wasm the browser's WebTransport carries
// it. It returns the handshake's error, naming url.
func Dial(ctx context.Context, url string, opts DialOptions) (transport.Conn, error) {
	if err := opts.Conn.validate(); err != nil {
		return nil, err
	}
	tlsConf := &tls.Config{NextProtos: []string{http3.NextProtoH3}, MinVersion: tls.VersionTLS13}
	if len(opts.CertificateHashes) > 0 {
		// Pinned by hash, as a browser does: no chain to check, so the
		// standard verification is replaced, not skipped.
		tlsConf.InsecureSkipVerify = true
		tlsConf.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
			return verifyPinned(raw, opts.CertificateHashes, time.Now())
		}
	}
	tr := &wt.Transport{TLSClientConfig: tlsConf, QUICConfig: quicConfig(DefaultIdleTimeout)}
	resp, sess, err := tr.Dial(ctx, url, opts.Header)
	if err != nil {
		_ = tr.Close()
		if resp != nil {
			return nil, fmt.Errorf("webtransport: dial %s: %s: %w", url, resp.Status, err)
		}
		return nil, fmt.Errorf("webtransport: dial %s: %w", url, err)
	}
	// Closing the session closes its QUIC connection (one per Dial).
	return newConn(&quicSession{s: sess, after: func() { _ = tr.Close() }}, opts.Conn, nil), nil
}

// verifyPinned checks a server's certificate as a browser does for
// serverCertificateHashes: its hash is one of hashes, and it is valid at
// now for at most MaxDevValidity.
func verifyPinned(raw [][]byte, hashes [][32]byte, now time.Time) error {
	if len(raw) == 0 {
		return errors.New("webtransport: the server sent no certificate")
	}
	if !slices.Contains(hashes, sha256.Sum256(raw[0])) {
		return errors.New("webtransport: the server's certificate matches none of CertificateHashes")
	}
	c, err := x509.ParseCertificate(raw[0])
	if err != nil {
		return fmt.Errorf("webtransport: the server's certificate: %w", err)
	}
	switch {
	case now.Before(c.NotBefore) || now.After(c.NotAfter):
		return fmt.Errorf("webtransport: the server's certificate is valid %v..%v, not now (%v)", c.NotBefore, c.NotAfter, now)
	case c.NotAfter.Sub(c.NotBefore) > MaxDevValidity:
		return fmt.Errorf("webtransport: the server's certificate is valid for %v: a pinned one may be valid for at most %v",
			c.NotAfter.Sub(c.NotBefore), MaxDevValidity)
	}
	return nil
}
