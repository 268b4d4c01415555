package udp

import (
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/chacha20poly1305"
)

var testServerAddr = netip.MustParseAddrPort("127.0.0.1:40000")

// testParams returns token parameters for client 77 and testServerAddr, valid
// for a minute from now.
func testParams() TokenParams {
	now := time.Now()
	p := TokenParams{
		PrivateKey:      vectorKey(),
		ProtocolID:      vectorProtocol,
		ClientID:        77,
		ServerAddresses: []netip.AddrPort{testServerAddr},
		Create:          now,
		Expire:          now.Add(time.Minute),
		TimeoutSeconds:  5,
	}
	copy(p.UserData[:], "user data")
	return p
}

func makeTestToken(t testing.TB, p TokenParams) ([]byte, *ConnectToken) {
	t.Helper()
	b, tok, err := MakeConnectToken(p)
	require.NoError(t, err)
	return b, tok
}

func TestConnectTokenRoundTrip(t *testing.T) {
	p := testParams()
	p.ServerAddresses = append(p.ServerAddresses, netip.MustParseAddrPort("[2001:db8::7]:9"))
	b, tok := makeTestToken(t, p)
	require.Len(t, b, ConnectTokenSize)
	assert.Equal(t, "NETCODE 1.02\x00", string(b[:13]))

	got, err := ParseConnectToken(b)
	require.NoError(t, err)
	assert.Equal(t, tok, got)
	assert.Equal(t, p.ServerAddresses, got.ServerAddresses)
	assert.Equal(t, uint64(p.Expire.Unix()), got.ExpireTimestamp)
	assert.Equal(t, int32(5), got.TimeoutSeconds)

	// The private part opens with the private key and holds what went in.
	aead, err := chacha20poly1305.NewX(p.PrivateKey[:])
	require.NoError(t, err)
	var plain [PrivateTokenSize - macSize]byte
	var priv privateToken
	authentic, wellFormed := openPrivateToken(&scratch{}, aead, got.Private[:], got.Nonce[:], got.ProtocolID, got.ExpireTimestamp, &plain, &priv)
	require.True(t, authentic)
	require.True(t, wellFormed)
	assert.Equal(t, uint64(77), priv.clientID)
	assert.Equal(t, p.UserData, priv.userData)
	assert.Equal(t, tok.ClientToServerKey, priv.c2s)
	assert.Equal(t, tok.ServerToClientKey, priv.s2c)
	assert.Equal(t, p.ServerAddresses, priv.addrs.slice())

	// The expire timestamp is bound to the private part.
	authentic, _ = openPrivateToken(&scratch{}, aead, got.Private[:], got.Nonce[:], got.ProtocolID, got.ExpireTimestamp+1, &plain, &priv)
	assert.False(t, authentic)
}

func TestMakeConnectTokenRejects(t *testing.T) {
	for name, mutate := range map[string]func(*TokenParams){
		"no address":      func(p *TokenParams) { p.ServerAddresses = nil },
		"33 addresses":    func(p *TokenParams) { p.ServerAddresses = make([]netip.AddrPort, 33) },
		"invalid address": func(p *TokenParams) { p.ServerAddresses = []netip.AddrPort{{}} },
		"port 0":          func(p *TokenParams) { p.ServerAddresses = []netip.AddrPort{netip.MustParseAddrPort("1.2.3.4:0")} },
		"expire = create": func(p *TokenParams) { p.Expire = p.Create },
		"timeout 0":       func(p *TokenParams) { p.TimeoutSeconds = 0 },
	} {
		p := testParams()
		mutate(&p)
		_, _, err := MakeConnectToken(p)
		assert.ErrorIs(t, err, ErrInvalidToken, name)
	}
	p := testParams()
	p.TimeoutSeconds = -1
	_, tok, err := MakeConnectToken(p)
	require.NoError(t, err, "a negative timeout disables it")
	assert.Equal(t, int32(-1), tok.TimeoutSeconds)
}

