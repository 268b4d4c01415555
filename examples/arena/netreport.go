package main

import (
	"encoding/json"
	"os"
	"strings"
	"time"

	"github.com/ghostwire/ghostwire/examples/arena/game"
	"github.com/ghostwire/ghostwire/systems/fleet"
	"github.com/ghostwire/ghostwire/transport/udp"
)

// serverReport is the -serve process's report: the headless arena's
// schema (config, server, clients, converged, wall; server is the rooms'
// counters added up, clients is empty: the server does not see their
// side) plus what only a real network has, a section per room and the
// drain.
type serverReport struct {
	game.Report
	Connections connectionsReport `json:"connections"`
	Dropped     droppedReport     `json:"dropped"`
	Netcode     netcodeReport     `json:"netcode"`
	Rooms       []roomReport      `json:"rooms"`
	Drain       drainReport       `json:"drain"`
	// Agones is the sidecar's side (with -agones only).
	Agones *agonesReport `json:"agones,omitempty"`
}

// roomReport is one room as it ended (rooms.RoomStats, and the game's
// counts of its server).
type roomReport struct {
	Name  string `json:"name"`
	Ticks uint64 `json:"ticks"`
	// ClientsAtEnd were told the server is closing; Peak is the most at
	// once.
	ClientsAtEnd int    `json:"clients_at_end"`
	Peak         int    `json:"peak"`
	Reconnects   uint64 `json:"reconnects"`    // players who took their place back
	HeldGivenUp  uint64 `json:"held_given_up"` // places held for a lost player, given up
	Dropped      uint64 `json:"dropped"`       // connections the room dropped (timeouts, backlogs)
	// The wall time of the room's updates over its last 1,024, the
	// longest, and the most an update began late.
	TickP50US  float64           `json:"tick_p50_us"`
	TickP99US  float64           `json:"tick_p99_us"`
	TickMaxUS  float64           `json:"tick_max_us"`
	LateMaxMS  float64           `json:"late_max_ms"`
	CPUSeconds float64           `json:"cpu_s"` // the sum of its updates
	Server     game.ServerReport `json:"server"`
	// Recording is the room's recording (-record), and RecordingError
	// what went wrong writing it.
	Recording      *game.RecordingReport `json:"recording,omitempty"`
	RecordingError string                `json:"recording_error,omitempty"`
}

// drainReport is how the process ended (fleet.Report): why, how long the
// drain took of its grace, and how many rooms finished by themselves
// (nobody left playing) or were ended at the grace.
type drainReport struct {
	Reason   string  `json:"reason"`
	Seconds  float64 `json:"seconds"`
	GraceS   float64 `json:"grace_s"`
	Finished int     `json:"finished"`
	Ended    int     `json:"ended"`
}

// agonesReport is what the process did through the Agones sidecar.
type agonesReport struct {
	PublicAddress string `json:"public_address"`
	Calls         uint64 `json:"calls"`
	Retries       uint64 `json:"retries"`
	HealthPings   uint64 `json:"health_pings"`
	HealthFailed  uint64 `json:"health_failed"`
	RoomsCount    int64  `json:"rooms_count"`    // the counter at the end
	RoomsCapacity int64  `json:"rooms_capacity"` // the count when the drain began
	CounterFailed uint64 `json:"counter_failed"` // updates retried
}

// connectionsReport counts the netcode connections the server handed to
// the rooms and how they ended.
type connectionsReport struct {
	Accepted  uint64 `json:"accepted"`    // completed the handshake
	Peak      int    `json:"peak"`        // most open at once
	OpenAtEnd int    `json:"open_at_end"` // told the server was closing
	Left      uint64 `json:"left"`        // the client said goodbye, or the server ended the connection
	TimedOut  uint64 `json:"timed_out"`   // the client fell silent
	QueueFull uint64 `json:"queue_full"`  // the game stopped reading the connection
	// Refused counts the connections routed to no room, by reason
	// (rooms.Stats.Refused: no_claims, unknown_room, room_busy, draining).
	Refused map[string]uint64 `json:"refused,omitempty"`
	// TokensIssued counts the connect tokens the token endpoint gave out
	// (0 without -tokens).
	TokensIssued uint64 `json:"tokens_issued"`
	// TokensRefused counts the token requests refused, by reason
	// (tokens.Stats.Refused).
	TokensRefused map[string]uint64 `json:"tokens_refused,omitempty"`
}

