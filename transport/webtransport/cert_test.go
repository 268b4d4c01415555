//go:build !js

package webtransport

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDevCertificateIsWhatBrowsersPinByHash(t *testing.T) {
	c, err := NewDevCertificate(MaxDevValidity, "127.0.0.1", "localhost")
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	require.NoError(t, err)
	key, ok := leaf.PublicKey.(*ecdsa.PublicKey)
	require.True(t, ok, "ECDSA: browsers refuse RSA and Ed25519 for serverCertificateHashes")
	assert.Equal(t, elliptic.P256(), key.Curve)
	assert.Equal(t, MaxDevValidity, leaf.NotAfter.Sub(leaf.NotBefore), "336 h: Chromium refuses 337")
	assert.True(t, leaf.NotBefore.Before(time.Now()), "valid now")
	assert.Equal(t, "127.0.0.1", leaf.IPAddresses[0].String())
	assert.Equal(t, []string{"localhost"}, leaf.DNSNames)

	h, err := CertificateHash(c)
	require.NoError(t, err)
	assert.Equal(t, sha256.Sum256(c.Certificate[0]), h)
	require.NoError(t, verifyPinned(c.Certificate, [][32]byte{h}, time.Now()))
}

func TestDevCertificateValidityIsChecked(t *testing.T) {
	_, err := NewDevCertificate(MaxDevValidity + time.Hour)
	require.EqualError(t, err, "webtransport: certificate validity 337h0m0s: allowed range is 1m0s..336h0m0s")
	_, err = NewDevCertificate(time.Second)
	require.EqualError(t, err, "webtransport: certificate validity 1s: allowed range is 1m0s..336h0m0s")
}

func TestCertificateHashOfNothing(t *testing.T) {
	_, err := CertificateHash(tlsCertificateOf(nil))
	require.ErrorIs(t, err, errNoCertificate)
}

func TestVerifyPinnedRefusesWhatABrowserRefuses(t *testing.T) {
	c, err := NewDevCertificate(time.Hour)
	require.NoError(t, err)
	h, _ := CertificateHash(c)
	require.ErrorContains(t, verifyPinned(c.Certificate, [][32]byte{{1}}, time.Now()), "matches none of CertificateHashes")
	require.ErrorContains(t, verifyPinned(c.Certificate, [][32]byte{h}, time.Now().Add(2*time.Hour)), "not now")
	require.ErrorContains(t, verifyPinned(nil, [][32]byte{h}, time.Now()), "no certificate")

	long := selfSigned(t, MaxDevValidity+time.Hour)
	lh := sha256.Sum256(long)
	require.ErrorContains(t, verifyPinned([][]byte{long}, [][32]byte{lh}, time.Now()), "at most 336h0m0s")
}

func TestLoadCertificate(t *testing.T) {
	c, err := NewDevCertificate(time.Hour)
	require.NoError(t, err)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	der, err := x509.MarshalECPrivateKey(c.PrivateKey.(*ecdsa.PrivateKey))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate[0]}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600))

	got, err := LoadCertificate(certFile, keyFile)
	require.NoError(t, err)
	assert.Equal(t, c.Certificate, got.Certificate)

	_, err = LoadCertificate(filepath.Join(dir, "missing.pem"), keyFile)
	require.ErrorContains(t, err, "missing.pem")
}
