package systems_test

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/mlange-42/arche/ecs"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport"
)

// A client built with another schema than the server's is refused at
// connection, and its Err names the component that differs.
func ExampleClient_Err() {
	var sb netsync.SchemaBuilder // the server's game: Pos and Speed
	pos, speed := netsync.Component[Pos](&sb), netsync.Component[Speed](&sb)
	sb.GhostType("player", pos, speed)
	serverSchema, err := sb.Build()
	if err != nil {
		panic(err)
	}
	var cb netsync.SchemaBuilder // an outdated client: Pos and Extra
	pos, extra := netsync.Component[Pos](&cb), netsync.Component[Extra](&cb)
	cb.GhostType("player", pos, extra)
	clientSchema, err := cb.Build()
	if err != nil {
		panic(err)
	}

	h, err := harness.New(harness.Options{Game: &systems.Game{Schema: serverSchema,
		OnConnect: func(*gw.World, components.ConnID) (ecs.Entity, netsync.GhostTypeID, error) {
			return ecs.Entity{}, 0, errors.New("never called: the client is refused first")
		},
	}})
	if err != nil {
		panic(err)
	}
	conn, err := h.Net.Dial("server", transport.Conditions{})
	if err != nil {
		panic(err)
	}
	quiet := slog.New(slog.DiscardHandler) // the refusal is logged as a warning
	c, err := systems.NewClient(h.Time, conn, &systems.Game{Schema: clientSchema}, systems.ClientOptions{Logger: quiet})
	if err != nil {
		panic(err)
	}
	h.RunUntil(func() bool { c.Update(); return c.Err() != nil }, time.Second)
	var ce *systems.ConnError
	fmt.Println(errors.As(c.Err(), &ce) && ce.Refused, ce.Reason == netsync.RejectSchema)
	fmt.Println(c.Err())
	// Output:
	// true true
	// ghostwire: refused by the server: schema mismatch: component systems_test.Speed differs
}
