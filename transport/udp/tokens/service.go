package tokens

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"mime"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ghostwire/ghostwire/transport/udp"
)

// MaxRequestBytes caps a token request's body.
const MaxRequestBytes = 4 << 10

// Options configure a Service. Key, ProtocolID and Secret are required.
type Options struct {
	// Key and ProtocolID are the game servers' (udp.Options).
	Key        [udp.KeySize]byte
	ProtocolID uint64
	// PublicAddress is the address tokens name: the one clients reach the
	// server at, which behind Agones or a NAT is not the bind address.
	// It may be set later (SetPublicAddress, from agones.SDK.Watch); until
	// then requests are refused as "no_address".
	PublicAddress netip.AddrPort
	// Secret is the shared secret a caller presents as "Authorization:
	// Bearer <secret>", compared in constant time; at least 16 bytes. For
	// mutual TLS instead, serve the Service from an http.Server whose
	// TLSConfig requires and verifies client certificates, and give a
	// Secret known to that server alone.
	Secret string
	// Life is how long a token may be used to connect (30 s when zero),
	// Timeout the seconds either side waits for a packet before giving up
	// (5 when zero). Allowed: Life 1 s..1 h; Timeout 1..60.
	Life    time.Duration
	Timeout int
	// Rooms, when not nil, says whether a room takes players; a request
	// for another is refused as "unknown_room".
	Rooms func(room string) bool
	// PerSecond and Burst bound the tokens issued: overall, and per
	// identity at a tenth of the rate (a burst of 3), so one player cannot
	// take tokens for everyone. 100 a second, burst 200, when zero.
	PerSecond float64
	Burst     int
	// Clock is the time tokens are stamped and buckets refilled with; nil
	// is time.Now.
	Clock func() time.Time
}

// Request is a token request's JSON body: the room, the client's
// identity (the matchmaker's player ID) and the game's own user data
// (base64, up to MaxData bytes).
type Request struct {
	Room     string `json:"room"`
	Identity string `json:"identity"`
	UserData []byte `json:"user_data,omitempty"`
}

// Response is a token request's JSON answer: the connect token (base64),
// its client ID (a decimal string: a 64-bit number), the server address it
// names and when it expires.
type Response struct {
	Token    []byte    `json:"token"`
	ClientID string    `json:"client_id"`
	Server   string    `json:"server"`
	Expires  time.Time `json:"expires_at"`
}

// Refusal reasons, the keys of Stats.Refused.
const (
	RefusedMethod       = "method"
	RefusedContentType  = "content_type"
	RefusedUnauthorized = "unauthorized"
	RefusedTooLarge     = "too_large"
	RefusedMalformed    = "malformed"
	RefusedUnknownRoom  = "unknown_room"
	RefusedRate         = "rate_limited"
	RefusedNoAddress    = "no_address"
)

// Stats counts the tokens issued and the requests refused by reason.
type Stats struct {
	Issued  uint64
	Refused map[string]uint64
}

// Service is an HTTP handler a matchmaker calls for connect tokens:
// POST with a JSON Request, answered with a JSON Response. Every
// refusal is an error body naming the reason, with a status to match,
// counted. It is safe for concurrent use.
type Service struct {
	opts   Options
	public atomic.Value // netip.AddrPort
	issued atomic.Uint64

	mu      sync.Mutex
	refused map[string]uint64
	all     bucket
	seed    maphash.Seed
	ids     []bucket // per identity, a fixed table keyed by a hash
}

// New returns a Service. It errors on an option out of range, naming it.
func New(opts Options) (*Service, error) {
	switch {
	case opts.Key == [udp.KeySize]byte{}:
		return nil, errors.New("tokens: Key is all zero")
	case len(opts.Secret) < 16:
		return nil, fmt.Errorf("tokens: Secret of %d bytes; at least 16", len(opts.Secret))
	case opts.Life != 0 && (opts.Life < time.Second || opts.Life > time.Hour):
		return nil, fmt.Errorf("tokens: Life %v outside 1s..1h", opts.Life)
	case opts.Timeout != 0 && (opts.Timeout < 1 || opts.Timeout > 60):
		return nil, fmt.Errorf("tokens: Timeout %d outside 1..60 seconds", opts.Timeout)
	case opts.PerSecond < 0 || opts.PerSecond > 1e6 || opts.Burst < 0:
		return nil, fmt.Errorf("tokens: rate %v a second, burst %d: want 0..1e6 and a burst ≥ 0", opts.PerSecond, opts.Burst)
	}
	if opts.Life == 0 {
		opts.Life = 30 * time.Second
	}
	if opts.Timeout == 0 {
		opts.Timeout = 5
	}
	if opts.PerSecond == 0 {
		opts.PerSecond = 100
	}
	if opts.Burst == 0 {
		opts.Burst = 2 * int(opts.PerSecond)
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	s := &Service{opts: opts, refused: map[string]uint64{}, seed: maphash.MakeSeed(), ids: make([]bucket, 4096)}
	s.public.Store(opts.PublicAddress)
	return s, nil
}

// SetPublicAddress changes the address later tokens name.
func (s *Service) SetPublicAddress(a netip.AddrPort) { s.public.Store(a) }

// Stats returns the counts.
func (s *Service) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Issued: s.issued.Load(), Refused: make(map[string]uint64, len(s.refused))}
	for k, v := range s.refused {
		st.Refused[k] = v
	}
	return st
}

