package tokens_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"

	"github.com/ghostwire/ghostwire/transport/udp"
	"github.com/ghostwire/ghostwire/transport/udp/tokens"
)

// A matchmaker asks for a player's token: the room and the player's
// identity ride in the token's encrypted user data, which only the server
// reads (tokens.ParseClaims of udp.ServerConn.UserData).
func ExampleService() {
	svc, err := tokens.New(tokens.Options{
		Key:           [udp.KeySize]byte{1}, // the servers' key, from configuration
		ProtocolID:    0x6172656e61203031,
		Secret:        "the matchmaker's shared secret",
		PublicAddress: netip.MustParseAddrPort("203.0.113.5:7777"),
	})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /token", svc)

	req := httptest.NewRequest(http.MethodPost, "/token", strings.NewReader(`{"room":"arena-1","identity":"player-42"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer the matchmaker's shared secret")
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	fmt.Println(rec.Code, svc.Stats().Issued)

	req.Header.Del("Authorization") // anyone else
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	fmt.Println(rec.Code, svc.Stats().Refused)
	// Output:
	// 200 1
	// 401 map[unauthorized:1]
}