// droppedReport counts the packets and handshakes the netcode layer
// refused, by reason (see droppedFrom for what each sums).
type droppedReport struct {
	Malformed     uint64 `json:"malformed"`
	BadToken      uint64 `json:"bad_token"`
	ExpiredToken  uint64 `json:"expired_token"`
	Replayed      uint64 `json:"replayed"`
	UnknownClient uint64 `json:"unknown_client"`
	ServerFull    uint64 `json:"server_full"`
	RateLimited   uint64 `json:"rate_limited"`
	Timeout       uint64 `json:"timeout"`
}

// droppedFrom folds the listener's finer counters into the report's
// reasons: a forged or corrupted packet is malformed; a token for another
// protocol, another server, already used or for a client already connected
// is a bad token; a handshake pushed out of the full pending table is
// server_full; one refused for its IP's pending cap is rate_limited; a
// handshake never answered is a timeout, like a connection gone silent.
func droppedFrom(s udp.Stats) droppedReport {
	return droppedReport{
		Malformed:     s.Malformed + s.AuthFailed,
		BadToken:      s.BadToken + s.WrongProtocol + s.WrongAddress + s.TokenReused + s.ClientInUse,
		ExpiredToken:  s.ExpiredToken,
		Replayed:      s.Replayed,
		UnknownClient: s.UnknownClient,
		ServerFull:    s.ServerFull + s.PendingFull,
		RateLimited:   s.RateLimited + s.PendingAddressFull,
		Timeout:       s.Timeout + s.PendingExpired,
	}
}

// netcodeReport is every counter of udp.Stats, one to one.
type netcodeReport struct {
	Malformed          uint64 `json:"malformed"`
	AuthFailed         uint64 `json:"auth_failed"`
	BadToken           uint64 `json:"bad_token"`
	ExpiredToken       uint64 `json:"expired_token"`
	WrongProtocol      uint64 `json:"wrong_protocol"`
	WrongAddress       uint64 `json:"wrong_address"`
	TokenReused        uint64 `json:"token_reused"`
	ClientInUse        uint64 `json:"client_in_use"`
	Replayed           uint64 `json:"replayed"`
	UnknownClient      uint64 `json:"unknown_client"`
	ServerFull         uint64 `json:"server_full"`
	RateLimited        uint64 `json:"rate_limited"`
	Timeout            uint64 `json:"timeout"`
	PendingFull        uint64 `json:"pending_full"`
	PendingAddressFull uint64 `json:"pending_address_full"`
	PendingDisplaced   uint64 `json:"pending_displaced"`
	SpentTokensFull    uint64 `json:"spent_tokens_full"`
	PendingExpired     uint64 `json:"pending_expired"`
	TokenHistoryFull   uint64 `json:"token_history_full"`
	QueueFull          uint64 `json:"queue_full"`
	Writes             uint64 `json:"writes"`
	Written            uint64 `json:"written"`
	PollCapped         uint64 `json:"poll_capped"`
}

func netcodeFrom(s udp.Stats) netcodeReport { return netcodeReport(s) }

// clientsReport is the -connect process's report: the headless arena's
// schema, each client with how its connection ended. The server section
// stays zero: the server is another process with its own report.
type clientsReport struct {
	Config    game.ReportConfig `json:"config"`
	Server    game.ServerReport `json:"server"`
	Clients   []clientReport    `json:"clients"`
	Converged bool              `json:"converged"`
	Wall      game.WallReport   `json:"wall"`
	// Clean is true when every client connected and its connection
	// ended cleanly: it left when its match was over or interrupted, or
	// the server said it was closing.
	Clean bool `json:"clean"`
}

// clientReport is one bot client: the headless arena's client fields
// (final_error is -1: the server's world is in another process; converged
// means its prediction matched the server's last snapshots) and the end
// of its connection.
type clientReport struct {
	game.ClientReport
	Connected bool   `json:"connected"`
	End       string `json:"end"`   // how the connection ended, in words
	Clean     bool   `json:"clean"` // a goodbye from either side, not a timeout or a refusal
}