// ServeHTTP answers one token request.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		s.refuse(w, http.StatusMethodNotAllowed, RefusedMethod, "POST only")
		return
	}
	// A JSON content type makes the request a non-simple one a browser
	// does not send across origins without asking first.
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		s.refuse(w, http.StatusUnsupportedMediaType, RefusedContentType, "Content-Type must be application/json")
		return
	}
	auth := r.Header.Get("Authorization")
	want := "Bearer " + s.opts.Secret
	if subtle.ConstantTimeCompare([]byte(auth), []byte(want)) != 1 {
		s.refuse(w, http.StatusUnauthorized, RefusedUnauthorized, "a bearer secret is required")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxRequestBytes+1))
	if err != nil || len(body) > MaxRequestBytes {
		s.refuse(w, http.StatusRequestEntityTooLarge, RefusedTooLarge, fmt.Sprintf("a request is at most %d bytes", MaxRequestBytes))
		return
	}
	var req Request
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	if err := d.Decode(&req); err != nil {
		s.refuse(w, http.StatusBadRequest, RefusedMalformed, "malformed request: "+err.Error())
		return
	}
	claims := Claims{Room: req.Room, Identity: req.Identity, Data: req.UserData}
	ud, err := claims.UserData()
	if err != nil {
		s.refuse(w, http.StatusBadRequest, RefusedMalformed, err.Error())
		return
	}
	if s.opts.Rooms != nil && !s.opts.Rooms(req.Room) {
		s.refuse(w, http.StatusNotFound, RefusedUnknownRoom, fmt.Sprintf("no room %q takes players", req.Room))
		return
	}
	public := s.public.Load().(netip.AddrPort)
	if !public.IsValid() {
		s.refuse(w, http.StatusServiceUnavailable, RefusedNoAddress, "the server's public address is not known yet")
		return
	}
	now := s.opts.Clock()
	if !s.allow(req.Identity, now) {
		w.Header().Set("Retry-After", "1")
		s.refuse(w, http.StatusTooManyRequests, RefusedRate, "too many token requests")
		return
	}
	id, err := clientID()
	if err != nil {
		http.Error(w, "no randomness", http.StatusInternalServerError)
		return
	}
	b, _, err := udp.MakeConnectToken(udp.TokenParams{PrivateKey: s.opts.Key, ProtocolID: s.opts.ProtocolID, ClientID: id,
		ServerAddresses: []netip.AddrPort{public}, Create: now, Expire: now.Add(s.opts.Life),
		TimeoutSeconds: int32(s.opts.Timeout), UserData: ud})
	if err != nil {
		http.Error(w, "cannot make a token", http.StatusInternalServerError)
		return
	}
	s.issued.Add(1)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store") // a token is a secret, good for one connection
	_ = json.NewEncoder(w).Encode(Response{Token: b, ClientID: strconv.FormatUint(id, 10), Server: public.String(),
		Expires: now.Add(s.opts.Life).UTC().Truncate(time.Second)})
}

// refuse answers an error body and counts the reason.
func (s *Service) refuse(w http.ResponseWriter, status int, reason, msg string) {
	s.mu.Lock()
	s.refused[reason]++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(struct {
		Reason  string `json:"reason"`
		Message string `json:"message"`
	}{reason, msg})
}

// allow takes a token from the overall bucket and from the identity's.
func (s *Service) allow(identity string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := now.UnixNano()
	slot := &s.ids[maphash.String(s.seed, identity)%uint64(len(s.ids))]
	if !slot.has(s.opts.PerSecond/10, 3, t) || !s.all.has(s.opts.PerSecond, float64(s.opts.Burst), t) {
		return false
	}
	slot.take()
	s.all.take()
	return true
}

// bucket is a token bucket on a nanosecond clock.
type bucket struct {
	tokens float64
	last   int64 // 0: never used (full)
}

// has refills b and reports whether it holds a token.
func (b *bucket) has(rate, burst float64, now int64) bool {
	if b.last == 0 {
		b.tokens = burst
	} else if dt := float64(now-b.last) / 1e9; dt > 0 {
		b.tokens = min(burst, b.tokens+dt*rate)
	}
	b.last = max(now, 1)
	return b.tokens >= 1
}

func (b *bucket) take() { b.tokens-- }

// clientID returns a random non-zero client ID: not sequential, so one
// token tells nothing of the others, and unique with overwhelming
// probability (two equal among a million tokens: about 3 in 10¹⁴).
func clientID() (uint64, error) {
	var b [8]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			return 0, err
		}
		if id := binary.LittleEndian.Uint64(b[:]); id != 0 {
			return id, nil
		}
	}
}
