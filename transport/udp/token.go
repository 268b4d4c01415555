package udp

import (
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"golang.org/x/crypto/chacha20poly1305"
)

// Sizes of the netcode 1.02 connect token and its parts, in bytes.
const (
	ConnectTokenSize  = 2048 // the public connect token a client receives
	PrivateTokenSize  = 1024 // the encrypted private part, tag included
	UserDataSize      = 256  // application data carried to the server
	KeySize           = 32   // private key and per-connection keys
	TokenNonceSize    = 24   // XChaCha20-Poly1305 nonce of the private part
	versionSize       = 13
	macSize           = 16
	tokenAdditionSize = versionSize + 8 + 8
)

// version is "NETCODE 1.02" with its NUL terminator, as every packet and
// token carries it.
var version = [versionSize]byte{'N', 'E', 'T', 'C', 'O', 'D', 'E', ' ', '1', '.', '0', '2', 0}

var (
	// ErrInvalidToken is matched (errors.Is) by the errors of MakeConnectToken
	// for bad parameters and of ParseConnectToken for bytes that are not a
	// connect token.
	ErrInvalidToken = errors.New("udp: invalid connect token")
)

// TokenParams is what a backend (a matchmaker) needs to make a connect token.
type TokenParams struct {
	// PrivateKey is shared between the backend and the servers. Configuration,
	// never a constant: whoever knows it can mint tokens.
	PrivateKey [KeySize]byte
	// ProtocolID identifies the game and its version; a server refuses tokens
	// for another protocol ID.
	ProtocolID uint64
	// ClientID identifies the authenticated player; a server admits one
	// connection per client ID.
	ClientID uint64
	// ServerAddresses are the public addresses (1..32) the client may try, in
	// order. A server only accepts a token naming its own public address.
	ServerAddresses []netip.AddrPort
	// Create and Expire bound the token's life (unix seconds on the wire).
	// Expire must be after Create.
	Create, Expire time.Time
	// TimeoutSeconds is how long either side waits without a packet before it
	// gives up. Negative disables the timeout (development only); zero is
	// refused, because the reference implementation reads it as "disabled".
	TimeoutSeconds int32
	// UserData is handed to the server application with the connection.
	UserData [UserDataSize]byte
}

// ConnectToken is the parsed public connect token: what a client reads to
// connect. Private holds the part only the servers can decrypt.
type ConnectToken struct {
	ProtocolID        uint64
	CreateTimestamp   uint64 // unix seconds
	ExpireTimestamp   uint64 // unix seconds
	Nonce             [TokenNonceSize]byte
	Private           [PrivateTokenSize]byte
	TimeoutSeconds    int32
	ServerAddresses   []netip.AddrPort
	ClientToServerKey [KeySize]byte
	ServerToClientKey [KeySize]byte
}

