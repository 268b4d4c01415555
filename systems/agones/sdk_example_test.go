package agones_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/ghostwire/ghostwire/systems/agones"
	"github.com/ghostwire/ghostwire/systems/agones/agonestest"
)

// A dedicated server's life on Agones, against the fake sidecar: Ready
// once listening, the rooms counter kept equal to the rooms, the public
// address for connect tokens, Shutdown at the end.
func ExampleSDK() {
	sidecar := agonestest.New(nil, "203.0.113.10", 7654, map[string]int64{"rooms": 16})
	srv := httptest.NewServer(sidecar)
	defer srv.Close()

	ctx := context.Background()
	sdk, err := agones.New(agones.Options{BaseURL: srv.URL}) // in a pod: agones.Options{}
	if err != nil {
		panic(err)
	}
	if err := sdk.Ready(ctx); err != nil {
		panic(err)
	}
	rooms, _ := sdk.AddCount(ctx, "rooms", 1) // a room opened
	gs, _ := sdk.Get(ctx)
	public, _ := gs.PublicAddress("default")
	fmt.Println(gs.Status.State, "rooms", rooms.Count, "of", rooms.Capacity, "tokens name", public)
	_ = sdk.Shutdown(ctx)
	fmt.Println(sidecar.GameServer().Status.State)
	// Output:
	// Ready rooms 1 of 16 tokens name 203.0.113.10:7654
	// Shutdown
}
