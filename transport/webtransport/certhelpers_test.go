//go:build !js

package webtransport

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// tlsCertificateOf wraps DER certificates without a key.
func tlsCertificateOf(der [][]byte) tls.Certificate { return tls.Certificate{Certificate: der} }

// selfSigned returns the DER of a self-signed P-256 certificate valid
// from now for validity, which NewDevCertificate would refuse to make.
func selfSigned(t *testing.T, validity time.Duration) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	now := time.Now().Add(-time.Minute)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: now, NotAfter: now.Add(validity)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return der
}
