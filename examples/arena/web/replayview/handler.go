package replayview

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"strconv"

	"github.com/ghostwire/ghostwire/examples/arena/game"
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

// Handler serves the replay page and what it reads:
//
//	GET /                  the page (index.html, replay.js, style.css)
//	GET /arena.json        the arena's geometry
//	GET /info              Info (JSON)
//	GET /frames?from=T&n=N the frames of ticks T..T+N-1 within the
//	                       recording, N at most MaxFrames (JSON []Frame)
//	GET /shot?i=K          kept shot K's kill-cam (JSON Shot)
//
// A parameter that is not a number, or a shot index out of range, is a
// 400 naming the value and the range.
func (v *Viewer) Handler() http.Handler {
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
	mux.HandleFunc("GET /info", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, v.info) })
	mux.HandleFunc("GET /frames", func(w http.ResponseWriter, r *http.Request) {
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
		i, err := param(r, "i", 0, len(v.shots)-1)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		writeJSON(w, v.shots[i])
	})
	return mux
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
