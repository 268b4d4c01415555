package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/examples/arena/game"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/transport/udp"
)

// clientsOptions configure the -connect process.
type clientsOptions struct {
	Game   game.Config // Clients bots play Duration, then stand still for Settle
	Server netip.AddrPort
	// Room is the room the bots join (-room), named in their tokens; the
	// first room, roomName(1), when empty.
	Room string
	Key  [udp.KeySize]byte // tokens made here when TokenURL is ""
	// TokenURL is the token endpoint to fetch each bot's token from.
	TokenURL string
	// TokenSecret is what the bots present to the token endpoint.
	TokenSecret string
	// TokenTimeout is the timeout, in seconds, of the tokens made here
	// (tokenTimeout when zero): how long a handshake waits for an answer.
	TokenTimeout int
	Logger       *slog.Logger
}

// converged is how many of the server's snapshots in a row a client's
// prediction must have matched at the end of the match.
const convergedSnapshots = 10

// bot is one client: its own UDP connection with its own token, and the
// game's client endpoint on it.
type bot struct {
	index     int
	conn      *udp.Client
	client    *systems.Client
	connected bool
	end       string // "" while the connection is up
	clean     bool
	// noAnswer is set when the handshake timed out: the server never
	// answered (see noAnswerCauses).
	noAnswer bool
	// The snapshot count when the prediction last missed: convergence is
	// convergedSnapshots snapshots since.
	mispredictions, missedAt uint64
}

// arenaClients is the -connect process: bot clients in real time, each on
// its own UDP connection, updated from one goroutine.
type arenaClients struct {
	opts  clientsOptions
	clock gw.TimeSource
	game  *game.Endpoints
	bots  []*bot
	// connectedAll is set once every bot has connected.
	connectedAll bool
}

// newArenaClients gets a token for each bot (made with the key, or fetched
// from the token endpoint) and starts connecting them all.
func newArenaClients(ctx context.Context, o clientsOptions) (*arenaClients, error) {
	clock := gw.NewRealTime()
	g, err := game.NewEndpoints(o.Game, clock)
	if err != nil {
		return nil, err
	}
	c := &arenaClients{opts: o, clock: clock, game: g}
	web := &http.Client{Timeout: 10 * time.Second}
	for range o.Game.Clients {
		b, err := c.dial(ctx, web)
		if err != nil {
			c.leave("setup failed")
			return nil, err
		}
		c.bots = append(c.bots, b)
	}
	return c, nil
}

func (c *arenaClients) dial(ctx context.Context, web *http.Client) (*bot, error) {
	var token []byte
	var err error
	if c.opts.TokenURL != "" {
		token, err = fetchToken(ctx, web, c.opts.TokenURL, c.opts.TokenSecret, cmp.Or(c.opts.Room, roomName(1)), fmt.Sprintf("bot-%d-%d", c.opts.Game.Seed, len(c.bots)), c.opts.Server)
	} else {
		var id uint64
		if id, err = randomClientID(); err == nil {
			token, err = makeToken(c.opts.Key, c.opts.Server, cmp.Or(c.opts.Room, roomName(1)), id, cmp.Or(c.opts.TokenTimeout, tokenTimeout))
		}
	}
	if err != nil {
		return nil, err
	}
	conn, err := udp.Dial(token, udp.ClientOptions{Polled: true, Logger: c.opts.Logger})
	if err != nil {
		return nil, err
	}
	i, opts := c.game.AddPlayer()
	opts.Logger = c.opts.Logger
	b := &bot{index: i, conn: conn}
	if b.client, err = systems.NewClient(c.clock, conn, c.game.Game(), opts); err == nil {
		err = c.game.SetupClient(i, b.client)
	}
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	return b, nil
}

// update updates every bot that is still connected or connecting, and
// runs its frame stages when frame is set. It reports whether every bot's
// connection has ended.
func (c *arenaClients) update(frame bool) (allEnded bool) {
	allEnded = true
	connected := 0
	for _, b := range c.bots {
		if b.end != "" {
			continue
		}
		b.client.Update()
		if frame {
			b.client.Frame()
		}
		b.observe()
		if b.end == "" {
			allEnded = false
		}
		if b.connected {
			connected++
		}
	}
	if connected == len(c.bots) {
		c.connectedAll = true
	}
	return allEnded
}

// observe follows the bot's connection: connected, and when it ended and
// why. A goodbye from the server is a clean end; a refusal or a timeout is
// not.
func (b *bot) observe() {
	if b.client.Connected() && b.conn.State() == udp.StateConnected {
		b.connected = true
	}
	if !b.connected && b.conn.State() == udp.StateTimedOut {
		// Checked first: the endpoint above sees only that its
		// connection ended.
		b.noAnswer = true
		b.finish("never connected: "+b.conn.Err().Error(), false)
		return
	}
	st := b.client.Stats()
	if st.Mispredictions != b.mispredictions {
		b.mispredictions, b.missedAt = st.Mispredictions, st.SnapshotsReceived
	}
	var ce *systems.ConnError
	switch err := b.client.Err(); {
	case errors.As(err, &ce) && !ce.Refused && !ce.Local && ce.Reason == netsync.RejectClosed:
		b.finish("the server closed: "+err.Error(), true)
	case err != nil:
		b.finish(err.Error(), false)
	}
	if b.end != "" {
		return
	}
	switch s, err := b.conn.State(), b.conn.Err(); {
	case s == udp.StateConnecting || s == udp.StateConnected:
	case errors.Is(err, udp.ErrPeerDisconnected):
		b.finish("the server closed: netcode disconnect", true)
	default:
		b.finish(fmt.Sprintf("netcode: %v (%v)", s, err), false)
	}
}

