package fleet

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/ghostwire/ghostwire/systems/agones"
)

// AgonesAddress waits for the public address of the game server's port
// named port (the first when empty) as the sidecar tells it, until ctx
// ends: the address clients reach, for udp.Options.PublicAddress of a
// listener bound to the pod's port (":7777", which names no address
// tokens could). Agones assigns it when it schedules the pod, before the
// game server starts, so the first answer normally has it; the sidecar
// may start after the game server, which the SDK's watch waits out.
// Run keeps following it afterwards.
func AgonesAddress(ctx context.Context, sdk *agones.SDK, port string) (netip.AddrPort, error) {
	ctx, found := context.WithCancel(ctx)
	defer found()
	var addr netip.AddrPort
	state := ""
	_ = sdk.Watch(ctx, func(gs agones.GameServer) {
		state = gs.Status.State
		if a, ok := gs.PublicAddress(port); ok {
			addr = a
			found()
		}
	})
	if addr.IsValid() {
		return addr, nil
	}
	if state == "" {
		return addr, fmt.Errorf("fleet: no answer from the Agones sidecar for the game server's address: %w", context.Cause(ctx))
	}
	return addr, fmt.Errorf("fleet: the game server (%s) has no public address for port %q: %w", state, port, context.Cause(ctx))
}
