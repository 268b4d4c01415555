package web

import (
	"bytes"
	"embed"
	"encoding/json"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/ghostwire/ghostwire/examples/arena/game"
	"github.com/ghostwire/ghostwire/examples/arena/web/play"
	"github.com/ghostwire/ghostwire/transport"
)

//go:embed static
var static embed.FS

// MaxTruthStreams bounds the spectator streams open at once; more are
// refused with 503 (counted in Stats.TruthRefused).
const MaxTruthStreams = 16

// maxAccepted bounds the WebSocket connections handed over but not yet
// taken by the game loop; more are closed (counted like a full listener).
const maxAccepted = 64

// truthInterval is how often a spectator stream sends the server's state.
const truthInterval = 33 * time.Millisecond

// Handler returns the page and its endpoints:
//
//	GET  /              the page (with /app.js and /style.css)
//	GET  /client.wasm   the client, built at start
//	GET  /wasm_exec.js  the Go installation's loader
//	GET  /arena.json    the arena's geometry
//	GET  /ws?session=S  the game's WebSocket, conditioned by S's link
//	GET  /transport.json  where the page finds WebTransport (JSON Transports)
//	GET  /truth         the server's state, as server-sent events (JSON)
//	GET  /settings?session=S  what the page's controls show on load (JSON Settings)
//	POST /link?session=S  S's link (JSON Link), applied at once
//	POST /lagcomp       JSON {"On": true|false}: how the server judges
//	                    shots, for everyone; refused unless
//	                    Options.ServerSettings
//
// The POSTs change state, so they take only what a page of this server
// sends (see guardPost): a JSON body of at most 1 KB, from this origin.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	files, _ := fs.Sub(static, "static") // the directory is embedded, so Sub cannot fail
	mux.Handle("GET /", http.FileServerFS(files))
	mux.HandleFunc("GET /client.wasm", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/wasm")
		http.ServeContent(w, r, "client.wasm", time.Time{}, bytes.NewReader(s.wasm))
	})
	mux.HandleFunc("GET /wasm_exec.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		http.ServeContent(w, r, "wasm_exec.js", time.Time{}, bytes.NewReader(s.execJS))
	})
	mux.HandleFunc("GET /arena.json", s.serveArena)
	mux.HandleFunc("GET /ws", s.serveSocket)
	mux.HandleFunc("GET /transport.json", s.serveTransports)
	mux.HandleFunc("GET /truth", s.serveTruth)
	mux.HandleFunc("GET /settings", s.serveSettings)
	mux.HandleFunc("POST /link", s.guardPost(s.serveLink))
	mux.HandleFunc("POST /lagcomp", s.guardPost(s.serveLagComp))
	return mux
}

// maxPostBytes caps a POST's body.
const maxPostBytes = 1 << 10

// guardPost lets a state-changing request through only when a page of
// this server could have sent it: a JSON content type (a "simple" request
// from another site cannot have one without a CORS preflight, which this
// server never grants), no Origin or Sec-Fetch-Site naming another site,
// and a body of at most maxPostBytes. Refusals are counted
// (Stats.PostsRefused).
func (s *Server) guardPost(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			s.postsRefused.Add(1)
			http.Error(w, "a JSON body (Content-Type: application/json) is required", http.StatusUnsupportedMediaType)
			return
		}
		if !SameOrigin(r) {
			s.postsRefused.Add(1)
			http.Error(w, "cross-site request refused", http.StatusForbidden)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxPostBytes)
		h(w, r)
	}
}

// SameOrigin reports whether a request's Origin (when sent) is this
// server's own and its Sec-Fetch-Site (when sent) says same-origin; a
// client that is not a browser sends neither. The arena's pages refuse
// a POST that fails it (a cross-site request).
func SameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, r.Host)
}

// Arena is the geometry the page draws, in arena units: the players'
// Radius, the ball's, a rocket's and its explosion's reach
// (game.SplashRadius beyond a player's radius).
type Arena struct {
	HalfSize, Radius                       float32
	BallRadius, RocketRadius, SplashRadius float32
	// Walls are the pillars: Min and Max corners (x, y).
	Walls [][4]float32
	// TickRate is the server's.
	TickRate int
}