// finish records the end of the bot's connection and closes its socket.
func (b *bot) finish(end string, clean bool) {
	if b.end != "" {
		return
	}
	b.end, b.clean = end, clean
	_ = b.conn.Close()
}

// leave says goodbye on every connection still up (the endpoint's
// disconnect message, then netcode's disconnect packets as the socket
// closes).
func (c *arenaClients) leave(why string) {
	for _, b := range c.bots {
		if b.end != "" {
			continue
		}
		if !b.connected {
			b.finish("never connected ("+why+"; netcode: "+b.conn.State().String()+")", false)
			continue
		}
		b.client.Close() // the server hears the goodbye at once
		b.finish("left: "+why, true)
	}
}

// playedOut reports whether the match is over: the bots played Duration
// and stood still for Settle, and then until every connected bot's
// prediction has matched convergedSnapshots snapshots in a row, or for
// game.MaxExtraSettle more. As in the headless match, what was in flight
// when the bots stopped (a respawn due after a late kill, a rocket) lands
// before convergence is judged.
func (c *arenaClients) playedOut() bool {
	now, end := c.clock.Now(), c.opts.Game.Duration+c.opts.Game.Settle()
	if now < end {
		return false
	}
	if now >= end+game.MaxExtraSettle {
		return true
	}
	for _, b := range c.bots {
		if b.end == "" && b.connected && !b.settled() {
			return false
		}
	}
	return true
}

// settled reports whether the bot's prediction has matched the server's
// last convergedSnapshots snapshots.
func (b *bot) settled() bool {
	return b.client.Stats().SnapshotsReceived-b.missedAt >= convergedSnapshots
}

// run plays until the match is over, every connection ended or ctx ends,
// printing a line per second to out (nil: none); then it leaves and
// returns the report.
func (c *arenaClients) run(ctx context.Context, out io.Writer) *clientsReport {
	cfg := c.opts.Game
	step := time.NewTicker(time.Second / time.Duration(4*cfg.TickRate))
	defer step.Stop()
	frameEvery := time.Second / 60
	nextFrame, nextLine := time.Duration(0), time.Second
	announced := false
	for {
		select {
		case <-ctx.Done():
			return c.finishRun("interrupted")
		case <-step.C:
		}
		now := c.clock.Now()
		frame := now >= nextFrame
		if frame {
			nextFrame = max(nextFrame+frameEvery, now)
		}
		allEnded := c.update(frame)
		if c.connectedAll && !announced && out != nil {
			fmt.Fprintf(out, "arena: %d/%d clients connected\n", len(c.bots), len(c.bots))
		}
		announced = announced || c.connectedAll
		if out != nil && now >= nextLine {
			c.second(nextLine).Print(out)
			nextLine += time.Second
		}
		if allEnded {
			return c.finishRun("")
		}
		if c.playedOut() {
			return c.finishRun("the match is over")
		}
	}
}

// finishRun measures, leaves (when why is not "") and reports.
func (c *arenaClients) finishRun(why string) *clientsReport {
	r := c.report()
	if why != "" {
		c.leave(why)
	}
	for i, b := range c.bots {
		r.Clients[i].End, r.Clients[i].Clean = b.end, b.clean
		r.Clean = r.Clean && b.clean
	}
	return r
}

// second is the per-second progress line.
func (c *arenaClients) second(at time.Duration) game.Second {
	s := game.Second{At: at}
	var rtt time.Duration
	n := 0
	for _, b := range c.bots {
		st := b.client.Stats()
		s.Mispredictions += st.Mispredictions
		s.Rollbacks += st.Rollbacks
		s.Replayed += st.ReplayedTicks
		s.ConfirmedHits += st.ConfirmedHits
		if b.end != "" || !b.connected {
			continue
		}
		n++
		s.ServerTick = max(s.ServerTick, st.NewestSnapshot)
		rtt += st.RTT
		s.Ahead += st.Ahead
	}
	if n > 0 {
		s.Connected, s.RTT, s.Ahead = n, rtt/time.Duration(n), s.Ahead/float64(n)
	}
	return s
}

// report reads every bot's counters now, before any leaves.
func (c *arenaClients) report() *clientsReport {
	elapsed := c.clock.Now()
	r := &clientsReport{Config: c.game.ReportConfig(), Clients: []clientReport{}, Converged: true, Clean: true}
	stood := c.clock.Now() >= c.opts.Game.Duration
	for _, b := range c.bots {
		cr := clientReport{ClientReport: c.game.ClientReport(b.index, b.client, elapsed), Connected: b.connected}
		cr.FinalError = -1
		cr.Converged = stood && b.end == "" && b.connected && b.settled()
		r.Converged = r.Converged && cr.Converged
		r.Clients = append(r.Clients, cr)
	}
	r.Wall = game.WallReport{Seconds: elapsed.Seconds(), SimSecondsPerSecond: 1}
	return r
}
