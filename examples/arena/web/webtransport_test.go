package web

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/examples/arena/web/play"
	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/webtransport"
)

// transportsOf fetches the page's /transport.json.
func transportsOf(t *testing.T, url string) Transports {
	t.Helper()
	resp, err := http.Get(url + "/transport.json")
	require.NoError(t, err)
	defer resp.Body.Close()
	var tr Transports
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&tr))
	return tr
}

// dialWebTransport connects to the server's WebTransport as the page does,
// trusting its development certificate by the hash the page receives.
func dialWebTransport(t *testing.T, tr Transports, session string) (transport.Conn, error) {
	t.Helper()
	h, err := hex.DecodeString(tr.CertHash)
	require.NoError(t, err)
	require.Len(t, h, 32)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return webtransport.Dial(ctx, tr.URL+"?session="+session, webtransport.DialOptions{CertificateHashes: [][32]byte{[32]byte(h)}})
}

func TestWebTransportPlays(t *testing.T) {
	s, url := startServer(t, Options{Seed: 3})
	tr := transportsOf(t, url)
	assert.Equal(t, TransportAuto, tr.Mode)
	assert.Regexp(t, `^https://127\.0\.0\.1:\d+/wt$`, tr.URL)

	_, err := dialWebTransport(t, tr, "bad session!")
	require.ErrorContains(t, err, "400", "the session rule of the WebSocket path applies")

	conn, err := dialWebTransport(t, tr, "wt-page")
	require.NoError(t, err)
	p, err := play.New(gw.NewRealTime(), conn, play.Options{})
	require.NoError(t, err)
	defer p.Close()
	frame := time.NewTicker(8 * time.Millisecond)
	defer frame.Stop()
	waitFor(t, slow, "the own player arrives over WebTransport", func() bool {
		<-frame.C
		p.Step()
		return p.View().HasOwn
	})
	st := s.Stats()
	assert.Equal(t, uint64(1), st.WebTransport)
	assert.Equal(t, uint64(1), st.Sockets)
}

func TestWebSocketOnlyServesNoWebTransport(t *testing.T) {
	_, url := startServer(t, Options{Transport: TransportWebSocket})
	assert.Equal(t, Transports{Mode: TransportWebSocket}, transportsOf(t, url))
}

func TestTransportOptionsAreChecked(t *testing.T) {
	_, err := New(context.Background(), Options{Transport: "carrier-pigeon"})
	require.EqualError(t, err, `web: Transport "carrier-pigeon": allowed are "auto", "webtransport" and "websocket"`)
	_, err = New(context.Background(), Options{CertFile: "cert.pem"})
	require.EqualError(t, err, `web: CertFile "cert.pem" and KeyFile "": give both or neither`)
}
