package webtransport

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// MaxDevValidity is the longest validity a browser accepts in a certificate
// it trusts by hash (serverCertificateHashes): 14 days. Chromium refuses
// one an hour longer.
const MaxDevValidity = 14 * 24 * time.Hour

// minDevValidity keeps a development certificate valid long enough to open
// a page with it.
const minDevValidity = time.Minute

// clockSkew backdates a development certificate, so a client whose clock
// runs a little behind still finds it valid. It counts towards the
// validity, which the browser measures from NotBefore to NotAfter.
const clockSkew = time.Minute

// NewDevCertificate returns a self-signed certificate for development that
// browsers accept without a certificate authority when the page passes
// its hash (CertificateHash) as serverCertificateHashes: an ECDSA P-256 key
// (browsers refuse RSA and Ed25519 there), valid for validity from a
// minute ago, naming hosts (IP addresses or DNS names) as its subject
// alternative names. validity must be 1m..MaxDevValidity: a browser
// refuses a longer one, so the server makes a fresh certificate when it
// starts and hands the page its hash.
func NewDevCertificate(validity time.Duration, hosts ...string) (tls.Certificate, error) {
	if validity < minDevValidity || validity > MaxDevValidity {
		return tls.Certificate{}, fmt.Errorf("webtransport: certificate validity %v: allowed range is %v..%v",
			validity, minDevValidity, MaxDevValidity)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, err
	}
	from := time.Now().Add(-clockSkew)
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "ghostwire development"},
		NotBefore:    from,
		NotAfter:     from.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// LoadCertificate reads a certificate chain and its private key from PEM
// files, for production: a certificate from an authority the browsers
// trust needs no hash and no validity limit. Its errors name the files.
func LoadCertificate(certFile, keyFile string) (tls.Certificate, error) {
	c, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("webtransport: certificate %s with key %s: %w", certFile, keyFile, err)
	}
	return c, nil
}

// errNoCertificate is CertificateHash's error for a tls.Certificate with
// no certificate in it.
var errNoCertificate = errors.New("webtransport: the tls.Certificate holds no certificate")

// CertificateHash returns the SHA-256 of c's leaf certificate (its DER), the
// value a page passes to the browser's WebTransport constructor as
// serverCertificateHashes ({algorithm: "sha-256", value}) and DialOptions
// takes as CertificateHashes.
func CertificateHash(c tls.Certificate) ([32]byte, error) {
	if len(c.Certificate) == 0 {
		return [32]byte{}, errNoCertificate
	}
	return sha256.Sum256(c.Certificate[0]), nil
}
