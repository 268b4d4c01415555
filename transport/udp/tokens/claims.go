package tokens

import (
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/ghostwire/ghostwire/transport/udp"
)

// Limits of Claims.
const (
	MaxRoom     = 64 // bytes of a room name
	MaxIdentity = 64 // bytes of a client identity
	// MaxData is what is left of the token's user data for the game.
	MaxData = udp.UserDataSize - 1 - 1 - MaxRoom - 1 - MaxIdentity - 2
)

// claimsVersion is the first byte of the user data this package writes.
const claimsVersion = 1

// Claims is what a connect token says of its holder, in the token's
// encrypted user data, which only the server reads: the room it may
// join and its identity (a matchmaker's player ID), both chosen by the
// token service, never by the client, and the game's own data.
type Claims struct {
	Room     string
	Identity string
	Data     []byte
}

// Check refuses claims this package cannot carry, naming the field: an
// empty or long room or identity, one that is not printable UTF-8, or
// data longer than MaxData.
func (c *Claims) Check() error {
	for _, f := range []struct{ name, v string }{{"room", c.Room}, {"identity", c.Identity}} {
		if len(f.v) < 1 || len(f.v) > MaxRoom {
			return fmt.Errorf("tokens: %s of %d bytes outside 1..%d", f.name, len(f.v), MaxRoom)
		}
		if !utf8.ValidString(f.v) {
			return fmt.Errorf("tokens: %s %q is not UTF-8", f.name, f.v)
		}
		for _, r := range f.v {
			if !unicode.IsPrint(r) {
				return fmt.Errorf("tokens: %s %q holds an unprintable character %U", f.name, f.v, r)
			}
		}
	}
	if len(c.Data) > MaxData {
		return fmt.Errorf("tokens: data of %d bytes over %d", len(c.Data), MaxData)
	}
	return nil
}

// UserData encodes the claims as a token's user data. It errors as Check
// does.
func (c *Claims) UserData() ([udp.UserDataSize]byte, error) {
	var b [udp.UserDataSize]byte
	if err := c.Check(); err != nil {
		return b, err
	}
	b[0] = claimsVersion
	i := 1
	for _, s := range []string{c.Room, c.Identity} {
		b[i] = byte(len(s))
		i += 1 + copy(b[i+1:], s)
	}
	b[i], b[i+1] = byte(len(c.Data)), byte(len(c.Data)>>8)
	copy(b[i+2:], c.Data)
	return b, nil
}

// ErrNoClaims is returned by ParseClaims for user data this package did
// not write.
var ErrNoClaims = errors.New("tokens: the user data holds no claims")

// ParseClaims decodes the claims of a connection's user data
// (udp.ServerConn.UserData). It errors on user data it did not write or
// that Check refuses; the server built the token, but a key shared with
// another token maker could carry anything.
func ParseClaims(b [udp.UserDataSize]byte) (Claims, error) {
	if b[0] != claimsVersion {
		return Claims{}, ErrNoClaims
	}
	var c Claims
	i := 1
	for _, dst := range []*string{&c.Room, &c.Identity} {
		n := int(b[i])
		if n > MaxRoom || i+1+n > len(b) {
			return Claims{}, fmt.Errorf("%w: a length %d past the end", ErrNoClaims, n)
		}
		*dst = string(b[i+1 : i+1+n])
		i += 1 + n
	}
	n := int(b[i]) | int(b[i+1])<<8
	if n > MaxData || i+2+n > len(b) {
		return Claims{}, fmt.Errorf("%w: data of %d bytes", ErrNoClaims, n)
	}
	if n > 0 {
		c.Data = append([]byte(nil), b[i+2:i+2+n]...)
	}
	return c, c.Check()
}
