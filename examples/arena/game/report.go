package game

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/mlange-42/arche/generic"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/systems"
)

// Report is the outcome of a match. Everything but Wall depends only on the
// configuration: the same flags give the same report.
type Report struct {
	Config    ReportConfig   `json:"config"`
	Server    ServerReport   `json:"server"`
	Clients   []ClientReport `json:"clients"`
	Converged bool           `json:"converged"`
	// KillFeedExact is true when every client received every kill the
	// server sent it exactly once and in order (ClientReport.KillFeed).
	KillFeedExact bool `json:"kill_feed_exact"`
	// ComparedTick is the server tick at which each client's prediction
	// was compared with the server's state (harness.CheckOwnState);
	// SettledS is how long the bots stood still before it, at least
	// Config.SettleS.
	ComparedTick uint32  `json:"compared_tick"`
	SettledS     float64 `json:"settled_s"`
	// InterruptedAtS is the simulated time at which RunContext's context
	// ended the play early (the bots then stood still for Settle as at a
	// normal end, and SettledS counts from there); absent for a full match.
	InterruptedAtS float64    `json:"interrupted_at_s,omitempty"`
	Wall           WallReport `json:"wall"`
	// Recording names the file the server's match was recorded to, and
	// its size; absent without one.
	Recording *RecordingReport `json:"recording,omitempty"`
}

// RecordingReport is the recording of a match (-record).
type RecordingReport struct {
	File                 string  `json:"file"`
	Bytes                uint64  `json:"bytes"`
	BytesPerPlayerMinute float64 `json:"bytes_per_player_minute"`
}

// ReportConfig echoes the settings used.
type ReportConfig struct {
	Clients       int     `json:"clients"`
	DurationS     float64 `json:"duration_s"`
	SettleS       float64 `json:"settle_s"`
	TickRate      int     `json:"tick_rate"`
	RTTms         float64 `json:"rtt_ms"`
	JitterMS      float64 `json:"jitter_ms"`
	LossPct       float64 `json:"loss_pct"`
	DupPct        float64 `json:"dup_pct"`
	ReorderPct    float64 `json:"reorder_pct"`
	Seed          uint64  `json:"seed"`
	Rollback      string  `json:"rollback"`
	LagComp       string  `json:"lagcomp"`
	MaxRewindMS   float64 `json:"max_rewind_ms"`
	InterpDelayMS float64 `json:"interp_delay_ms"`
	// InputDelay is the -input-delay flag: ticks, or "auto".
	InputDelay string  `json:"input_delay"`
	Crates     int     `json:"crates"`
	ViewRadius float64 `json:"view_radius"`
	BotAim     string  `json:"bot_aim"`
	// Ball, Rockets and Chat are the -ball, -rockets and -chat flags:
	// "on" or "off".
	Ball    string `json:"ball"`
	Rockets string `json:"rockets"`
	Chat    string `json:"chat"`
}

// ServerReport holds the server's counters.
type ServerReport struct {
	Ticks          uint64 `json:"ticks"`
	InputsApplied  uint64 `json:"inputs_applied"`
	InputsMissing  uint64 `json:"inputs_missing"`
	InputsLate     uint64 `json:"inputs_late"`
	InputsRejected uint64 `json:"inputs_rejected"`
	InputsClamped  uint64 `json:"inputs_clamped"`
	BytesSent      uint64 `json:"bytes_sent"`
	BytesReceived  uint64 `json:"bytes_received"`
	BadPackets     uint64 `json:"bad_packets"`
	MaxBuffered    int    `json:"max_inputs_buffered"`
	// GhostsDeferred counts ghosts that waited for a later snapshot for
	// lack of room in the per-connection budget.
	GhostsDeferred uint64     `json:"ghosts_deferred"`
	Shots          ShotReport `json:"shots"`
	// Rockets counts the server's rockets (the Armoury's RocketStats).
	Rockets RocketReport `json:"rockets"`
	// Messages counts the game's messages over every connection
	// (ServerStats.Messages): refused ones by reason, and MessageDrops the
	// connections ended for too many refusals.
	Messages     MessageReport `json:"messages"`
	MessageDrops uint64        `json:"message_drops"`
	// Kills counts the kills the kill feed sent (KillFeed.Kills): every
	// kill of the gun and of the rockets.
	Kills uint64 `json:"kill_feed_kills"`
}