// MakeConnectToken returns a fresh ConnectTokenSize-byte connect token and its
// parsed form. The per-connection keys and the nonce come from crypto/rand.
// It returns an error matching ErrInvalidToken that names the value when the
// address count is outside 1..32, an address is invalid, Expire is not after
// Create, Create is before the unix epoch or TimeoutSeconds is 0.
func MakeConnectToken(p TokenParams) ([]byte, *ConnectToken, error) {
	if n := len(p.ServerAddresses); n < 1 || n > MaxServerAddresses {
		return nil, nil, fmt.Errorf("%w: %d server addresses; the allowed range is 1 to %d", ErrInvalidToken, n, MaxServerAddresses)
	}
	for i, a := range p.ServerAddresses {
		if !a.IsValid() || a.Port() == 0 {
			return nil, nil, fmt.Errorf("%w: server address %d (%v) is not a valid address with a port", ErrInvalidToken, i, a)
		}
	}
	if p.Create.Unix() < 0 || !p.Expire.After(p.Create) || p.Expire.Unix() <= p.Create.Unix() {
		return nil, nil, fmt.Errorf("%w: expire %v must be at least a second after create %v, both after 1970", ErrInvalidToken, p.Expire, p.Create)
	}
	if p.TimeoutSeconds == 0 {
		return nil, nil, fmt.Errorf("%w: timeout 0 seconds; use a positive timeout, or a negative one to disable it", ErrInvalidToken)
	}
	t := &ConnectToken{
		ProtocolID:      p.ProtocolID,
		CreateTimestamp: uint64(p.Create.Unix()),
		ExpireTimestamp: uint64(p.Expire.Unix()),
		TimeoutSeconds:  p.TimeoutSeconds,
		ServerAddresses: make([]netip.AddrPort, len(p.ServerAddresses)),
	}
	for i, a := range p.ServerAddresses {
		t.ServerAddresses[i] = normalize(a)
	}
	if _, err := rand.Read(t.Nonce[:]); err != nil {
		return nil, nil, fmt.Errorf("udp: reading random nonce: %w", err)
	}
	if _, err := rand.Read(t.ClientToServerKey[:]); err != nil {
		return nil, nil, fmt.Errorf("udp: reading random key: %w", err)
	}
	if _, err := rand.Read(t.ServerToClientKey[:]); err != nil {
		return nil, nil, fmt.Errorf("udp: reading random key: %w", err)
	}
	priv := privateToken{
		clientID:       p.ClientID,
		timeoutSeconds: p.TimeoutSeconds,
		c2s:            t.ClientToServerKey,
		s2c:            t.ServerToClientKey,
		userData:       p.UserData,
	}
	priv.addrs.n = copy(priv.addrs.addrs[:], t.ServerAddresses)
	if err := sealPrivateToken(&t.Private, &priv, &p.PrivateKey, t.ProtocolID, t.ExpireTimestamp, &t.Nonce); err != nil {
		return nil, nil, err
	}
	return t.Marshal(), t, nil
}

