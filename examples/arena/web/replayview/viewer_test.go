package replayview_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/examples/arena/game"
	"github.com/ghostwire/ghostwire/examples/arena/web/replayview"
	"github.com/ghostwire/ghostwire/systems/replay"
)

// record plays a match of 4 bots at 150 ms and 5 % loss, two of them
// cheating (every cheat in turn), recorded, and returns its report and
// its recording.
func record(t *testing.T, d time.Duration) (*game.Report, *recording) {
	t.Helper()
	var buf bytes.Buffer
	cfg := game.DefaultConfig()
	cfg.Clients, cfg.Duration, cfg.RTT, cfg.Loss, cfg.Record = 4, d, 150*time.Millisecond, 5, &buf
	cfg.Cheaters, cfg.Cheat = 2, game.CheatAll
	m, err := game.NewMatch(cfg)
	require.NoError(t, err)
	r := m.Run(nil)
	require.NoError(t, m.Recorder.Close())
	f, err := replay.Open(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	return r, &recording{File: f, b: buf.Bytes()}
}

// recording is an opened recording and its bytes.
type recording struct {
	*replay.File
	b []byte
}

func (r *recording) Bytes() []byte { return r.b }

// The kill-cam of every shot of a recorded match: the replay judges every
// shot as the recorded run did (each reason counted alike), the scene of
// every hit and disputed shot, cast again from the reconstructed view,
// gives its verdict, and every gun kill has the scene of its killing
// shot, whose target is the victim.
func TestKillCamsOfARecordedMatch(t *testing.T) {
	live, f := record(t, 20*time.Second)
	v, err := replayview.Load(f.File)
	require.NoError(t, err)
	info := v.Info()
	assert.Positive(t, info.Hashes, "state hashes checked")
	require.NotEmpty(t, info.Kills)
	counted := map[string]uint64{}
	for _, sh := range v.Shots() {
		counted[sh.Reason]++
		if !sh.Refused { // a refused shot's view may lie outside the history: an empty scene
			assert.Equalf(t, sh.Reason, sh.CastAgain, "shot %d at tick %d", sh.Index, sh.Tick)
			assert.NotEmpty(t, sh.ShooterView, "the scene holds the players")
		}
		assert.Equal(t, sh.Tick, sh.ServerAtJudged.Tick, "the server's view of the judged tick")
	}
	for reason, n := range live.Server.Shots.Verdicts {
		if reason == "no_target" {
			continue // misses are not kept
		}
		assert.Equalf(t, n, counted[reason], "%s verdicts: the recorded run's and the replay's", reason)
	}
	t.Logf("live verdicts %v; kept %v; %d kills", live.Server.Shots.Verdicts, counted, len(info.Kills))
	guns := 0
	for _, k := range info.Kills {
		if k.Weapon != "gun" {
			continue
		}
		guns++
		require.GreaterOrEqualf(t, k.Shot, 0, "kill at tick %d has its shot", k.Tick)
		sh := v.Shots()[k.Shot]
		assert.True(t, sh.Hit)
		assert.Equal(t, k.Victim, sh.Target)
		assert.Equal(t, k.Killer, sh.Shooter)
	}
	assert.Positive(t, guns, "kills by the gun")
	assert.Less(t, int(counted["hit"]), len(v.Shots()), "disputed shots kept beside the hits")
}

// The page's endpoints answer with JSON, and refuse a parameter out of
// range naming the range.
func TestHandler(t *testing.T) {
	_, f := record(t, 5*time.Second)
	v, err := replayview.Load(f.File)
	require.NoError(t, err)
	page := replayview.NewPage(v)
	srv := httptest.NewServer(page.Handler())
	defer srv.Close()
	get := func(path string, into any) int {
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		if into != nil && resp.StatusCode == http.StatusOK {
			require.NoError(t, json.NewDecoder(resp.Body).Decode(into))
		}
		return resp.StatusCode
	}
	var info replayview.Info
	require.Equal(t, 200, get("/info", &info))
	assert.Equal(t, v.Info().Last, info.Last)
	var frames []replayview.Frame
	from := info.Last - 9
	require.Equal(t, 200, get("/frames?from="+itoa(from)+"&n=20", &frames))
	require.Len(t, frames, 10, "up to the last tick")
	assert.Equal(t, info.Last, frames[9].Tick)
	assert.Len(t, frames[0].Bodies, 4, "the four players")
	assert.Equal(t, 400, get("/frames?from=0&n=10", nil), "before the first tick")
	assert.Equal(t, 400, get("/frames?from="+itoa(from)+"&n=601", nil), "more than MaxFrames")
	assert.Equal(t, 400, get("/shot?i=x", nil))
	assert.Equal(t, 200, get("/", nil))
	assert.Equal(t, 200, get("/replay.js", nil))
	if len(v.Shots()) > 0 {
		var sh replayview.Shot
		require.Equal(t, 200, get("/shot?i=0", &sh))
		assert.Equal(t, v.Shots()[0].Tick, sh.Tick)
	}

	// Uploads: another recording replaces the shown one; what is not a
	// recording, not sent as one, or sent from another site is refused
	// and counted.
	post := func(body []byte, contentType, origin string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/load", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", contentType)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	_, other := record(t, 3*time.Second)
	code, body := post(other.Bytes(), "application/octet-stream", srv.URL)
	require.Equal(t, 200, code, body)
	require.Equal(t, 200, get("/info", &info))
	assert.NotEqual(t, v.Info().Last, info.Last, "the uploaded recording is shown")
	code, body = post([]byte("not a recording"), "application/octet-stream", "")
	assert.Equal(t, http.StatusUnprocessableEntity, code)
	assert.Contains(t, body, "replay: byte")
	code, _ = post(other.Bytes(), "text/plain", "")
	assert.Equal(t, http.StatusUnsupportedMediaType, code)
	code, _ = post(other.Bytes(), "application/octet-stream", "http://evil.example")
	assert.Equal(t, http.StatusForbidden, code)
	loads, refused := page.Stats()
	assert.Equal(t, uint64(1), loads)
	assert.Equal(t, uint64(3), refused)
}

func itoa(n uint32) string { return strconv.FormatUint(uint64(n), 10) }