// MessageReport counts one end's game messages (systems.MessageStats,
// docs/messages.md): those it sent and received, those received of a type
// it has no handler for, a client's sends beyond its rate
// (systems.ErrMessageRate), and those it refused on arrival, by reason.
type MessageReport struct {
	Sent        uint64        `json:"sent"`
	Received    uint64        `json:"received"`
	Unhandled   uint64        `json:"unhandled"`
	RateLimited uint64        `json:"rate_limited"`
	Refused     RefusalReport `json:"refused"`
	// RefusedByServer is what the server refused of this client's
	// messages, by reason (its ConnStats); absent where the report does
	// not see the server (a -connect process).
	RefusedByServer *RefusalReport `json:"refused_by_server,omitempty"`
}

// RefusalReport counts refused messages by reason
// (systems.MessageRefusals).
type RefusalReport struct {
	Unknown   uint64 `json:"unknown"`
	Malformed uint64 `json:"malformed"`
	Oversized uint64 `json:"oversized"`
	OverRate  uint64 `json:"over_rate"`
}

// messageReport reads a MessageStats.
func messageReport(st systems.MessageStats) MessageReport {
	return MessageReport{Sent: st.Sent, Received: st.Received, Unhandled: st.Unhandled, RateLimited: st.RateLimited,
		Refused: refusalReport(st.Refused)}
}

func refusalReport(r systems.MessageRefusals) RefusalReport {
	return RefusalReport{Unknown: r.Unknown, Malformed: r.Malformed, Oversized: r.Oversized, OverRate: r.OverRate}
}

// KillFeedReport is one client's kill feed: the kills it received and,
// where the report sees the server, the kills the server sent it and
// whether it received each exactly once and in order (CheckKillFeed;
// Mismatch names the first difference when not).
type KillFeedReport struct {
	Received           uint64  `json:"received"`
	Sent               *uint64 `json:"sent,omitempty"`
	ExactlyOnceInOrder *bool   `json:"exactly_once_in_order,omitempty"`
	Mismatch           string  `json:"mismatch,omitempty"`
}

// ChatReport is one client's chat: the lines its bot said (-chat) and the
// lines the server relayed to it, its own included.
type ChatReport struct {
	Said  uint64 `json:"said"`
	Heard uint64 `json:"heard"`
}

// RocketReport is the server's side of the rockets: those it made ghosts
// of, those it refused for an empty magazine, the explosions and the
// players they hurt and killed.
type RocketReport struct {
	Fired    uint64 `json:"fired"`
	Refused  uint64 `json:"refused"`
	Exploded uint64 `json:"exploded"`
	Hits     uint64 `json:"hits"`
	Kills    uint64 `json:"kills"`
}

// ProjectileReport is one client's predicted rockets
// (docs/predicted-spawns.md): Predicted spawned by its prediction
// (ClientStats.SpawnsPredicted), Matched taken over by their server
// ghost, UnmatchedRemoved removed because none came (the server refused
// them) and Pending still waiting at the end (0 once a match settles:
// every one is matched or removed). Launched counts their launch sound,
// played once per rocket whatever the replays. MaxSpawnError is the
// largest jump, in arena units, of a rocket at the correction of its
// hand-over (PlayerStats.MaxSpawnError), MaxSpawnLagTicks the most ticks
// a server ghost was spawned after the client's prediction of it
// (ClientStats.SpawnLag).
type ProjectileReport struct {
	Predicted        uint64  `json:"predicted"`
	Matched          uint64  `json:"matched"`
	UnmatchedRemoved uint64  `json:"unmatched_removed"`
	Pending          uint64  `json:"pending"`
	Launched         uint64  `json:"launched"`
	MaxSpawnError    float64 `json:"max_spawn_error"`
	MaxSpawnLagTicks int     `json:"max_spawn_lag_ticks"`
}

// BallReport counts one client's switches of the ball between predicted
// and interpolated (ClientStats.SwitchedToPredicted and
// SwitchedToInterpolated; BallSwitch decides them).
type BallReport struct {
	SwitchedToPredicted    uint64 `json:"switched_to_predicted"`
	SwitchedToInterpolated uint64 `json:"switched_to_interpolated"`
}

