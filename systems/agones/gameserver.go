package agones

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"time"
)

// GameServer is what the sidecar says of this game server.
type GameServer struct {
	ObjectMeta ObjectMeta `json:"object_meta"`
	Status     Status     `json:"status"`
}

// ObjectMeta is the game server's Kubernetes name, labels and annotations.
type ObjectMeta struct {
	Name        string            `json:"name"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// Status is the game server's state ("Scheduled", "Ready", "Reserved",
// "Allocated", "Shutdown", ...), its public address and ports, and its
// counters.
type Status struct {
	State    string             `json:"state"`
	Address  string             `json:"address"`
	Ports    []Port             `json:"ports"`
	Counters map[string]Counter `json:"counters"`
}

// Port is a named public port of the game server.
type Port struct {
	Name string `json:"name"`
	Port int32  `json:"port"`
}

// PublicAddress returns the address and port clients reach the server at:
// Status.Address with the named port (the first when name is empty). ok
// is false before Agones has assigned them.
func (g *GameServer) PublicAddress(name string) (netip.AddrPort, bool) {
	ip, err := netip.ParseAddr(g.Status.Address)
	if err != nil {
		return netip.AddrPort{}, false
	}
	for _, p := range g.Status.Ports {
		if (name == "" || p.Name == name) && p.Port > 0 && p.Port < 65536 {
			return netip.AddrPortFrom(ip, uint16(p.Port)), true
		}
	}
	return netip.AddrPort{}, false
}

// Get returns the game server as the sidecar knows it now.
func (s *SDK) Get(ctx context.Context) (GameServer, error) {
	var g GameServer
	err := s.call(ctx, http.MethodGet, "/gameserver", nil, &g)
	return g, err
}

// Watch calls f with the game server each time it changes (the first
// call at once), until ctx ends; a stream the sidecar ends or drops is
// opened again after a second. It returns ctx's error. f runs on Watch's
// goroutine; a slow f delays the next update, not the sidecar.
func (s *SDK) Watch(ctx context.Context, f func(GameServer)) error {
	for ctx.Err() == nil {
		if err := s.watchOnce(ctx, f); err != nil && ctx.Err() == nil {
			s.log.Debug("agones: watch ended, reopening", "err", err)
		}
		select {
		case <-ctx.Done():
		case <-s.clock.After(time.Second):
		}
	}
	return ctx.Err()
}

// watchOnce reads one watch stream: a {"result": GameServer} per line.
func (s *SDK) watchOnce(ctx context.Context, f func(GameServer)) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/watch/gameserver", nil)
	if err != nil {
		return err
	}
	resp, err := s.watch.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &Error{Status: resp.StatusCode, Call: "GET /watch/gameserver", Message: "watch refused"}
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), maxBody)
	for sc.Scan() {
		var line struct {
			Result *GameServer `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil || line.Result == nil {
			return fmt.Errorf("agones: watch: undecodable line %.80q", sc.Text())
		}
		f(*line.Result)
	}
	return sc.Err()
}

// Counter is an Agones counter's count and capacity.
type Counter struct {
	Count    int64 `json:"count,string"`
	Capacity int64 `json:"capacity,string"`
}

// counterPatch is a counter update as the gateway takes it: int64s as
// strings, only the fields set.
type counterPatch struct {
	Count     *string `json:"count,omitempty"`
	CountDiff *string `json:"countDiff,omitempty"`
	Capacity  *string `json:"capacity,omitempty"`
}

// GetCounter returns counter name (declared in the fleet's spec.counters).
func (s *SDK) GetCounter(ctx context.Context, name string) (Counter, error) {
	var c Counter
	err := s.call(ctx, http.MethodGet, "/v1beta1/counters/"+name, nil, &c)
	return c, err
}

// SetCount sets counter name's count; the sidecar refuses one outside
// 0..capacity.
func (s *SDK) SetCount(ctx context.Context, name string, n int64) (Counter, error) {
	v := strconv.FormatInt(n, 10)
	return s.patchCounter(ctx, name, counterPatch{Count: &v})
}

// AddCount adds diff (negative to subtract) to counter name's count.
func (s *SDK) AddCount(ctx context.Context, name string, diff int64) (Counter, error) {
	v := strconv.FormatInt(diff, 10)
	return s.patchCounter(ctx, name, counterPatch{CountDiff: &v})
}

// SetCapacity sets counter name's capacity: the most the fleet may
// allocate against it.
func (s *SDK) SetCapacity(ctx context.Context, name string, n int64) (Counter, error) {
	v := strconv.FormatInt(n, 10)
	return s.patchCounter(ctx, name, counterPatch{Capacity: &v})
}

func (s *SDK) patchCounter(ctx context.Context, name string, p counterPatch) (Counter, error) {
	var c Counter
	err := s.call(ctx, http.MethodPatch, "/v1beta1/counters/"+name, p, &c)
	return c, err
}
