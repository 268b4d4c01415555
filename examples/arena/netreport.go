package main

import (
	"encoding/json"
	"os"

	"github.com/ghostwire/ghostwire/examples/arena/game"
	"github.com/ghostwire/ghostwire/transport/udp"
)

// serverReport is the -serve process's report: the headless arena's
// schema (config, server, clients, converged, wall; clients is empty, the
// server does not see their side) plus what only a real network has.
type serverReport struct {
	game.Report
	Connections connectionsReport `json:"connections"`
	Dropped     droppedReport     `json:"dropped"`
	Netcode     netcodeReport     `json:"netcode"`
}

// connectionsReport counts the netcode connections the server handed to
// the game and how they ended.
type connectionsReport struct {
	Accepted  uint64 `json:"accepted"`    // completed the handshake
	Peak      int    `json:"peak"`        // most open at once
	OpenAtEnd int    `json:"open_at_end"` // told the server was closing
	Left      uint64 `json:"left"`        // the client said goodbye, or the game ended the connection
	TimedOut  uint64 `json:"timed_out"`   // the client fell silent
	QueueFull uint64 `json:"queue_full"`  // the game stopped reading the connection
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
