//go:build js && wasm

// Command client is the arena's page client: the play package's Player
// (the bots' client code) compiled to WebAssembly, connected over the
// browser's WebTransport, or its WebSocket when WebTransport fails or is
// missing. It installs globalThis.ghostwire for the page:
//
//	start(session, interpDelayMs, transports)  connect (again), 0 ms = adaptive
//	                                delay; transports is the server's
//	                                /transport.json, its Mode possibly
//	                                overridden by the page's ?transport=
//	transport()                     what carries the connection, as JSON
//	                                Transport: {Name, Fallback}
//	controls(moveX, moveY, aimX, aimY)  what the person holds and points at
//	fire()                          pull the trigger
//	rocket()                        fire a rocket
//	say(text)                       send a line of chat: "" when sent, else why not
//	view()                          the View to draw, as JSON
package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"syscall/js"
	"time"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/examples/arena/web/play"
	"github.com/ghostwire/ghostwire/transport"
	"github.com/ghostwire/ghostwire/transport/websocket"
	"github.com/ghostwire/ghostwire/transport/webtransport"
)

// Transport says what carries the page's connection: Name is
// "webtransport" or "websocket" ("" while connecting), Fallback why
// WebTransport was not used when the page fell back to WebSocket.
type Transport struct {
	Name     string
	Fallback string `json:",omitempty"`
}

// transports is the server's /transport.json (web.Transports).
type transports struct {
	Mode, URL, CertHash string
}

// frame is the client loop's period: faster than the tick rate, so the
// client's clock decides when ticks run.
const frame = 8 * time.Millisecond

// page holds the current connection; start replaces it.
type page struct {
	mu       sync.Mutex
	clock    gw.TimeSource
	player   *play.Player
	cancel   context.CancelFunc
	controls play.Controls
	err      string
	via      Transport
	net      netStats
}

func main() {
	p := &page{clock: gw.NewRealTime()}
	api := js.Global().Get("Object").New()
	api.Set("start", js.FuncOf(func(_ js.Value, args []js.Value) any {
		var tr transports
		if len(args) > 2 {
			_ = json.Unmarshal([]byte(js.Global().Get("JSON").Call("stringify", args[2]).String()), &tr) // a bad one means WebSocket
		}
		p.start(args[0].String(), time.Duration(args[1].Float()*float64(time.Millisecond)), tr)
		return nil
	}))
	api.Set("netstats", js.FuncOf(func(_ js.Value, args []js.Value) any {
		p.mu.Lock()
		defer p.mu.Unlock()
		b, _ := json.Marshal(p.net.report(len(args) > 0 && args[0].Truthy())) // plain numbers
		return string(b)
	}))
	api.Set("transport", js.FuncOf(func(js.Value, []js.Value) any {
		p.mu.Lock()
		b, _ := json.Marshal(p.via) // plain strings
		p.mu.Unlock()
		return string(b)
	}))
	api.Set("controls", js.FuncOf(func(_ js.Value, args []js.Value) any {
		c := play.Controls{MoveX: float32(args[0].Float()), MoveY: float32(args[1].Float()),
			AimX: float32(args[2].Float()), AimY: float32(args[3].Float())}
		p.mu.Lock()
		p.controls = c
		if p.player != nil {
			p.player.SetControls(c)
		}
		p.mu.Unlock()
		return nil
	}))
	api.Set("fire", js.FuncOf(func(js.Value, []js.Value) any {
		p.mu.Lock()
		if p.player != nil {
			p.player.Fire()
		}
		p.mu.Unlock()
		return nil
	}))
	api.Set("rocket", js.FuncOf(func(js.Value, []js.Value) any {
		p.mu.Lock()
		if p.player != nil {
			p.player.Rocket()
		}
		p.mu.Unlock()
		return nil
	}))
	api.Set("say", js.FuncOf(func(_ js.Value, args []js.Value) any { return p.say(args[0].String()) }))
	api.Set("view", js.FuncOf(func(js.Value, []js.Value) any { return p.view() }))
	js.Global().Set("ghostwire", api)
	if ready := js.Global().Get("ghostwireReady"); ready.Type() == js.TypeFunction {
		ready.Invoke()
	}
	select {}
}