// Marshal returns the ConnectTokenSize-byte wire form of t.
func (t *ConnectToken) Marshal() []byte {
	b := make([]byte, 0, ConnectTokenSize)
	b = append(b, version[:]...)
	b = binary.LittleEndian.AppendUint64(b, t.ProtocolID)
	b = binary.LittleEndian.AppendUint64(b, t.CreateTimestamp)
	b = binary.LittleEndian.AppendUint64(b, t.ExpireTimestamp)
	b = append(b, t.Nonce[:]...)
	b = append(b, t.Private[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(t.TimeoutSeconds))
	b = appendAddressList(b, t.ServerAddresses)
	b = append(b, t.ClientToServerKey[:]...)
	b = append(b, t.ServerToClientKey[:]...)
	return b[:ConnectTokenSize] // zero pad
}

// ParseConnectToken decodes a public connect token. It returns an error
// matching ErrInvalidToken when b is not ConnectTokenSize bytes, the version
// is not "NETCODE 1.02", the address list is malformed or the create
// timestamp is after the expire timestamp. It does not check the private
// part, which only a server can decrypt.
func ParseConnectToken(b []byte) (*ConnectToken, error) {
	if len(b) != ConnectTokenSize {
		return nil, fmt.Errorf("%w: %d bytes, want %d", ErrInvalidToken, len(b), ConnectTokenSize)
	}
	if [versionSize]byte(b[:versionSize]) != version {
		return nil, fmt.Errorf("%w: version %q, want %q", ErrInvalidToken, b[:versionSize-1], version[:versionSize-1])
	}
	t := &ConnectToken{}
	off := versionSize
	t.ProtocolID = binary.LittleEndian.Uint64(b[off:])
	t.CreateTimestamp = binary.LittleEndian.Uint64(b[off+8:])
	t.ExpireTimestamp = binary.LittleEndian.Uint64(b[off+16:])
	off += 24
	off += copy(t.Nonce[:], b[off:])
	off += copy(t.Private[:], b[off:])
	t.TimeoutSeconds = int32(binary.LittleEndian.Uint32(b[off:]))
	off += 4
	var l addressList
	n, err := readAddressList(b[off:], &l)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	off += n
	t.ServerAddresses = append([]netip.AddrPort(nil), l.slice()...)
	if off+2*KeySize > ConnectTokenSize {
		return nil, fmt.Errorf("%w: addresses overrun the keys", ErrInvalidToken)
	}
	off += copy(t.ClientToServerKey[:], b[off:])
	copy(t.ServerToClientKey[:], b[off:])
	if t.CreateTimestamp > t.ExpireTimestamp {
		return nil, fmt.Errorf("%w: create timestamp %d is after expire timestamp %d", ErrInvalidToken, t.CreateTimestamp, t.ExpireTimestamp)
	}
	return t, nil
}

// privateToken is the decrypted private part of a connect token. Its fields
// are fixed-size, so decoding it does not allocate.
type privateToken struct {
	clientID       uint64
	timeoutSeconds int32
	addrs          addressList
	c2s, s2c       [KeySize]byte
	userData       [UserDataSize]byte
}

// marshal writes the plaintext private part (PrivateTokenSize-macSize bytes)
// into dst.
func (p *privateToken) marshal(dst *[PrivateTokenSize - macSize]byte) {
	b := dst[:0]
	b = binary.LittleEndian.AppendUint64(b, p.clientID)
	b = binary.LittleEndian.AppendUint32(b, uint32(p.timeoutSeconds))
	b = appendAddressList(b, p.addrs.slice())
	b = append(b, p.c2s[:]...)
	b = append(b, p.s2c[:]...)
	b = append(b, p.userData[:]...)
	clear(dst[len(b):])
}

// errPrivateToken is returned when a decrypted private part is malformed.
var errPrivateToken = errors.New("udp: malformed private connect token")

// readPrivateToken decodes a plaintext private part into p.
func readPrivateToken(b []byte, p *privateToken) error {
	if len(b) != PrivateTokenSize-macSize {
		return errPrivateToken
	}
	p.clientID = binary.LittleEndian.Uint64(b)
	p.timeoutSeconds = int32(binary.LittleEndian.Uint32(b[8:]))
	n, err := readAddressList(b[12:], &p.addrs)
	if err != nil {
		return errPrivateToken
	}
	off := 12 + n
	if off+2*KeySize+UserDataSize > len(b) {
		return errPrivateToken
	}
	off += copy(p.c2s[:], b[off:])
	off += copy(p.s2c[:], b[off:])
	copy(p.userData[:], b[off:])
	return nil
}

// tokenAdditionalData builds the 29 bytes the private part is bound to:
// version, protocol ID and expire timestamp.
func tokenAdditionalData(ad *[tokenAdditionSize]byte, protocolID, expire uint64) {
	copy(ad[:], version[:])
	binary.LittleEndian.PutUint64(ad[versionSize:], protocolID)
	binary.LittleEndian.PutUint64(ad[versionSize+8:], expire)
}

// sealPrivateToken encrypts p into dst with XChaCha20-Poly1305.
func sealPrivateToken(dst *[PrivateTokenSize]byte, p *privateToken, key *[KeySize]byte, protocolID, expire uint64, nonce *[TokenNonceSize]byte) error {
	aead, err := chacha20poly1305.NewX(key[:])
	if err != nil {
		return fmt.Errorf("udp: private token cipher: %w", err)
	}
	var plain [PrivateTokenSize - macSize]byte
	p.marshal(&plain)
	var ad [tokenAdditionSize]byte
	tokenAdditionalData(&ad, protocolID, expire)
	aead.Seal(dst[:0], nonce[:], plain[:], ad[:])
	return nil
}

// openPrivateToken decrypts an encrypted private part with aead (an
// XChaCha20-Poly1305 under the private key) into p, using plain as scratch.
// It reports false when the tag does not verify or the plaintext is
// malformed.
func openPrivateToken(sc *scratch, aead cipher.AEAD, enc []byte, nonce []byte, protocolID, expire uint64, plain *[PrivateTokenSize - macSize]byte, p *privateToken) (authentic, wellFormed bool) {
	tokenAdditionalData(&sc.tad, protocolID, expire)
	if _, err := aead.Open(plain[:0], nonce, enc, sc.tad[:]); err != nil {
		return false, false
	}
	return true, readPrivateToken(plain[:], p) == nil
}