func TestParseConnectTokenRejects(t *testing.T) {
	b, _ := makeTestToken(t, testParams())
	_, err := ParseConnectToken(b[:100])
	assert.ErrorIs(t, err, ErrInvalidToken)

	bad := append([]byte(nil), b...)
	bad[0] = 'X'
	_, err = ParseConnectToken(bad)
	assert.ErrorIs(t, err, ErrInvalidToken)

	bad = append([]byte(nil), b...)
	addrCount := versionSize + 24 + TokenNonceSize + PrivateTokenSize + 4
	bad[addrCount] = 0
	_, err = ParseConnectToken(bad)
	assert.ErrorIs(t, err, ErrInvalidToken)

	bad = append([]byte(nil), b...)
	bad[versionSize+8+7] = 0xff // create timestamp far in the future
	_, err = ParseConnectToken(bad)
	assert.ErrorIs(t, err, ErrInvalidToken)
}

func TestPrivateTokenFitsWithMaxAddresses(t *testing.T) {
	var p privateToken
	p.addrs.n = MaxServerAddresses
	for i := range p.addrs.addrs {
		p.addrs.addrs[i] = netip.MustParseAddrPort("[2001:db8::1]:1")
	}
	var plain [PrivateTokenSize - macSize]byte
	p.marshal(&plain)
	var q privateToken
	require.NoError(t, readPrivateToken(plain[:], &q))
	assert.Equal(t, p, q)
}

func TestChallengeTokenRoundTrip(t *testing.T) {
	key := vectorKey()
	aead, _ := chacha20poly1305.New(key[:])
	in := challengeToken{clientID: 9}
	copy(in.userData[:], "hello")
	var enc [ChallengeTokenSize]byte
	sealChallengeToken(enc[:], &scratch{}, aead, 1<<63, &in)
	var plain [ChallengeTokenSize - macSize]byte
	var out challengeToken
	require.True(t, openChallengeToken(&scratch{}, aead, 1<<63, enc[:], &plain, &out))
	assert.Equal(t, in, out)
	assert.False(t, openChallengeToken(&scratch{}, aead, 1<<63+1, enc[:], &plain, &out), "other sequence")
	enc[0] ^= 1
	assert.False(t, openChallengeToken(&scratch{}, aead, 1<<63, enc[:], &plain, &out), "flipped byte")
}

func FuzzParseConnectToken(f *testing.F) {
	b, _ := makeTestToken(f, testParams())
	f.Add(b)
	p := testParams()
	p.ServerAddresses = []netip.AddrPort{netip.MustParseAddrPort("[::1]:1"), testServerAddr}
	b, _ = makeTestToken(f, p)
	f.Add(b)
	f.Add([]byte("NETCODE 1.02\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tok, err := ParseConnectToken(b)
		if err != nil {
			return
		}
		// A parsed token marshals back to a token that parses the same.
		// (Compared as bytes: reflection over 2 KiB of arrays would cost the
		// fuzzer a hundred times the parse.)
		m := tok.Marshal()
		again, err := ParseConnectToken(m)
		require.NoError(t, err)
		assert.Equal(t, m, again.Marshal())
	})
}

func FuzzPrivateToken(f *testing.F) {
	var plain [PrivateTokenSize - macSize]byte
	p := privateToken{clientID: 1, timeoutSeconds: 5}
	p.addrs.n = 2
	p.addrs.addrs[0] = testServerAddr
	p.addrs.addrs[1] = netip.MustParseAddrPort("[::1]:2")
	p.marshal(&plain)
	f.Add(plain[:])
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		var p privateToken
		if readPrivateToken(b, &p) != nil {
			return
		}
		var out, again [PrivateTokenSize - macSize]byte
		p.marshal(&out)
		var q privateToken
		require.NoError(t, readPrivateToken(out[:], &q))
		q.marshal(&again)
		assert.Equal(t, out[:], again[:])
	})
}

