package tokens

import (
	"fmt"

	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/udp"
)

// ConnClaims returns the claims of the connect token a server connection
// was admitted with (a udp.ServerConn's user data; the connection may be
// anything with that UserData method). It errors when c carries no token
// user data, and as ParseClaims does.
func ConnClaims(c transport.Conn) (Claims, error) {
	u, ok := c.(interface{ UserData() [udp.UserDataSize]byte })
	if !ok {
		return Claims{}, fmt.Errorf("%w: a %T carries no token user data", ErrNoClaims, c)
	}
	return ParseClaims(u.UserData())
}

// Identity returns the identity of the claims c was admitted with: the
// systems.ServerOptions.Identity of a server behind connect tokens, so
// that a player's new connection (a new token for the same room and
// identity) takes back the place of one it lost. ok is false when c
// carries no claims.
func Identity(c transport.Conn) (identity string, ok bool) {
	claims, err := ConnClaims(c)
	if err != nil {
		return "", false
	}
	return claims.Identity, true
}