// ShotReport counts the server's verdicts.
type ShotReport struct {
	Fired    uint64            `json:"fired"`
	Hits     uint64            `json:"hits"`
	Kills    uint64            `json:"kills"`
	Verdicts map[string]uint64 `json:"verdicts"`
	// Rules are the rules the server's judge enforces, by the reason their
	// refusals carry (lagcomp.Judge.Rules).
	Rules []string `json:"rules"`
	// OtherModeHits is how many of the same shots the other mode would
	// have judged hits (against the present when lag compensation is on,
	// at the view tick when it is off).
	OtherModeHits uint64 `json:"other_mode_hits"`
}

// ClientReport holds one client's counters and measurements.
type ClientReport struct {
	ID              int     `json:"id"`
	Ticks           uint64  `json:"ticks"`
	Mispredictions  uint64  `json:"mispredictions"`
	Rollbacks       uint64  `json:"rollbacks"`
	ReplayedTicks   uint64  `json:"replayed_ticks"`
	HardCorrections uint64  `json:"hard_corrections"`
	MaxCorrection   float64 `json:"max_correction"`
	FinalError      float64 `json:"final_error"`
	Footsteps       uint64  `json:"footsteps"`
	MovingInputs    uint64  `json:"moving_inputs"`
	RTTms           float64 `json:"rtt_ms"`
	AheadTicks      float64 `json:"ahead_ticks"`
	// InputDelayTicks is the input delay in use at the end
	// (systems.ClientStats.InputDelay), InputDelayChanges the one-tick
	// steps it took; MoveLatencyTicks the most ticks the bot's moves
	// waited between sampling and their first prediction, measured: the
	// delay as the player feels it.
	InputDelayTicks   int     `json:"input_delay_ticks"`
	InputDelayChanges uint64  `json:"input_delay_changes"`
	MoveLatencyTicks  int     `json:"move_latency_ticks"`
	BytesDownPerS     float64 `json:"bytes_down_per_s"`
	BytesUpPerS       float64 `json:"bytes_up_per_s"`
	Converged         bool    `json:"converged"`
	// Divergence says what differed at the compared tick, when not
	// Converged.
	Divergence    string  `json:"divergence,omitempty"`
	InterpDelayMS float64 `json:"interp_delay_ms"`
	// InterpDelayMeanMS is the interpolation delay averaged over the
	// match's simulated seconds.
	InterpDelayMeanMS float64 `json:"interp_delay_mean_ms"`
	ExtrapolatedTicks float64 `json:"extrapolated_ticks"`
	MaxExtrapolation  float64 `json:"max_extrapolation_ticks"`
	// HeldTicks is the part of ExtrapolatedTicks held at the cap.
	HeldTicks     float64 `json:"held_ticks"`
	MaxRemoteStep float64 `json:"max_remote_step"`
	ShotsFired    uint64  `json:"shots_fired"`
	// ConfirmedHits counts the hits the server confirmed to this client
	// (its hit markers), Confirmations every verdict it confirmed.
	ConfirmedHits uint64 `json:"confirmed_hits"`
	Confirmations uint64 `json:"confirmations"`
	// Cheat is the cheat the client's bot plays ("none": honest);
	// CheatShots its shots that cheated and CheatHits the confirmed hits
	// among them: what cheating gained.
	Cheat      string `json:"cheat"`
	CheatShots uint64 `json:"cheat_shots"`
	CheatHits  uint64 `json:"cheat_hits"`
	// MaxGhostStaleness is the longest, in ticks, that a ghost in this
	// client's scope waited on the server with a change not yet sent to
	// it (room, priority); known only where the report sees the server
	// (not in a -connect process).
	MaxGhostStaleness *int   `json:"max_ghost_staleness_ticks,omitempty"`
	Teleports         uint64 `json:"remote_teleports"`
	SmoothingSnaps    uint64 `json:"smoothing_snaps"`

	// MispredictionsBy counts mispredicted ghosts by the first component
	// that differed (systems.ClientStats.MispredictionsBy); absent when
	// none. It never names game.Health: the server owns it.
	MispredictionsBy map[string]uint64 `json:"mispredictions_by_component,omitempty"`

	Projectiles ProjectileReport `json:"projectiles"`
	Ball        BallReport       `json:"ball"`

	Messages MessageReport  `json:"messages"`
	KillFeed KillFeedReport `json:"kill_feed"`
	Chat     ChatReport     `json:"chat"`
}