func FuzzChallengeToken(f *testing.F) {
	key := vectorKey()
	aead, _ := chacha20poly1305.New(key[:])
	var enc [ChallengeTokenSize]byte
	sealChallengeToken(enc[:], &scratch{}, aead, 5, &challengeToken{clientID: 3})
	f.Add(uint64(5), enc[:])
	f.Add(uint64(0), []byte{1})
	f.Fuzz(func(t *testing.T, seq uint64, b []byte) {
		var plain [ChallengeTokenSize - macSize]byte
		var out challengeToken
		if openChallengeToken(&scratch{}, aead, seq, b, &plain, &out) {
			var again [ChallengeTokenSize]byte
			sealChallengeToken(again[:], &scratch{}, aead, seq, &out)
			assert.Equal(t, b, again[:])
		}
		// The plaintext decoder takes any 284 bytes.
		if len(b) >= len(plain) {
			copy(plain[:], b)
			readChallengeToken(&plain, &out)
		}
	})
}

// TestConnectTokenLayout checks every public field at the offset STANDARD.md
// gives, and the zero padding, independently of ParseConnectToken.
func TestConnectTokenLayout(t *testing.T) {
	p := testParams()
	p.ServerAddresses = []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:40000"), netip.MustParseAddrPort("[2001:db8::1]:2")}
	p.TimeoutSeconds = -7
	b, tok := makeTestToken(t, p)
	le := binary.LittleEndian
	assert.Equal(t, "NETCODE 1.02\x00", string(b[0:13]))
	assert.Equal(t, uint64(vectorProtocol), le.Uint64(b[13:]))
	assert.Equal(t, uint64(p.Create.Unix()), le.Uint64(b[21:]))
	assert.Equal(t, uint64(p.Expire.Unix()), le.Uint64(b[29:]))
	assert.Equal(t, tok.Nonce[:], b[37:61])
	assert.Equal(t, tok.Private[:], b[61:1085])
	assert.Equal(t, int32(-7), int32(le.Uint32(b[1085:])))
	assert.Equal(t, uint32(2), le.Uint32(b[1089:]))
	assert.Equal(t, "017f000001409c", hex.EncodeToString(b[1093:1100]))
	assert.Equal(t, byte(2), b[1100])
	keys := 1100 + 19
	assert.Equal(t, tok.ClientToServerKey[:], b[keys:keys+32])
	assert.Equal(t, tok.ServerToClientKey[:], b[keys+32:keys+64])
	assert.Equal(t, make([]byte, ConnectTokenSize-keys-64), b[keys+64:], "zero pad")
}

func TestPrivateAndChallengeLayout(t *testing.T) {
	p := privateToken{clientID: 0x0102030405060708, timeoutSeconds: 5, c2s: [32]byte{1}, s2c: [32]byte{2}, userData: [256]byte{3}}
	p.addrs.n = 1
	p.addrs.addrs[0] = netip.MustParseAddrPort("127.0.0.1:40000")
	var plain [PrivateTokenSize - macSize]byte
	p.marshal(&plain)
	assert.Equal(t, "0807060504030201"+"05000000"+"01000000"+"017f000001409c", hex.EncodeToString(plain[:23]))
	assert.Equal(t, byte(1), plain[23])
	assert.Equal(t, byte(2), plain[23+32])
	assert.Equal(t, byte(3), plain[23+64])
	assert.Equal(t, make([]byte, len(plain)-(23+64+256)), plain[23+64+256:], "zero pad to 1008")

	key := vectorKey()
	aead, _ := chacha20poly1305.New(key[:])
	var enc [ChallengeTokenSize]byte
	ch := challengeToken{clientID: 9, userData: [256]byte{7}}
	sealChallengeToken(enc[:], &scratch{}, aead, 3, &ch)
	nonce := make([]byte, 12)
	nonce[4] = 3 // four zero bytes, then the sequence little-endian
	opened, err := aead.Open(nil, nonce, enc[:], nil)
	require.NoError(t, err)
	require.Len(t, opened, 284)
	assert.Equal(t, uint64(9), binary.LittleEndian.Uint64(opened))
	assert.Equal(t, byte(7), opened[8])
	assert.Equal(t, make([]byte, 284-8-256), opened[8+256:], "zero pad to 300 with the tag")
}
