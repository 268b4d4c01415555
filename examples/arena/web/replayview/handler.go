package replayview

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/ghostwire/ghostwire/examples/arena/game"
	"github.com/ghostwire/ghostwire/examples/arena/web"
	"github.com/ghostwire/ghostwire/systems/replay"
)

//go:embed static
var static embed.FS

// MaxFrames is the most frames one GET /frames returns: ten seconds at
// 60 Hz.
const MaxFrames = 600

// arena is the arena's geometry, as the page draws it.
type arena struct {
	HalfSize, Radius float32
	Walls            [][4]float32 // min x, min y, max x, max y
}

// MaxUpload bounds a recording the page uploads (POST /load): about
// three hours of eight players (44 KB per player per minute).
const MaxUpload = 64 << 20

// Page is the replay page's server: the recording it shows, which the
// page may replace by uploading another. It is safe for concurrent use.
type Page struct {
	mu      sync.Mutex
	v       *Viewer
	loading sync.Mutex // one upload replayed at a time
	// Loads counts the recordings uploaded and shown, Refused the uploads
	// refused (not a recording of this game, too large, cross-site, busy).
	loads, refused atomic.Uint64
}

// NewPage returns a page showing v.
func NewPage(v *Viewer) *Page { return &Page{v: v} }

// Stats returns the uploads shown and refused.
func (p *Page) Stats() (loads, refused uint64) { return p.loads.Load(), p.refused.Load() }

func (p *Page) viewer() *Viewer {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.v
}

// Handler serves the replay page and what it reads:
//
//	GET  /                  the page (index.html, replay.js, style.css)
//	GET  /arena.json        the arena's geometry
//	GET  /info              Info (JSON)
//	GET  /frames?from=T&n=N the frames of ticks T..T+N-1 within the
//	                        recording, N at most MaxFrames (JSON []Frame)
//	GET  /shot?i=K          kept shot K's kill-cam (JSON Shot)
//	POST /load              another recording (application/octet-stream,
//	                        at most MaxUpload bytes, from this origin),
//	                        replayed and shown from then on: its Info, or
//	                        an error naming what is wrong with it
//
// A parameter that is not a number, or a shot index out of range, is a
// 400 naming the value and the range. An upload while another is being
// replayed is a 429.
func (p *Page) Handler() http.Handler {
	mux := http.NewServeMux()
	files, _ := fs.Sub(static, "static") // embedded: Sub cannot fail
	mux.Handle("GET /", http.FileServerFS(files))
	mux.HandleFunc("GET /arena.json", func(w http.ResponseWriter, _ *http.Request) {
		a := arena{HalfSize: game.HalfSize, Radius: game.Radius}
		for _, b := range game.Walls {
			a.Walls = append(a.Walls, [4]float32{b.Min[0], b.Min[1], b.Max[0], b.Max[1]})
		}
		writeJSON(w, a)
	})
	mux.HandleFunc("GET /info", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, p.viewer().info) })
	mux.HandleFunc("GET /frames", func(w http.ResponseWriter, r *http.Request) {
		v := p.viewer()
		from, err := param(r, "from", int(v.info.First), int(v.info.Last))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		n, err := param(r, "n", 1, MaxFrames)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		lo := from - int(v.info.First)
		writeJSON(w, v.frames[lo:min(lo+n, len(v.frames))])
	})
	mux.HandleFunc("GET /shot", func(w http.ResponseWriter, r *http.Request) {
		v := p.viewer()
		i, err := param(r, "i", 0, len(v.shots)-1)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		writeJSON(w, v.shots[i])
	})
	mux.HandleFunc("POST /load", p.load)
	return mux
}

// load replays an uploaded recording and shows it.
func (p *Page) load(w http.ResponseWriter, r *http.Request) {
	refuse := func(code int, msg string) {
		p.refused.Add(1)
		http.Error(w, msg, code)
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/octet-stream" {
		refuse(http.StatusUnsupportedMediaType, "a recording (Content-Type: application/octet-stream) is required")
		return
	}
	if !web.SameOrigin(r) {
		refuse(http.StatusForbidden, "cross-site request refused")
		return
	}
	if !p.loading.TryLock() {
		refuse(http.StatusTooManyRequests, "another recording is being replayed")
		return
	}
	defer p.loading.Unlock()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxUpload))
	if err != nil {
		refuse(http.StatusRequestEntityTooLarge, fmt.Sprintf("replayview: a recording of at most %d bytes: %v", MaxUpload, err))
		return
	}
	f, err := replay.Open(bytes.NewReader(body))
	if err == nil {
		var v *Viewer
		if v, err = Load(f); err == nil {
			p.mu.Lock()
			p.v = v
			p.mu.Unlock()
			p.loads.Add(1)
			writeJSON(w, v.info)
			return
		}
	}
	refuse(http.StatusUnprocessableEntity, err.Error())
}

// param reads the integer query parameter name within lo..hi.
func param(r *http.Request, name string, lo, hi int) (int, error) {
	s := r.URL.Query().Get(name)
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, &paramError{name: name, value: s, lo: lo, hi: hi}
	}
	return n, nil
}

// paramError names a bad query parameter and its range.
type paramError struct {
	name, value string
	lo, hi      int
}

func (e *paramError) Error() string {
	return "replayview: " + e.name + "=" + strconv.Quote(e.value) + " is not a number in " + strconv.Itoa(e.lo) + ".." + strconv.Itoa(e.hi)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v) // a write error means the page left
}