// WallReport holds what depends on the machine.
type WallReport struct {
	Seconds             float64 `json:"seconds"`
	SimSecondsPerSecond float64 `json:"sim_seconds_per_wall_second"`
	// ServerTickUS is the server's wall time per tick (its Update calls:
	// receiving, the tick, sending) over the match, in µs; absent when the
	// server's ticks were not timed (a networked run).
	ServerTickUS *TickTime `json:"server_tick_us,omitempty"`
}

// TickTime summarizes wall times per tick, in µs.
type TickTime struct {
	Mean float64 `json:"mean"`
	P99  float64 `json:"p99"`
}

// tickTime summarizes ts (it sorts them); nil for none.
func tickTime(ts []time.Duration) *TickTime {
	if len(ts) == 0 {
		return nil
	}
	var sum time.Duration
	for _, t := range ts {
		sum += t
	}
	slices.Sort(ts)
	us := func(d time.Duration) float64 { return round6(float64(d) / float64(time.Microsecond)) }
	p99 := ts[(len(ts)*99+99)/100-1]
	return &TickTime{Mean: us(sum / time.Duration(len(ts))), P99: us(p99)}
}

// Second is the progress of one simulated second.
type Second struct {
	At             time.Duration
	ServerTick     gw.Tick
	Connected      int
	Mispredictions uint64
	Rollbacks      uint64
	Replayed       uint64
	RTT            time.Duration
	Ahead          float64
	ConfirmedHits  uint64 // hit markers shown on the clients so far
}

// Print writes the second as one line.
func (s Second) Print(w io.Writer) {
	fmt.Fprintf(w, "t=%4.0fs  server tick %6d  clients %2d  rtt %4.0fms  ahead %5.1f ticks  mispredictions %5d  rollbacks %5d  replayed %6d  hits confirmed %5d\n",
		s.At.Seconds(), s.ServerTick, s.Connected, float64(s.RTT)/float64(time.Millisecond), s.Ahead, s.Mispredictions, s.Rollbacks, s.Replayed, s.ConfirmedHits)
}

// MaxExtraSettle bounds how long a match waits past Config.Settle for
// everything in flight to land (see Match.Run).
const MaxExtraSettle = 10 * time.Second

// Run plays the match to its end and returns the report: Duration, then
// Settle with the bots still, then on until nothing in flight would still
// change the result (at most MaxExtraSettle): on the server every player
// alive, still and touching no other (no respawn or shove pending) since
// some tick Q, and every connected client has received a snapshot of Q or
// later and draws its remote players at Q or later. Then each client's
// prediction at the server's tick is compared with the server's state at
// that tick (harness.CheckOwnState). onSecond, if set, is called after
// every simulated second.
func (m *Match) Run(onSecond func(Second)) *Report {
	return m.RunContext(context.Background(), onSecond)
}

// RunContext is Run, ended early when ctx ends (a signal): at the next
// simulated second the bots stop and stand still for Settle, then the match
// settles and reports as at a normal end, with Report.InterruptedAtS set.
func (m *Match) RunContext(ctx context.Context, onSecond func(Second)) *Report {
	h := m.Harness
	end := m.Config.Duration + m.Config.Settle()
	start := time.Now()
	m.delaySum = make([]time.Duration, len(h.Clients))
	// Room for every tick up to the longest settle: no append reallocates.
	m.tickWall = make([]time.Duration, 0, int((end+MaxExtraSettle+time.Second).Seconds())*m.Config.TickRate)
	interrupted := time.Duration(0)
	for next := time.Second; h.Time.Now() < end; next += time.Second {
		if now := h.Time.Now(); ctx.Err() != nil && now < m.stopAt {
			interrupted, end = now, now+m.Config.Settle()
			m.stopBots(now)
		}
		h.Run(min(next, end) - h.Time.Now())
		m.seconds++
		for i, c := range h.Clients {
			m.delaySum[i] += c.Stats().InterpolationDelay
		}
		if onSecond != nil {
			onSecond(m.second())
		}
	}
	m.settle()
	wall := time.Since(start).Seconds()
	r := m.report()
	r.SettledS = round6((h.Time.Now() - m.stopAt).Seconds())
	r.InterruptedAtS = round6(interrupted.Seconds())
	r.Wall = WallReport{Seconds: wall, SimSecondsPerSecond: h.Time.Now().Seconds() / max(wall, 1e-9), ServerTickUS: tickTime(m.tickWall)}
	m.tickWall = nil
	return r
}

