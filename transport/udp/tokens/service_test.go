package tokens_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/transport/udp"
	"github.com/ghostwire/ghostwire/transport/udp/tokens"
)

const secret = "a shared secret of the matchmaker"

var key = [udp.KeySize]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}

const protocolID = 0x7465_7374

// ask posts a token request and decodes the answer.
func ask(t *testing.T, h http.Handler, body string, mutate func(*http.Request)) (*httptest.ResponseRecorder, tokens.Response) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/token", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+secret)
	if mutate != nil {
		mutate(req)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var resp tokens.Response
	if rec.Code == http.StatusOK {
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &resp))
	}
	return rec, resp
}

func newService(t *testing.T, mutate func(*tokens.Options)) *tokens.Service {
	t.Helper()
	opts := tokens.Options{Key: key, ProtocolID: protocolID, Secret: secret, PublicAddress: netip.MustParseAddrPort("203.0.113.5:7777")}
	if mutate != nil {
		mutate(&opts)
	}
	s, err := tokens.New(opts)
	require.NoError(t, err)
	return s
}

// A token names the public address, carries the claims to the server,
// and its client ID is random: not one after the other.
func TestServiceIssuesTokensThatConnect(t *testing.T) {
	server, err := udp.Listen(udp.Options{BindAddress: "127.0.0.1:0", PrivateKey: key, ProtocolID: protocolID})
	require.NoError(t, err)
	defer server.Close()
	s := newService(t, func(o *tokens.Options) { o.PublicAddress = server.PublicAddress() })
	rec, resp := ask(t, s, `{"room":"arena-1","identity":"player-42","user_data":"AQID"}`, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
	assert.Equal(t, server.PublicAddress().String(), resp.Server)
	tok, err := udp.ParseConnectToken(resp.Token)
	require.NoError(t, err)
	assert.Equal(t, []netip.AddrPort{server.PublicAddress()}, tok.ServerAddresses)

	client, err := udp.Dial(resp.Token, udp.ClientOptions{})
	require.NoError(t, err)
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, client.WaitConnected(ctx))
	var conn *udp.ServerConn
	for conn == nil && ctx.Err() == nil {
		if c, ok := server.Accept(); ok {
			conn = c.(*udp.ServerConn)
		}
	}
	require.NotNil(t, conn)
	claims, err := tokens.ParseClaims(conn.UserData())
	require.NoError(t, err)
	assert.Equal(t, tokens.Claims{Room: "arena-1", Identity: "player-42", Data: []byte{1, 2, 3}}, claims)
	assert.Equal(t, resp.ClientID, strconv.FormatUint(conn.ClientID(), 10))

	_, again := ask(t, s, `{"room":"arena-1","identity":"player-43"}`, nil)
	a, _ := strconv.ParseUint(resp.ClientID, 10, 64)
	b, _ := strconv.ParseUint(again.ClientID, 10, 64)
	assert.NotEqual(t, a, b)
	assert.Greater(t, max(a, b)-min(a, b), uint64(1<<20), "IDs are not handed out in sequence")
}

