package udp

import (
	"crypto/cipher"
	"encoding/binary"
)

// ChallengeTokenSize is the size of the encrypted challenge token, tag
// included.
const ChallengeTokenSize = 300

// challengeToken is what a server seals into a challenge packet: it lets the
// server rebuild the connection from the client's response without keeping
// the user data per pending handshake. Only the server can open it.
type challengeToken struct {
	clientID uint64
	userData [UserDataSize]byte
}

// packetNonce builds the 12-byte IETF nonce netcode uses for packets and
// challenge tokens: four zero bytes, then the sequence little-endian.
func packetNonce(n *[12]byte, seq uint64) {
	*n = [12]byte{}
	binary.LittleEndian.PutUint64(n[4:], seq)
}

// sealChallengeToken encrypts t into dst (ChallengeTokenSize bytes) with the
// server's challenge AEAD under sequence seq, without associated data.
func sealChallengeToken(dst []byte, sc *scratch, aead cipher.AEAD, seq uint64, t *challengeToken) {
	var plain [ChallengeTokenSize - macSize]byte
	binary.LittleEndian.PutUint64(plain[:], t.clientID)
	copy(plain[8:], t.userData[:])
	packetNonce(&sc.nonce, seq)
	aead.Seal(dst[:0], sc.nonce[:], plain[:], nil)
}

// openChallengeToken decrypts an encrypted challenge token into t, using
// plain as scratch. It reports false when enc is not ChallengeTokenSize
// bytes or the tag does not verify.
func openChallengeToken(sc *scratch, aead cipher.AEAD, seq uint64, enc []byte, plain *[ChallengeTokenSize - macSize]byte, t *challengeToken) bool {
	if len(enc) != ChallengeTokenSize {
		return false
	}
	packetNonce(&sc.nonce, seq)
	if _, err := aead.Open(plain[:0], sc.nonce[:], enc, nil); err != nil {
		return false
	}
	readChallengeToken(plain, t)
	return true
}

// readChallengeToken decodes a plaintext challenge token. Every 284-byte
// plaintext is a valid token: the padding is not checked, as the reference
// does not check it either.
func readChallengeToken(plain *[ChallengeTokenSize - macSize]byte, t *challengeToken) {
	t.clientID = binary.LittleEndian.Uint64(plain[:])
	copy(t.userData[:], plain[8:])
}
