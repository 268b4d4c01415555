package tokens_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/udp"
	"github.com/ghostwire/ghostwire/transport/udp/tokens"
)

// tokenConn is a server connection with a token's user data, as a
// udp.ServerConn has.
type tokenConn struct {
	transport.Conn
	ud [udp.UserDataSize]byte
}

func (c *tokenConn) UserData() [udp.UserDataSize]byte { return c.ud }

// The identity of a connection is its token's: none from a connection
// without token user data, or whose user data holds no claims.
func TestIdentityOfAConnection(t *testing.T) {
	c := tokens.Claims{Room: "arena-7", Identity: "player 42"}
	ud, err := c.UserData()
	require.NoError(t, err)
	id, ok := tokens.Identity(&tokenConn{ud: ud})
	assert.True(t, ok)
	assert.Equal(t, "player 42", id)
	got, err := tokens.ConnClaims(&tokenConn{ud: ud})
	require.NoError(t, err)
	assert.Equal(t, "arena-7", got.Room)

	_, ok = tokens.Identity(&tokenConn{})
	assert.False(t, ok, "user data this package did not write")
	_, err = tokens.ConnClaims(struct{ transport.Conn }{})
	assert.True(t, errors.Is(err, tokens.ErrNoClaims))
	assert.ErrorContains(t, err, "carries no token user data")
	_, ok = tokens.Identity(struct{ transport.Conn }{})
	assert.False(t, ok)
}