// start closes the current connection, if any, and connects anew with
// the interpolation delay given (0 adapts it).
func (p *page) start(session string, delay time.Duration, tr transports) {
	p.mu.Lock()
	if p.cancel != nil {
		// The connection being dialled, if any, is closed by its own
		// goroutine once it sees the cancel. A connected player leaves
		// at once, so the server drops it now, not after its timeout.
		p.cancel()
		if p.player != nil {
			p.player.Close()
		}
		p.player = nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	p.err = "connecting"
	p.via = Transport{}
	p.net = netStats{}
	p.mu.Unlock()
	loc := js.Global().Get("location")
	scheme := "ws://"
	if loc.Get("protocol").String() == "https:" {
		scheme = "wss://"
	}
	url := scheme + loc.Get("host").String() + "/ws?session=" + session
	go p.run(ctx, url, session, tr, delay)
}

// wtDialTimeout bounds the WebTransport handshake before the page falls
// back: a network that drops UDP answers nothing.
const wtDialTimeout = 3 * time.Second

// dial connects over WebTransport unless tr says otherwise, and over
// WebSocket when it may fall back.
func (p *page) dial(ctx context.Context, wsURL, session string, tr transports) (transport.Conn, Transport, error) {
	var why string
	switch {
	case tr.Mode == "websocket":
		why = "forced WebSocket"
	case tr.URL == "":
		why = "the server serves no WebTransport"
	default:
		opts := webtransport.DialOptions{}
		if h, err := hex.DecodeString(tr.CertHash); err == nil && len(h) == 32 {
			opts.CertificateHashes = [][32]byte{[32]byte(h)}
		}
		dialCtx, cancel := context.WithTimeout(ctx, wtDialTimeout)
		conn, err := webtransport.Dial(dialCtx, tr.URL+"?session="+session, opts)
		cancel()
		if err == nil {
			return conn, Transport{Name: "webtransport"}, nil
		}
		if tr.Mode == "webtransport" || ctx.Err() != nil {
			return nil, Transport{}, err
		}
		why = err.Error()
	}
	if tr.Mode == "webtransport" {
		return nil, Transport{}, errors.New(why)
	}
	dialCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := websocket.Dial(dialCtx, wsURL, websocket.Options{})
	if err != nil {
		return nil, Transport{}, fmt.Errorf("%w (WebTransport: %s)", err, why)
	}
	return conn, Transport{Name: "websocket", Fallback: why}, nil
}

// run dials, then steps the player every frame until ctx ends.
func (p *page) run(ctx context.Context, url, session string, tr transports, delay time.Duration) {
	conn, via, err := p.dial(ctx, url, session, tr)
	if err != nil {
		p.fail(ctx, err)
		return
	}
	pl, err := play.New(p.clock, conn, play.Options{InterpDelay: delay})
	if err != nil {
		conn.Close()
		p.fail(ctx, err)
		return
	}
	p.mu.Lock()
	if ctx.Err() != nil {
		p.mu.Unlock()
		pl.Close()
		return
	}
	p.player, p.err, p.via = pl, "", via
	pl.SetControls(p.controls)
	p.mu.Unlock()
	t := time.NewTicker(frame)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			pl.Step()
			st := pl.Client().Stats()
			p.mu.Lock()
			p.net.sample(time.Now(), st.SnapshotsReceived, st.Mispredictions, st.ExtrapolatedTicks)
			p.mu.Unlock()
		}
	}
}

// say sends a line of chat from the current player: "" when sent, else
// why not.
func (p *page) say(text string) string {
	p.mu.Lock()
	pl := p.player
	p.mu.Unlock()
	if pl == nil {
		return "not connected"
	}
	if err := pl.Say(text); err != nil {
		return err.Error()
	}
	return ""
}

func (p *page) fail(ctx context.Context, err error) {
	p.mu.Lock()
	if ctx.Err() == nil {
		p.err = err.Error()
	}
	p.mu.Unlock()
}

// view returns the current player's View as JSON, or a state without a
// player while connecting or after a failed dial.
func (p *page) view() string {
	p.mu.Lock()
	pl, msg := p.player, p.err
	p.mu.Unlock()
	v := play.View{State: "connecting", Err: msg, Others: []play.Body{}, Rockets: []play.Rocket{}, Explosions: []play.Explosion{},
		Kills: []play.Kill{}, Chat: []play.ChatLine{}, Timeline: play.Timeline{Errors: []float64{}}}
	if pl != nil {
		v = pl.View()
	}
	b, _ := json.Marshal(v) // View has only plain fields
	return string(b)
}
