package udp

import (
	"encoding/hex"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/chacha20poly1305"
)

// vectorKey is bytes 0x00..0x1f, the conformance generator's key.
func vectorKey() [KeySize]byte {
	var k [KeySize]byte
	for i := range k {
		k[i] = byte(i)
	}
	return k
}

const vectorProtocol = 0x1234567890ABCDEF

func TestKeepAliveKnownAnswers(t *testing.T) {
	key := vectorKey()
	aead, err := chacha20poly1305.New(key[:])
	require.NoError(t, err)
	body := []byte{3, 0, 0, 0, 32, 0, 0, 0} // client index 3, max clients 32
	for _, tc := range []struct {
		seq  uint64
		want string
	}{
		{0, "14001bb842318de6a6d1ea9c6dedef680ec6a1528c6db35d5ce7"},
		{256, "240001ff81f979d58a2a1f2d9c64a6ababb9903685c1cb7345e2e1"},
		{math.MaxUint64, "84ffffffffffffffff538355438205b22c890388b4e03971e4c6a7953a60668dca"},
	} {
		var buf [maxPacketSize]byte
		got := sealPacket(buf[:], &scratch{}, aead, vectorProtocol, packetKeepAlive, tc.seq, body)
		assert.Equal(t, tc.want, hex.EncodeToString(got), "sequence %d", tc.seq)

		typ, seq, at, ok := peekHeader(got)
		require.True(t, ok)
		var plain [maxPacketSize]byte
		var w replayWindow
		opened, res := openPacket(got, &scratch{}, typ, seq, at, aead, vectorProtocol, &w, plain[:])
		require.Equal(t, readOK, res, "sequence %d", tc.seq)
		assert.Equal(t, body, opened)
		assert.Equal(t, tc.seq, seq)
	}
}

func TestSequenceBytes(t *testing.T) {
	for _, tc := range []struct {
		seq  uint64
		want int
	}{{0, 1}, {0xff, 1}, {0x100, 2}, {1000, 2}, {1 << 63, 8}, {math.MaxUint64, 8}} {
		assert.Equal(t, tc.want, sequenceBytes(tc.seq), "sequence %#x", tc.seq)
	}
}

func TestSequenceOnTheWire(t *testing.T) {
	key := vectorKey()
	aead, _ := chacha20poly1305.New(key[:])
	var buf [maxPacketSize]byte
	p := sealPacket(buf[:], &scratch{}, aead, 1, packetDisconnect, 1000, nil)
	assert.Equal(t, []byte{0x26, 0xe8, 0x03}, p[:3], "1000 is two bytes, low byte first")
	p = sealPacket(buf[:], &scratch{}, aead, 1, packetDisconnect, 0, nil)
	assert.Equal(t, []byte{0x16, 0x00}, p[:2], "0 still takes one byte")
}

func TestOpenPacketRejects(t *testing.T) {
	key := vectorKey()
	aead, _ := chacha20poly1305.New(key[:])
	var buf [maxPacketSize]byte
	pkt := sealPacket(buf[:], &scratch{}, aead, 7, packetPayload, 42, []byte("hello"))
	var plain [maxPacketSize]byte

	t.Run("flipped byte", func(t *testing.T) {
		for i := range pkt {
			bad := append([]byte(nil), pkt...)
			bad[i] ^= 0x40
			typ, seq, at, ok := peekHeader(bad)
			if !ok {
				continue // the prefix no longer parses: refused before crypto
			}
			_, res := openPacket(bad, &scratch{}, typ, seq, at, aead, 7, nil, plain[:])
			assert.Equal(t, readAuth, res, "byte %d flipped", i)
		}
	})
	t.Run("other protocol", func(t *testing.T) {
		typ, seq, at, _ := peekHeader(pkt)
		_, res := openPacket(pkt, &scratch{}, typ, seq, at, aead, 8, nil, plain[:])
		assert.Equal(t, readAuth, res)
	})
	t.Run("replayed", func(t *testing.T) {
		var w replayWindow
		typ, seq, at, _ := peekHeader(pkt)
		_, res := openPacket(pkt, &scratch{}, typ, seq, at, aead, 7, &w, plain[:])
		require.Equal(t, readOK, res)
		_, res = openPacket(pkt, &scratch{}, typ, seq, at, aead, 7, &w, plain[:])
		assert.Equal(t, readReplayed, res)
	})
	t.Run("bad size is checked after decrypt and still advances the window", func(t *testing.T) {
		bad := sealPacket(buf[:], &scratch{}, aead, 7, packetKeepAlive, 9, []byte{1, 2, 3})
		var w replayWindow
		typ, seq, at, _ := peekHeader(bad)
		_, res := openPacket(bad, &scratch{}, typ, seq, at, aead, 7, &w, plain[:])
		assert.Equal(t, readBadSize, res)
		assert.True(t, w.seen(9))
	})
	t.Run("headers", func(t *testing.T) {
		for name, p := range map[string][]byte{
			"short":           make([]byte, minPacketSize-1),
			"type 7":          append([]byte{0x17}, make([]byte, 20)...),
			"type 0":          append([]byte{0x10}, make([]byte, 20)...),
			"0 seq bytes":     append([]byte{0x05}, make([]byte, 20)...),
			"9 seq bytes":     append([]byte{0x95}, make([]byte, 20)...),
			"seq past end":    append([]byte{0x85}, make([]byte, 20)...),
			"no room for tag": append([]byte{0x85}, make([]byte, 8+15)...),
		} {
			_, _, _, ok := peekHeader(p)
			assert.False(t, ok, name)
		}
	})
}