// Every refusal says why, with its status, and is counted.
func TestServiceRefusals(t *testing.T) {
	s := newService(t, func(o *tokens.Options) { o.Rooms = func(r string) bool { return r == "open" } })
	for _, tc := range []struct {
		body   string
		mutate func(*http.Request)
		status int
		reason string
	}{
		{`{"room":"open","identity":"p"}`, func(r *http.Request) { r.Method = http.MethodGet }, http.StatusMethodNotAllowed, tokens.RefusedMethod},
		{`{"room":"open","identity":"p"}`, func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }, http.StatusUnsupportedMediaType, tokens.RefusedContentType},
		{`{"room":"open","identity":"p"}`, func(r *http.Request) { r.Header.Del("Authorization") }, http.StatusUnauthorized, tokens.RefusedUnauthorized},
		{`{"room":"open","identity":"p"}`, func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+secret+"x") }, http.StatusUnauthorized, tokens.RefusedUnauthorized},
		{`{"room":"open","identity":"p","pad":"` + strings.Repeat("x", tokens.MaxRequestBytes) + `"}`, nil, http.StatusRequestEntityTooLarge, tokens.RefusedTooLarge},
		{`{"room":"open","identity":"p","admin":true}`, nil, http.StatusBadRequest, tokens.RefusedMalformed},
		{`{"room":"open","identity":""}`, nil, http.StatusBadRequest, tokens.RefusedMalformed},
		{`{"room":"closed","identity":"p"}`, nil, http.StatusNotFound, tokens.RefusedUnknownRoom},
	} {
		rec, _ := ask(t, s, tc.body, tc.mutate)
		assert.Equal(t, tc.status, rec.Code, tc.reason)
		var e struct{ Reason string }
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e))
		assert.Equal(t, tc.reason, e.Reason)
	}
	st := s.Stats()
	assert.Zero(t, st.Issued)
	assert.Equal(t, uint64(2), st.Refused[tokens.RefusedUnauthorized])
	assert.Equal(t, uint64(2), st.Refused[tokens.RefusedMalformed])

	noAddr := newService(t, func(o *tokens.Options) { o.PublicAddress = netip.AddrPort{} })
	rec, _ := ask(t, noAddr, `{"room":"r","identity":"p"}`, nil)
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	noAddr.SetPublicAddress(netip.MustParseAddrPort("198.51.100.1:9000"))
	rec, resp := ask(t, noAddr, `{"room":"r","identity":"p"}`, nil)
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "198.51.100.1:9000", resp.Server, "the address learnt later is named")
}

// One identity gets 3 tokens at once and then one every second at 10 a
// second overall; the overall bucket caps everyone together.
func TestServiceRateLimits(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newService(t, func(o *tokens.Options) { o.PerSecond, o.Burst, o.Clock = 10, 5, func() time.Time { return now } })
	codes := func(identity string, n int) (ok int) {
		for range n {
			if rec, _ := ask(t, s, `{"room":"r","identity":"`+identity+`"}`, nil); rec.Code == http.StatusOK {
				ok++
			} else {
				assert.Equal(t, http.StatusTooManyRequests, rec.Code)
				assert.Equal(t, "1", rec.Header().Get("Retry-After"))
			}
		}
		return ok
	}
	assert.Equal(t, 3, codes("greedy", 10), "one identity's burst")
	assert.Equal(t, 2, codes("other", 10), "the overall burst of 5 is spent")
	now = now.Add(time.Second)
	assert.Equal(t, 1, codes("greedy", 5), "one a second per identity at 10 a second overall")
	assert.Equal(t, uint64(6), s.Stats().Issued)
	assert.Equal(t, uint64(19), s.Stats().Refused[tokens.RefusedRate])
}

func TestNewRefusesBadOptions(t *testing.T) {
	for _, tc := range []struct {
		mutate func(*tokens.Options)
		want   string
	}{
		{func(o *tokens.Options) { o.Key = [udp.KeySize]byte{} }, "tokens: Key is all zero"},
		{func(o *tokens.Options) { o.Secret = "short" }, "tokens: Secret of 5 bytes; at least 16"},
		{func(o *tokens.Options) { o.Life = 2 * time.Hour }, "tokens: Life 2h0m0s outside 1s..1h"},
		{func(o *tokens.Options) { o.Timeout = 61 }, "tokens: Timeout 61 outside 1..60 seconds"},
	} {
		opts := tokens.Options{Key: key, Secret: secret}
		tc.mutate(&opts)
		_, err := tokens.New(opts)
		assert.EqualError(t, err, tc.want)
	}
}

// A browser page on another origin cannot fetch a token: its simple
// cross-site POST carries no JSON content type and no secret.
func TestCrossSiteFormPostRefused(t *testing.T) {
	s := newService(t, nil)
	req := httptest.NewRequest(http.MethodPost, "/token", bytes.NewBufferString("room=r&identity=p"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusUnsupportedMediaType, rec.Code)
}