func (s *Server) serveArena(w http.ResponseWriter, _ *http.Request) {
	a := Arena{HalfSize: game.HalfSize, Radius: game.Radius, BallRadius: game.BallRadius, RocketRadius: game.RocketRadius,
		SplashRadius: game.SplashRadius, TickRate: play.TickRate}
	for _, b := range game.Walls {
		a.Walls = append(a.Walls, [4]float32{b.Min[0], b.Min[1], b.Max[0], b.Max[1]})
	}
	writeJSON(w, a)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v) // a write error means the client left
}

// serveSocket upgrades a page's game connection and hands it, conditioned
// by its session's link, to the game loop.
func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("session")
	if err := validSession(id); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	// The game's connection lives past the server's read and write
	// timeouts, which guard requests, not sessions.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	s.accepting.Lock()
	s.ws.ServeHTTP(w, r)
	conn, ok := s.ws.Accept()
	if !ok {
		s.accepting.Unlock()
		return // the handshake failed and was answered
	}
	// Handed over in the order the handshakes completed: the next one
	// waits until this one is queued (or refused).
	s.mu.Lock()
	s.accepting.Unlock()
	defer s.mu.Unlock()
	s.handOver(conn, id, true)
}

// handOver conditions a page's new connection by its session's link (a
// stream when it is a WebSocket) and
// queues it for the game loop, or closes it when maxAccepted are waiting.
// s.mu must be held.
func (s *Server) handOver(conn transport.Conn, id string, stream bool) {
	if len(s.accepted) == maxAccepted {
		s.refusedSockets++
		conn.Close()
		return
	}
	ss := s.sessions.get(id)
	s.conns++
	lc := newLinkConn(conn, s.clock, s.opts.Seed^(s.conns<<32), ss.link, stream)
	ss.add(lc)
	s.open = append(slices.DeleteFunc(s.open, (*linkConn).isClosed), lc)
	s.accepted = append(s.accepted, lc)
}

// Settings are the server's settings a page's controls show: lag
// compensation (server-wide; ServerSettings says whether a page may
// switch it) and the session's link (kept across the page's reloads).
type Settings struct {
	LagComp        bool
	ServerSettings bool
	Link           Link
}

// serveSettings answers with the settings of a session: a page shows the
// server's state on load, not its HTML's defaults.
func (s *Server) serveSettings(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("session")
	if err := validSession(id); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	l := s.sessions.link(id)
	s.mu.Unlock()
	writeJSON(w, Settings{LagComp: s.lagComp.Load(), ServerSettings: s.opts.ServerSettings, Link: l})
}

// serveLink sets a session's link.
func (s *Server) serveLink(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("session")
	if err := validSession(id); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var l Link
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		http.Error(w, "link: "+err.Error(), http.StatusBadRequest)
		return
	}
	if err := l.Validate(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.sessions.get(id).setLink(l)
	s.mu.Unlock()
	writeJSON(w, l)
}

// serveLagComp switches lag compensation for every shot, when the server
// lets pages change its settings.
func (s *Server) serveLagComp(w http.ResponseWriter, r *http.Request) {
	if !s.opts.ServerSettings {
		s.postsRefused.Add(1)
		http.Error(w, "server-wide settings are off: start the server with -web-settings to let pages change them", http.StatusForbidden)
		return
	}
	var v struct{ On *bool }
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil || v.On == nil {
		http.Error(w, `lagcomp: want {"On": true} or {"On": false}`, http.StatusBadRequest)
		return
	}
	s.lagComp.Store(*v.On)
	w.WriteHeader(http.StatusNoContent)
}

// serveTruth streams the server's state as server-sent events until the
// page leaves.
func (s *Server) serveTruth(w http.ResponseWriter, r *http.Request) {
	if s.truthOpen.Add(1) > MaxTruthStreams {
		s.truthOpen.Add(-1)
		s.truthRefused.Add(1)
		http.Error(w, "too many spectator streams", http.StatusServiceUnavailable)
		return
	}
	defer s.truthOpen.Add(-1)
	s.truthStreams.Add(1)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream outlives the write timeout of a request
	t := time.NewTicker(truthInterval)
	defer t.Stop()
	var last *[]byte
	for {
		if b := s.truth.Load(); b != last {
			last = b
			if _, err := io.WriteString(w, "data: "); err != nil {
				return
			}
			w.Write(*b)
			if _, err := io.WriteString(w, "\n\n"); err != nil {
				return
			}
			if rc.Flush() != nil {
				return
			}
		}
		select {
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		case <-t.C:
		}
	}
}
