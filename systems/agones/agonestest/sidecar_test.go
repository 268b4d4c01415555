package agonestest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
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
	post := func(method, path, body string) (int, map[string]any) {
		req, err := http.NewRequest(method, server.URL+path, bytes.NewBufferString(body))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var out map[string]any
		_ = json.Unmarshal(b, &out)
		return resp.StatusCode, out
	}
	status, out := post(http.MethodPost, "/health", "")
	assert.Equal(t, http.StatusBadRequest, status, "an empty health body")
	assert.EqualValues(t, 3, out["code"])
	assert.Contains(t, out, "details")
	status, out = post(http.MethodPost, "/nope", "{}")
	assert.Equal(t, http.StatusNotFound, status)
	assert.EqualValues(t, 5, out["code"])
	status, out = post(http.MethodGet, "/ready", "")
	assert.Equal(t, http.StatusNotImplemented, status)
	assert.EqualValues(t, 12, out["code"])
	status, _ = post(http.MethodPatch, "/v1beta1/counters/rooms", `{"cuont":"1"}`)
	assert.Equal(t, http.StatusInternalServerError, status, "a misspelled counter field")
	status, out = post(http.MethodPatch, "/v1beta1/counters/rooms", `{"countDiff":2}`)
	assert.Equal(t, http.StatusOK, status, "a number is accepted too")
	assert.Equal(t, "2", out["count"], "int64 answered as a string")
	status, _ = post(http.MethodPut, "/metadata/label", `{"key":"-x","value":"v"}`)
	assert.Equal(t, http.StatusBadRequest, status)
	status, out = post(http.MethodGet, "/gameserver", "")
	assert.Equal(t, http.StatusOK, status)
	counters := out["status"].(map[string]any)["counters"].(map[string]any)["rooms"].(map[string]any)
	assert.Equal(t, "16", counters["capacity"])
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