// writeReport writes v as indented JSON to path.
func writeReport(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// report is the -serve process's report once its drain is over.
func (s *arenaServer) report(fr fleet.Report) *serverReport {
	r := &serverReport{Report: game.Report{Config: s.config, Clients: []game.ClientReport{}}, Rooms: []roomReport{}}
	r.Config.DurationS, r.Config.SettleS = s.opts.Duration.Seconds(), 0 // 0: until a signal
	var servers []game.ServerReport
	for _, room := range s.sortedRooms() {
		if rr := room.result(); rr != nil {
			r.Rooms = append(r.Rooms, *rr)
			servers = append(servers, rr.Server)
			r.Connections.OpenAtEnd += rr.ClientsAtEnd
		}
	}
	r.Server = sumServerReports(servers)
	s.conns.prune()
	c := s.conns.counts
	r.Connections.Accepted, r.Connections.Peak = c.accepted, c.peak
	r.Connections.Left, r.Connections.TimedOut, r.Connections.QueueFull = c.left, c.timedOut, c.queueFull
	for reason, n := range fr.Routing.Refused {
		if n > 0 {
			if r.Connections.Refused == nil {
				r.Connections.Refused = map[string]uint64{}
			}
			r.Connections.Refused[reason] = n
		}
	}
	if svc := s.fleet.Tokens(); svc != nil {
		st := svc.Stats()
		r.Connections.TokensIssued, r.Connections.TokensRefused = st.Issued, st.Refused
	}
	st := s.listener.Stats()
	r.Dropped = droppedFrom(st)
	r.Netcode = netcodeFrom(st)
	grace := s.opts.Grace
	if grace == 0 {
		grace = fleet.DefaultGrace
	}
	r.Drain = drainReport{Reason: string(fr.Reason), Seconds: fr.Drain.Seconds(), GraceS: grace.Seconds(),
		Finished: fr.Finished, Ended: fr.Ended}
	if s.opts.Agones {
		r.Agones = &agonesReport{PublicAddress: s.fleet.PublicAddress().String(), Calls: fr.Agones.Calls,
			Retries: fr.Agones.Retries, HealthPings: fr.Agones.Pings, HealthFailed: fr.Agones.PingErr,
			RoomsCount: fr.Counter.Count, RoomsCapacity: fr.Counter.Capacity, CounterFailed: fr.CounterErrors}
	}
	r.Wall = game.WallReport{Seconds: time.Since(s.started).Seconds(), SimSecondsPerSecond: 1}
	// The server has no client's view to compare with its own: whether
	// the clients converged is in their reports.
	r.Converged = true
	return r
}

// sumServerReports adds the rooms' reports up, field by field through
// their JSON so that a counter the game adds is summed too: numbers are
// added, except a "max_" one, which takes the largest; maps are merged
// the same way; anything else is the first room's.
func sumServerReports(rs []game.ServerReport) game.ServerReport {
	var sum map[string]any
	for _, r := range rs {
		b, err := json.Marshal(r)
		if err != nil {
			continue // a report of plain numbers, strings and maps always marshals
		}
		var m map[string]any
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		sum = addJSON(sum, m)
	}
	var out game.ServerReport
	if b, err := json.Marshal(sum); err == nil {
		_ = json.Unmarshal(b, &out)
	}
	return out
}

// addJSON adds b into a (see sumServerReports) and returns a.
func addJSON(a, b map[string]any) map[string]any {
	if a == nil {
		return b
	}
	for k, v := range b {
		switch bv := v.(type) {
		case float64:
			if av, ok := a[k].(float64); ok {
				if strings.HasPrefix(k, "max_") {
					a[k] = max(av, bv)
				} else {
					a[k] = av + bv
				}
				continue
			}
		case map[string]any:
			if av, ok := a[k].(map[string]any); ok {
				a[k] = addJSON(av, bv)
				continue
			}
		}
		if _, ok := a[k]; !ok {
			a[k] = v
		}
	}
	return a
}