// stopBots makes every bot stand still from now on.
func (m *Match) stopBots(now time.Duration) {
	m.stopAt = now
	for _, ps := range m.Players {
		if ps.Bot != nil {
			ps.Bot.stopAt = now
		}
		if ps.Chatter != nil {
			ps.Chatter.stopAt = now
		}
	}
}

// settle runs on, one tick at a time, until the server has been quiet
// since a tick every client has caught up with, or MaxExtraSettle passed.
func (m *Match) settle() {
	h := m.Harness
	interval := time.Second / time.Duration(m.Config.TickRate)
	deadline := h.Time.Now() + MaxExtraSettle
	quiet, since := false, gw.Tick(0)
	m.quiet[0] = m.quiet[0][:0]
	for {
		switch {
		case !m.serverQuiet():
			quiet = false
		case !quiet:
			quiet, since = true, h.Server.World().Tick()
		}
		if quiet && m.caughtUp(since) || h.Time.Now() >= deadline {
			return
		}
		h.Run(interval)
	}
}

// serverQuiet reports whether every player on the server is alive and
// has kept its position and velocity since the last call (one tick ago),
// the ball too, and no rocket flies: no respawn pending, no shove or push
// still moving anything, no explosion to come. Players that touch but no
// longer move each other are quiet.
func (m *Match) serverQuiet() bool {
	a := m.Harness.Server.World().Arche()
	q := generic.NewFilter3[Position, Velocity, Health]().With(generic.T[components.Ghost]()).Query(a)
	prev := m.quiet[0]
	m.quiet[0], m.quiet[1] = m.quiet[1][:0], prev
	alive := true
	for q.Next() {
		p, v, h := q.Get()
		alive = alive && h.Alive()
		m.quiet[0] = append(m.quiet[0], quietState{q.Entity(), *p, *v})
	}
	bq := generic.NewFilter2[Position, Velocity]().With(generic.T[Ball]()).Query(a)
	for bq.Next() {
		p, v := bq.Get()
		m.quiet[0] = append(m.quiet[0], quietState{bq.Entity(), *p, *v})
	}
	rq := generic.NewFilter1[Rocket]().Query(a)
	flying := rq.Count()
	rq.Close()
	return alive && flying == 0 && slices.Equal(prev, m.quiet[0])
}

// caughtUp reports whether every connected client has received a
// snapshot of tick q or later and draws its remote players at q or later.
func (m *Match) caughtUp(q gw.Tick) bool {
	for _, c := range m.Harness.Clients {
		if !c.Connected() {
			continue
		}
		st := c.Stats()
		render, _ := gw.TickAt(st.RenderTick)
		if st.SnapshotsReceived == 0 || st.NewestSnapshot.Before(q) || render.Before(q) {
			return false
		}
	}
	return true
}

func (m *Match) second() Second {
	h := m.Harness
	s := Second{At: h.Time.Now(), ServerTick: h.Server.World().Tick(), Connected: h.Server.Stats().Connections}
	var rtt time.Duration
	for i, c := range h.Clients {
		st := c.Stats()
		s.ConfirmedHits += m.Players[i].ConfirmedHits
		s.Mispredictions += st.Mispredictions
		s.Rollbacks += st.Rollbacks
		s.Replayed += st.ReplayedTicks
		rtt += st.RTT
		s.Ahead += st.Ahead
	}
	if n := len(h.Clients); n > 0 {
		s.RTT = rtt / time.Duration(n)
		s.Ahead /= float64(n)
	}
	return s
}

