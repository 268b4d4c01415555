package agonestest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fake enforces the in-cluster contract an SDK must meet.
func TestFakeSidecarContract(t *testing.T) {
	clock := NewClock()
	sidecar := New(clock, "203.0.113.10", 7654, map[string]int64{"rooms": 16})
	server := httptest.NewServer(sidecar)
	defer server.Close()
	var raw []byte
	post := func(method, path, body string) (int, map[string]any) {
		req, err := http.NewRequest(method, server.URL+path, bytes.NewBufferString(body))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, _ = io.ReadAll(resp.Body)
		var out map[string]any
		_ = json.Unmarshal(raw, &out)
		return resp.StatusCode, out
	}
	status, _ := post(http.MethodPost, "/health", "")
	assert.Equal(t, http.StatusBadRequest, status, "an empty health body")
	assert.Empty(t, raw, "refused before the gateway: a bare 400")
	status, _ = post(http.MethodPost, "/health", "{}{}{}")
	assert.Equal(t, http.StatusOK, status, "a stream of 3 pings")
	status, out := post(http.MethodPost, "/nope", "{}")
	assert.Equal(t, http.StatusNotFound, status)
	assert.EqualValues(t, 5, out["code"])
	assert.Contains(t, out, "details")
	status, out = post(http.MethodGet, "/ready", "")
	assert.Equal(t, http.StatusNotImplemented, status)
	assert.EqualValues(t, 12, out["code"])
	status, _ = post(http.MethodPost, "/ready", `{"bogus":1}`)
	assert.Equal(t, http.StatusOK, status, "unknown fields are ignored")
	status, _ = post(http.MethodPost, "/reserve", "")
	assert.Equal(t, http.StatusOK, status, "an empty body is an empty message")
	status, out = post(http.MethodPost, "/reserve", `{"seconds":"abc"}`)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.EqualValues(t, 3, out["code"])
	status, out = post(http.MethodPatch, "/v1beta1/counters/rooms", `{"cuont":"1"}`)
	assert.Equal(t, http.StatusInternalServerError, status, "a counter update that sets nothing")
	assert.Contains(t, out["message"], "Malformed")
	status, out = post(http.MethodPatch, "/v1beta1/counters/rooms", `{"countDiff":2,"cuont":"9"}`)
	assert.Equal(t, http.StatusOK, status, "a number is accepted too, an unknown field ignored")
	assert.Equal(t, "2", out["count"], "int64 answered as a string")
	status, out = post(http.MethodPatch, "/v1beta1/counters/rooms", `{"capacity":"1"}`)
	assert.Equal(t, http.StatusOK, status, "a capacity below the count")
	assert.Equal(t, map[string]any{"name": "rooms", "count": "1", "capacity": "1"}, out, "lowers the count")
	status, out = post(http.MethodPatch, "/v1beta1/counters/rooms", `{"capacity":"16","count":"20","countDiff":"-10"}`)
	assert.Equal(t, http.StatusInternalServerError, status, "count checked before countDiff applies")
	assert.Contains(t, out["message"], "Found Count: 20, Capacity: 16")
	status, _ = post(http.MethodPatch, "/v1beta1/counters/rooms", `{"countDiff":"x"}`)
	assert.Equal(t, http.StatusBadRequest, status, "undecodable")
	status, _ = post(http.MethodPut, "/metadata/label", `{"key":"-x","value":"v"}`)
	assert.Equal(t, http.StatusBadRequest, status)
	status, _ = post(http.MethodPut, "/metadata/label", `{"key":"`+strings.Repeat("k", 60)+`","value":"v"}`)
	assert.Equal(t, http.StatusBadRequest, status, "a key too long once prefixed")
	status, out = post(http.MethodGet, "/gameserver", "")
	assert.Equal(t, http.StatusOK, status)
	counters := out["status"].(map[string]any)["counters"].(map[string]any)["rooms"].(map[string]any)
	assert.Equal(t, map[string]any{"count": "1", "capacity": "1"}, counters, "as the last update left it, int64s as strings")
	sidecar.SetDown(true)
	_, err := http.Get(server.URL + "/gameserver")
	assert.Error(t, err, "down: the connection closes without an answer")
}

// The fake clock fires a channel once it has been advanced past it.
func TestClockFiresWhenAdvanced(t *testing.T) {
	c := NewClock()
	ch := c.After(time.Second)
	c.Advance(999 * time.Millisecond)
	assert.Len(t, ch, 0)
	assert.Equal(t, 1, c.Waiting())
	c.Advance(time.Millisecond)
	require.Len(t, ch, 1)
	assert.Equal(t, c.Now(), <-ch)
	assert.Zero(t, c.Waiting())
	assert.Len(t, c.After(0), 1, "a past deadline fires at once")
}

// SetState reaches every open watch, as a controller's change does; an
// outage ends the open streams, as a restarting sidecar does.
func TestSetStateIsWatchedAndAnOutageEndsTheWatch(t *testing.T) {
	sidecar := New(nil, "203.0.113.10", 7654, nil)
	server := httptest.NewServer(sidecar)
	defer server.Close()
	resp, err := http.Get(server.URL + "/watch/gameserver")
	require.NoError(t, err)
	defer resp.Body.Close()
	lines := json.NewDecoder(resp.Body)
	state := func() string {
		var line struct {
			Result struct {
				Status struct{ State string } `json:"status"`
			} `json:"result"`
		}
		require.NoError(t, lines.Decode(&line))
		return line.Result.Status.State
	}
	assert.Equal(t, "Scheduled", state())
	sidecar.SetState("Shutdown")
	assert.Equal(t, "Shutdown", state())
	assert.Equal(t, "Shutdown", sidecar.GameServer().Status.State)
	sidecar.SetDown(true)
	var rest struct{}
	assert.Error(t, lines.Decode(&rest), "the stream ends with the sidecar")
	sidecar.SetDown(false)
}
