package udp

import (
	"crypto/cipher"
	"encoding/binary"

	"github.com/ghostwire/ghostwire/transport"
)

// Packet types of netcode 1.02.
const (
	packetRequest    = 0
	packetDenied     = 1
	packetChallenge  = 2
	packetResponse   = 3
	packetKeepAlive  = 4
	packetPayload    = 5
	packetDisconnect = 6
	packetTypes      = 7
)

// Packet sizes, in bytes.
const (
	// requestPacketSize is the only valid size of a connection request:
	// prefix, version, protocol ID, expire timestamp, nonce, private part.
	requestPacketSize = 1 + versionSize + 8 + 8 + TokenNonceSize + PrivateTokenSize
	challengeBodySize = 8 + ChallengeTokenSize
	keepAliveBodySize = 4 + 4
	minPacketSize     = 1 + 1 + macSize
	// maxPacketSize is the largest valid packet: a full payload with an
	// eight-byte sequence.
	maxPacketSize = 1 + 8 + transport.MaxDatagramSize + macSize
	// maxChallengePacketSize is the largest packet a server sends to an
	// address that has not answered a challenge; the server's global
	// sequence is always eight bytes long.
	maxChallengePacketSize = 1 + 8 + challengeBodySize + macSize
	deniedPacketSize       = 1 + 8 + macSize
)

// The amplification guard rests on this: one request never buys a reply
// larger than itself. The constants fail to compile if that stops being true.
const (
	_ = uint(requestPacketSize - maxChallengePacketSize)
	_ = uint(requestPacketSize - deniedPacketSize)
)

// sequenceBytes returns how many bytes seq needs on the wire (1..8).
func sequenceBytes(seq uint64) int {
	n := 1
	for seq >= 0x100 {
		seq >>= 8
		n++
	}
	return n
}

// packetAdditionalData builds the 22 bytes every encrypted packet is bound
// to: version, protocol ID and the prefix byte.
func packetAdditionalData(ad *[versionSize + 8 + 1]byte, protocolID uint64, prefix byte) {
	copy(ad[:], version[:])
	binary.LittleEndian.PutUint64(ad[versionSize:], protocolID)
	ad[versionSize+8] = prefix
}

// scratch holds the nonce and associated data handed to an AEAD. Slices of
// a function's local arrays would escape through the cipher.AEAD interface
// and cost an allocation per packet; each owner keeps one scratch under its
// lock instead.
type scratch struct {
	nonce [12]byte
	ad    [versionSize + 8 + 1]byte
	tad   [tokenAdditionSize]byte
	body  [challengeBodySize]byte
}

// sealPacket writes an encrypted packet of type typ with sequence seq and
// plaintext body into dst, which must have room for
// 1+8+len(body)+macSize bytes, and returns the packet.
func sealPacket(dst []byte, sc *scratch, aead cipher.AEAD, protocolID uint64, typ byte, seq uint64, body []byte) []byte {
	n := sequenceBytes(seq)
	prefix := byte(n<<4) | typ
	b := append(dst[:0], prefix)
	for s, i := seq, 0; i < n; i++ {
		b = append(b, byte(s))
		s >>= 8
	}
	packetAdditionalData(&sc.ad, protocolID, prefix)
	packetNonce(&sc.nonce, seq)
	return aead.Seal(b, sc.nonce[:], body, sc.ad[:])
}

// readResult is the outcome of reading an encrypted packet.
type readResult uint8

const (
	readOK        readResult = iota
	readMalformed            // size, type or sequence length impossible
	readReplayed             // rejected by the replay window
	readAuth                 // failed authentication
	readBadSize              // authentic, but the body has the wrong size for its type
)

// peekHeader checks the parts of an encrypted packet that can be checked
// before any crypto and returns its type and sequence and where the
// encrypted body starts. It reports false for a packet shorter than 18
// bytes, of type 0 or >= 7, or with a sequence length outside 1..8 or
// longer than the packet.
func peekHeader(pkt []byte) (typ byte, seq uint64, body int, ok bool) {
	if len(pkt) < minPacketSize {
		return 0, 0, 0, false
	}
	typ = pkt[0] & 0x0f
	if typ == packetRequest || typ >= packetTypes {
		return 0, 0, 0, false
	}
	n := int(pkt[0] >> 4)
	if n < 1 || n > 8 || len(pkt) < 1+n+macSize {
		return 0, 0, 0, false
	}
	for i := n; i >= 1; i-- {
		seq = seq<<8 | uint64(pkt[i])
	}
	return typ, seq, 1 + n, true
}

// bodySizeOK reports whether a decrypted body of n bytes fits packet type typ.
func bodySizeOK(typ byte, n int) bool {
	switch typ {
	case packetDenied, packetDisconnect:
		return n == 0
	case packetChallenge, packetResponse:
		return n == challengeBodySize
	case packetKeepAlive:
		return n == keepAliveBodySize
	case packetPayload:
		return n >= 1 && n <= transport.MaxDatagramSize
	}
	return false
}

// openPacket authenticates and decrypts an encrypted packet whose header
// peekHeader accepted, in the order the netcode errata fix: replay check
// (types >= 4, when replay is not nil), decrypt, advance the replay window,
// then the body size for the type. The plaintext goes into plain, which must
// hold len(pkt) bytes; the returned body aliases it. It does not allocate.
func openPacket(pkt []byte, sc *scratch, typ byte, seq uint64, bodyAt int, aead cipher.AEAD, protocolID uint64, replay *replayWindow, plain []byte) ([]byte, readResult) {
	if replay != nil && typ >= packetKeepAlive && replay.seen(seq) {
		return nil, readReplayed
	}
	packetAdditionalData(&sc.ad, protocolID, pkt[0])
	packetNonce(&sc.nonce, seq)
	body, err := aead.Open(plain[:0], sc.nonce[:], pkt[bodyAt:], sc.ad[:])
	if err != nil {
		return nil, readAuth
	}
	if replay != nil && typ >= packetKeepAlive {
		replay.advance(seq)
	}
	if !bodySizeOK(typ, len(body)) {
		return nil, readBadSize
	}
	return body, readOK
}

// requestPacket is a decoded connection request (before its private part is
// decrypted). Its slices alias the packet.
type requestPacket struct {
	protocolID uint64
	expire     uint64
	nonce      []byte
	private    []byte // encrypted, PrivateTokenSize bytes; its last 16 bytes are the token's MAC
}

// readRequest decodes a connection request. It reports false when pkt is not
// requestPacketSize bytes, does not start with a zero prefix or carries
// another version.
func readRequest(pkt []byte, r *requestPacket) bool {
	if len(pkt) != requestPacketSize || pkt[0] != packetRequest {
		return false
	}
	if [versionSize]byte(pkt[1:1+versionSize]) != version {
		return false
	}
	off := 1 + versionSize
	r.protocolID = binary.LittleEndian.Uint64(pkt[off:])
	r.expire = binary.LittleEndian.Uint64(pkt[off+8:])
	off += 16
	r.nonce = pkt[off : off+TokenNonceSize]
	off += TokenNonceSize
	r.private = pkt[off : off+PrivateTokenSize]
	return true
}

// appendRequest writes the connection request for token t into dst.
func appendRequest(dst []byte, t *ConnectToken) []byte {
	b := append(dst[:0], packetRequest)
	b = append(b, version[:]...)
	b = binary.LittleEndian.AppendUint64(b, t.ProtocolID)
	b = binary.LittleEndian.AppendUint64(b, t.ExpireTimestamp)
	b = append(b, t.Nonce[:]...)
	return append(b, t.Private[:]...)
}