func (m *Match) report() *Report {
	h := m.Harness
	r := &Report{Config: m.reportConfig(), Server: m.serverReport(h.Server)}
	r.Converged, r.KillFeedExact = true, true
	r.ComparedTick = uint32(h.Server.World().Tick())
	feed := KillFeedOf(h.Server.World())
	for i, c := range h.Clients {
		cr := m.clientReport(i, c, h.Time.Now())
		cr.FinalError, _ = FinalError(c, h.Server)
		cr.FinalError = round6(cr.FinalError)
		conn, _ := c.Conn()
		if vs, ok := h.Server.ConnStats(conn); ok {
			cr.MaxGhostStaleness = &vs.Replication.MaxStaleness
			refused := refusalReport(vs.Messages.Refused)
			cr.Messages.RefusedByServer = &refused
		}
		if feed != nil {
			sent := feed.Sent(conn)
			n, exact := uint64(len(sent)), true
			cr.KillFeed.Sent, cr.KillFeed.ExactlyOnceInOrder = &n, &exact
			if err := CheckKillFeed(sent, m.Players[i].Kills); err != nil {
				exact, cr.KillFeed.Mismatch = false, err.Error()
			}
			r.KillFeedExact = r.KillFeedExact && exact
		}
		if m.seconds > 0 {
			cr.InterpDelayMeanMS = round6(ms(m.delaySum[i]) / float64(m.seconds))
		}
		cr.Converged = true
		if err := h.CheckOwnState(i); err != nil {
			cr.Converged, cr.Divergence = false, err.Error()
		}
		r.Converged = r.Converged && cr.Converged
		r.Clients = append(r.Clients, cr)
	}
	return r
}

// reportConfig echoes the match's settings.
func (m *Match) reportConfig() ReportConfig {
	cfg := m.Config
	return ReportConfig{
		Clients: cfg.Clients, DurationS: cfg.Duration.Seconds(), SettleS: cfg.Settle().Seconds(), TickRate: cfg.TickRate,
		RTTms: ms(cfg.RTT), JitterMS: ms(cfg.Jitter), LossPct: cfg.Loss, DupPct: cfg.Dup, ReorderPct: cfg.Reorder,
		Seed: cfg.Seed, Rollback: cfg.Rollback.String(), LagComp: onOff(cfg.LagComp),
		MaxRewindMS: ms(cfg.MaxRewind), InterpDelayMS: ms(cfg.InterpDelay), InputDelay: InputDelayFlag(cfg.InputDelay),
		Crates: cfg.Crates, ViewRadius: round6(float64(cfg.ViewRadius)),
		BotAim: cmp.Or(cfg.BotAim, AimPerfect), Ball: onOff(cfg.Ball), Rockets: onOff(cfg.Rockets), Chat: onOff(cfg.Chat),
	}
}

// serverReport reads the server's counters and the shot verdicts.
func (m *Match) serverReport(s *systems.Server) ServerReport {
	ss := s.Stats()
	r := ServerReport{Ticks: ss.Ticks, InputsApplied: ss.InputsApplied, InputsMissing: ss.InputsMissing,
		InputsLate: ss.InputsLate, InputsRejected: ss.InputsRejected, InputsClamped: ss.InputsClamped,
		BytesSent: ss.BytesSent, BytesReceived: ss.BytesReceived, BadPackets: ss.BadPackets, MaxBuffered: ss.MaxBuffered,
		GhostsDeferred: ss.GhostsDeferred, Messages: messageReport(ss.Messages), MessageDrops: ss.MessageDrops}
	if feed := KillFeedOf(s.World()); feed != nil {
		r.Kills = feed.Kills
	}
	if sh := m.Shots; sh != nil {
		r.Shots = ShotReport{Fired: sh.Stats.Fired, Hits: sh.Stats.Hits, Kills: sh.Stats.Kills,
			Verdicts: sh.Stats.Verdicts, OtherModeHits: sh.Stats.OtherModeHits}
		for _, rule := range sh.judge().Rules() {
			r.Shots.Rules = append(r.Shots.Rules, string(rule))
		}
	}
	if ar := m.Armoury; ar != nil {
		st := ar.Stats
		r.Rockets = RocketReport{Fired: st.Fired, Refused: st.Refused, Exploded: st.Exploded, Hits: st.Hits, Kills: st.Kills}
	}
	return r
}