func TestRequestRoundTrip(t *testing.T) {
	_, tok := makeTestToken(t, testParams())
	var buf [requestPacketSize]byte
	pkt := appendRequest(buf[:0], tok)
	require.Len(t, pkt, requestPacketSize)
	var r requestPacket
	require.True(t, readRequest(pkt, &r))
	assert.Equal(t, tok.ProtocolID, r.protocolID)
	assert.Equal(t, tok.ExpireTimestamp, r.expire)
	assert.Equal(t, tok.Nonce[:], r.nonce)
	assert.Equal(t, tok.Private[:], r.private)

	assert.False(t, readRequest(pkt[:len(pkt)-1], &r), "short")
	bad := append([]byte(nil), pkt...)
	bad[5] = 'X'
	assert.False(t, readRequest(bad, &r), "version")
}

func TestAmplificationInvariant(t *testing.T) {
	// Every reply to an unproven address is smaller than the request it answers.
	assert.Equal(t, 1078, requestPacketSize)
	assert.Equal(t, 333, maxChallengePacketSize)
	assert.Equal(t, 25, deniedPacketSize)
	assert.Less(t, maxChallengePacketSize, requestPacketSize)
	assert.Less(t, deniedPacketSize, requestPacketSize)
}

func FuzzPacket(f *testing.F) {
	key := vectorKey()
	aead, _ := chacha20poly1305.New(key[:])
	var buf [maxPacketSize]byte
	for typ, body := range map[byte][]byte{
		packetDenied:     nil,
		packetChallenge:  make([]byte, challengeBodySize),
		packetResponse:   make([]byte, challengeBodySize),
		packetKeepAlive:  {3, 0, 0, 0, 32, 0, 0, 0},
		packetPayload:    []byte("payload"),
		packetDisconnect: nil,
	} {
		f.Add(append([]byte(nil), sealPacket(buf[:], &scratch{}, aead, vectorProtocol, typ, 1000, body)...))
	}
	f.Add([]byte{})
	f.Add([]byte{0x95, 1, 2})
	f.Fuzz(func(t *testing.T, pkt []byte) {
		typ, seq, at, ok := peekHeader(pkt)
		if !ok {
			return
		}
		var plain [readBufferSize]byte
		var w replayWindow
		body, res := openPacket(pkt, &scratch{}, typ, seq, at, aead, vectorProtocol, &w, plain[:])
		if res == readOK {
			// Whatever authenticates re-seals to the same bytes.
			again := sealPacket(buf[:], &scratch{}, aead, vectorProtocol, typ, seq, body)
			if sequenceBytes(seq) == int(pkt[0]>>4) {
				assert.Equal(t, pkt, again)
			}
			assert.True(t, bodySizeOK(typ, len(body)))
		}
	})
}

func FuzzRequest(f *testing.F) {
	var tok ConnectToken
	tok.ProtocolID = vectorProtocol
	var buf [requestPacketSize]byte
	f.Add(append([]byte(nil), appendRequest(buf[:0], &tok)...))
	f.Add([]byte{0})
	f.Fuzz(func(t *testing.T, pkt []byte) {
		var r requestPacket
		if readRequest(pkt, &r) {
			assert.Len(t, r.private, PrivateTokenSize)
			assert.Len(t, r.nonce, TokenNonceSize)
		}
	})
}
