package tokens_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/transport/udp"
	"github.com/ghostwire/ghostwire/transport/udp/tokens"
)

func TestClaimsRoundTrip(t *testing.T) {
	for _, c := range []tokens.Claims{
		{Room: "r", Identity: "p"},
		{Room: strings.Repeat("é", 32), Identity: strings.Repeat("x", 64), Data: make([]byte, tokens.MaxData)},
		{Room: "arena-7", Identity: "player 42", Data: []byte{0, 1, 2}},
	} {
		b, err := c.UserData()
		require.NoError(t, err)
		got, err := tokens.ParseClaims(b)
		require.NoError(t, err)
		assert.Equal(t, c.Room, got.Room)
		assert.Equal(t, c.Identity, got.Identity)
		assert.Equal(t, len(c.Data), len(got.Data))
	}
}

func TestClaimsRefused(t *testing.T) {
	for _, tc := range []struct {
		c    tokens.Claims
		want string
	}{
		{tokens.Claims{Identity: "p"}, "tokens: room of 0 bytes outside 1..64"},
		{tokens.Claims{Room: "r", Identity: strings.Repeat("x", 65)}, "tokens: identity of 65 bytes outside 1..64"},
		{tokens.Claims{Room: "r\x00", Identity: "p"}, `tokens: room "r\x00" holds an unprintable character U+0000`},
		{tokens.Claims{Room: "\xff", Identity: "p"}, `tokens: room "\xff" is not UTF-8`},
		{tokens.Claims{Room: "r", Identity: "p", Data: make([]byte, tokens.MaxData+1)}, "tokens: data of 124 bytes over 123"},
	} {
		_, err := tc.c.UserData()
		assert.EqualError(t, err, tc.want)
	}
	_, err := tokens.ParseClaims([udp.UserDataSize]byte{})
	assert.ErrorIs(t, err, tokens.ErrNoClaims, "user data another token maker wrote")
}

func FuzzParseClaims(f *testing.F) {
	c := tokens.Claims{Room: "arena", Identity: "p1", Data: []byte("hi")}
	b, _ := c.UserData()
	f.Add(b[:])
	f.Add(make([]byte, udp.UserDataSize))
	f.Fuzz(func(t *testing.T, p []byte) {
		var b [udp.UserDataSize]byte
		copy(b[:], p)
		got, err := tokens.ParseClaims(b)
		if err != nil {
			return
		}
		again, err := got.UserData()
		require.NoError(t, err, "what parses encodes")
		back, err := tokens.ParseClaims(again)
		require.NoError(t, err)
		require.Equal(t, got.Room, back.Room)
		require.Equal(t, got.Identity, back.Identity)
	})
}