// clientReport reads client i's counters and measurements; the byte rates
// are over elapsed. FinalError and Converged are left for the caller,
// which may or may not see the server.
func (m *Match) clientReport(i int, c *systems.Client, elapsed time.Duration) ClientReport {
	st := c.Stats()
	ps := m.Players[i]
	sim := max(elapsed.Seconds(), 1e-9)
	cr := ClientReport{
		ID: i + 1, Ticks: st.Ticks, Mispredictions: st.Mispredictions, Rollbacks: st.Rollbacks,
		ReplayedTicks: st.ReplayedTicks, HardCorrections: st.HardCorrections, MaxCorrection: round6(ps.MaxCorrection),
		Footsteps: ps.Footsteps, RTTms: round6(ms(st.RTT)), AheadTicks: round6(st.Ahead),
		InputDelayTicks: st.InputDelay, InputDelayChanges: st.InputDelayChanges, MoveLatencyTicks: ps.MoveLatency,
		BytesDownPerS: round6(float64(st.BytesReceived) / sim),
		BytesUpPerS:   round6(float64(st.BytesSent) / sim),
		InterpDelayMS: round6(ms(st.InterpolationDelay)), ExtrapolatedTicks: round6(st.ExtrapolatedTicks),
		MaxExtrapolation: round6(st.MaxExtrapolation), HeldTicks: round6(st.HeldTicks), MaxRemoteStep: round6(ps.MaxRemoteStep),
		ShotsFired: ps.ShotsFired, Teleports: st.Teleports, ConfirmedHits: ps.ConfirmedHits, Confirmations: ps.Confirmations,
		MispredictionsBy: st.MispredictionsBy,
		Projectiles: ProjectileReport{Predicted: st.SpawnsPredicted, Matched: st.SpawnsMatched, UnmatchedRemoved: st.SpawnsUnmatched,
			Pending: st.SpawnsPredicted - st.SpawnsMatched - st.SpawnsUnmatched, Launched: ps.Rockets,
			MaxSpawnError: round6(ps.MaxSpawnError), MaxSpawnLagTicks: st.SpawnLag},
		Ball:     BallReport{SwitchedToPredicted: st.SwitchedToPredicted, SwitchedToInterpolated: st.SwitchedToInterpolated},
		Messages: messageReport(st.Messages),
		KillFeed: KillFeedReport{Received: uint64(len(ps.Kills))},
		Chat:     ChatReport{Heard: ps.ChatHeard},
	}
	if ps.Chatter != nil {
		cr.Chat.Said = ps.Chatter.Said
	}
	if ps.Smoother != nil {
		cr.SmoothingSnaps = st.SmoothingSnaps
	}
	cr.Cheat = ps.Cheat
	if cr.Cheat == CheatNone {
		cr.Cheat = "none"
	}
	if ps.Bot != nil {
		cr.MovingInputs = ps.Bot.Moving
		cr.CheatShots, cr.CheatHits = ps.Bot.CheatShots, ps.Bot.CheatHits
	}
	return cr
}

// FinalError compares a client's own player with the server's: the
// distance between the positions, and whether position and velocity are
// bit-identical. It returns +Inf and false when the client has no player
// yet or the server no longer has it. Both endpoints must be idle while it
// reads their worlds.
func FinalError(c *systems.Client, s *systems.Server) (float64, bool) {
	var id components.GhostID // the client's own player: the ghost its input drives
	q := generic.NewFilter1[components.Ghost]().With(generic.T[components.InputHeader]()).Query(c.World().Arche())
	for q.Next() {
		id = max(id, q.Get().ID)
	}
	if id == 0 {
		return math.Inf(1), false
	}
	ce, _ := c.Ghosts().Entity(id)
	se, ok := s.Ghosts().Entity(id)
	if !ok {
		return math.Inf(1), false
	}
	cp, cv := getPV(c.World().Arche(), ce)
	sp, sv := getPV(s.World().Arche(), se)
	d := float64(length(cp.X-sp.X, cp.Y-sp.Y))
	return d, cp == sp && cv == sv
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// round6 keeps reports readable and stable across platforms' float
// formatting.
func round6(v float64) float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return -1
	}
	return math.Round(v*1e6) / 1e6
}
