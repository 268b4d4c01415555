//go:build js && wasm

// Command client is the arena's page client: the play package's Player
// (the bots' client code) compiled to WebAssembly, connected over the
// browser's WebSocket. It installs globalThis.ghostwire for the page:
//
//	start(session, interpDelayMs)  connect (again), 0 ms = adaptive delay
//	controls(moveX, moveY, aimX, aimY)  what the person holds and points at
//	fire()                          pull the trigger
//	rocket()                        fire a rocket
//	say(text)                       send a line of chat: "" when sent, else why not
//	view()                          the View to draw, as JSON
package main

import (
	"context"
	"encoding/json"
	"sync"
	"syscall/js"
	"time"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/examples/arena/web/play"
	"github.com/ghostwire/ghostwire/transport/websocket"
)

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
}

func main() {
	p := &page{clock: gw.NewRealTime()}
	api := js.Global().Get("Object").New()
	api.Set("start", js.FuncOf(func(_ js.Value, args []js.Value) any {
		p.start(args[0].String(), time.Duration(args[1].Float()*float64(time.Millisecond)))
		return nil
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
func (p *page) start(session string, delay time.Duration) {
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
	p.mu.Unlock()
	loc := js.Global().Get("location")
	scheme := "ws://"
	if loc.Get("protocol").String() == "https:" {
		scheme = "wss://"
	}
	url := scheme + loc.Get("host").String() + "/ws?session=" + session
	go p.run(ctx, url, delay)
}

// run dials, then steps the player every frame until ctx ends.
func (p *page) run(ctx context.Context, url string, delay time.Duration) {
	dialCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	conn, err := websocket.Dial(dialCtx, url, websocket.Options{})
	cancel()
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
	p.player, p.err = pl, ""
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
