package main

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/transport/udp"
)

// A client whose handshake nobody answers, over loopback UDP, against a
// server made with another key and against no server at all: both end
// after the token's timeout (1 s here) with the same list of likely
// causes, which says why the two cannot be told apart.
func TestClientWithoutAnswerSaysWhy(t *testing.T) {
	_, key := newKey(t, t.TempDir())
	_, otherKey := newKey(t, t.TempDir())
	discard := slog.New(slog.DiscardHandler)
	ctx, stop := context.WithCancel(t.Context())
	srv, err := newArenaServer(ctx, serverOptions{Game: quietGame(4, time.Second), Bind: "127.0.0.1:0", Key: key, Rooms: 1, Logger: discard})
	require.NoError(t, err)
	served := make(chan *serverReport, 1)
	go func() {
		r, err := srv.run(ctx, nil)
		assert.NoError(t, err)
		served <- r
	}()

	// A port nobody listens on: bound, then let go.
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	nobody := netip.MustParseAddrPort(pc.LocalAddr().String())
	require.NoError(t, pc.Close())

	for _, tc := range []struct {
		name   string
		server netip.AddrPort
		key    [udp.KeySize]byte
	}{
		{"a server with another key", srv.listener.PublicAddress(), otherKey},
		{"no server", nobody, key},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			began := time.Now()
			err := runClients(t.Context(), clientsOptions{Game: quietGame(2, time.Minute), Server: tc.server, Key: tc.key,
				TokenTimeout: 1, Logger: discard}, "", nil, &out)
			took := time.Since(began)
			require.Error(t, err)
			assert.Equal(t, "no answer from the server at "+tc.server.String()+" to any client's handshake (likely causes above)", err.Error())
			text := out.String()
			assert.Contains(t, text, "never connected: udp: connection timed out: no answer from "+tc.server.String())
			assert.Contains(t, text, "arena: 2 of 2 clients got no answer from "+tc.server.String()+" to their handshake within 1s. The likely causes:")
			for _, cause := range []string{"no server runs at " + tc.server.String(),
				"silently ignores connect tokens made\n    with another key", "so a client cannot tell a wrong key from no server",
				"is not the server's public address", "another protocol ID", "a firewall or security group drops UDP to port"} {
				assert.Contains(t, text, cause)
			}
			assert.Less(t, took, 5*time.Second, "the token's 1 s timeout, not the default 5 s")
			t.Logf("gave up after %v", took)
		})
	}
	t.Cleanup(func() {
		stop()
		r := <-served
		assert.GreaterOrEqual(t, r.Dropped.BadToken, uint64(2), "the server ignored the tokens of another key, and counted them")
		assert.Zero(t, r.Connections.Accepted)
	})
}
