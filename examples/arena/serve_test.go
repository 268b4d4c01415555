package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/systems/agones"
	"github.com/ghostwire/ghostwire/systems/agones/agonestest"
)

// freeUDPPort returns a loopback UDP port free a moment ago: the host
// port must know the server's port before the server binds it.
func freeUDPPort(t *testing.T) uint16 {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	defer pc.Close()
	return netip.MustParseAddrPort(pc.LocalAddr().String()).Port()
}

// get returns the status and body of a GET.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// after returns what follows prefix on its line of out, once printed.
func after(t *testing.T, out *lockedBuffer, prefix string) string {
	t.Helper()
	var rest string
	waitFor(t, 30*time.Second, prefix, func() bool {
		_, r, ok := strings.Cut(out.String(), prefix)
		rest, _, _ = strings.Cut(r, "\n")
		return ok && strings.Contains(r, "\n")
	})
	return rest
}

// The arena as a fleet member, in process: -serve -agones -rooms 3
// -metrics -tokens against the fake sidecar, whose game server's public
// address is a host port forwarding to the server's bind port, as
// Agones' node port does. The server learns the address (printed, in the
// tokens), says Ready, counts its 3 rooms (capacity 3), is ready on
// /readyz with the rooms on /metrics; a bot joins each room through the
// host port with a token of the endpoint. Agones marks the game server
// Shutdown: the drain refuses tokens and readiness, the 3 rooms are ended
// at the grace with every client told, the counter reaches zero, Shutdown
// is called once, and the process ends without error, its report holding
// a section per room, the drain and the Agones side.
func TestArenaAsAFleetMember(t *testing.T) {
	keyPath, _ := newKey(t, t.TempDir())
	secretPath, secret := newSecret(t, t.TempDir())
	dir := t.TempDir()
	bind := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), freeUDPPort(t))
	hostPort, err := agonestest.NewHostPort(bind, 16)
	require.NoError(t, err)
	defer hostPort.Close()
	public := hostPort.Addr()
	sidecar := agonestest.New(nil, "127.0.0.1", int32(public.Port()), map[string]int64{"rooms": 16})
	web := httptest.NewServer(sidecar)
	defer web.Close()
	t.Setenv("AGONES_SDK_HTTP_PORT", strconv.Itoa(int(netip.MustParseAddrPort(web.Listener.Addr().String()).Port())))

	srvOut := &lockedBuffer{}
	served := make(chan error, 1)
	go func() {
		served <- run(context.Background(), []string{"-serve", bind.String(), "-key", keyPath, "-agones", "-rooms", "3",
			"-metrics", "127.0.0.1:0", "-tokens", "127.0.0.1:0", "-token-secret", secretPath, "-grace", "3s", "-quiet",
			"-report", filepath.Join(dir, "server.json")}, srvOut, &bytes.Buffer{})
	}()
	assert.Equal(t, bind.String()+" (public address "+public.String()+")", after(t, srvOut, "arena: serving on udp "))
	tokenURL := after(t, srvOut, "arena: connect tokens at ")
	metricsURL := strings.TrimSuffix(after(t, srvOut, "arena: metrics at "), "/metrics")
	waitFor(t, 10*time.Second, "Ready and the rooms counted", func() bool {
		gs := sidecar.GameServer()
		return gs.Status.State == "Ready" && gs.Status.Counters["rooms"] == agones.Counter{Count: 3, Capacity: 3}
	})
	waitFor(t, 10*time.Second, "/readyz", func() bool { status, _ := get(t, metricsURL+"/readyz"); return status == http.StatusOK })
	_, scrape := get(t, metricsURL+"/metrics")
	assert.Contains(t, scrape, "ghostwire_rooms 3\n")

	type played struct {
		out *lockedBuffer
		err error
	}
	clients := make(chan played, 3)
	var outs []*lockedBuffer
	for i := 1; i <= 3; i++ {
		out := &lockedBuffer{}
		outs = append(outs, out)
		go func() {
			err := run(context.Background(), []string{"-connect", public.String(), "-tokens", tokenURL, "-token-secret", secretPath,
				"-room", roomName(i), "-clients", "1", "-duration", "1h", "-seed", strconv.Itoa(i),
				"-report", filepath.Join(dir, "clients-"+strconv.Itoa(i)+".json")}, out, &bytes.Buffer{})
			clients <- played{out, err}
		}()
	}
	for _, out := range outs {
		waitFor(t, 30*time.Second, "a bot connected through the host port", func() bool {
			return strings.Contains(out.String(), "arena: 1/1 clients connected")
		})
	}
	waitFor(t, 10*time.Second, "a client in each room", func() bool {
		_, scrape := get(t, metricsURL+"/metrics")
		for i := 1; i <= 3; i++ {
			if !strings.Contains(scrape, `ghostwire_room_clients{room="`+roomName(i)+`"} 1`) {
				return false
			}
		}
		return true
	})

	began := time.Now()
	sidecar.SetState("Shutdown") // a fleet scaling down
	waitFor(t, 10*time.Second, "not ready", func() bool { status, _ := get(t, metricsURL+"/readyz"); return status != http.StatusOK })
	req, err := http.NewRequest(http.MethodPost, tokenURL, strings.NewReader(`{"room":"arena-1","identity":"late"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "no token once draining")
	select {
	case err := <-served:
		require.NoError(t, err, srvOut.String())
	case <-time.After(30 * time.Second):
		require.FailNow(t, "the server did not end", srvOut.String())
	}
	// The drain, from the trigger to the rooms' end, keeps within the
	// grace as the server measured it; the wall clock here adds the
	// watch's delivery of the state and the closing of the listeners,
	// which a loaded machine stretches, so it is held to a looser bound.
	m := regexp.MustCompile(`drain \(agones\): ([0-9.]+)s of a 3s grace`).FindStringSubmatch(srvOut.String())
	require.NotNil(t, m, srvOut.String())
	drained, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	assert.LessOrEqual(t, drained, 3.0, "the drain within the grace")
	took := time.Since(began)
	assert.Less(t, took, 5*time.Second, "the process ends soon after the drain")
	for range 3 {
		p := <-clients
		require.NoError(t, p.err, p.out.String())
		assert.Contains(t, p.out.String(), "the server closed")
		assert.Contains(t, p.out.String(), "clean: true")
	}

	assert.Len(t, callsTo(sidecar, "/shutdown"), 1, "Shutdown once")
	assert.Equal(t, agones.Counter{Count: 0, Capacity: 3}, sidecar.GameServer().Status.Counters["rooms"])
	b, err := os.ReadFile(filepath.Join(dir, "server.json"))
	require.NoError(t, err)
	var r serverReport
	require.NoError(t, json.Unmarshal(b, &r))
	assert.Equal(t, drainReport{Reason: "agones", Seconds: r.Drain.Seconds, GraceS: 3, Ended: 3}, r.Drain)
	require.Len(t, r.Rooms, 3)
	for i, room := range r.Rooms {
		assert.Equal(t, roomName(i+1), room.Name)
		assert.Equal(t, 1, room.ClientsAtEnd, "told the server is closing")
		assert.Positive(t, room.Ticks)
	}
	assert.Equal(t, 3, r.Connections.OpenAtEnd)
	assert.Equal(t, uint64(3), r.Connections.TokensIssued)
	require.NotNil(t, r.Agones)
	assert.Equal(t, public.String(), r.Agones.PublicAddress)
	assert.Equal(t, int64(3), r.Agones.RoomsCapacity)
	assert.Zero(t, r.Agones.RoomsCount)
	assert.Positive(t, r.Agones.HealthPings)
	t.Logf("%s", srvOut.String())
	assert.Contains(t, srvOut.String(), "drain (agones): ")
	assert.Contains(t, srvOut.String(), "room arena-3: ")
}

// callsTo returns the sidecar's answered calls to path.
func callsTo(s *agonestest.Sidecar, path string) []agonestest.Call {
	var out []agonestest.Call
	for _, c := range s.Calls() {
		if c.Path == path {
			out = append(out, c)
		}
	}
	return out
}
