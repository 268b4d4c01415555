// Package agones runs a ghostwire server as an Agones game server: it
// talks to the Agones sidecar (the SDK server beside every game server
// pod) over the sidecar's REST gateway with net/http, as every Agones SDK
// does, since the Go SDK module is not a dependency here.
//
// The calls a dedicated server makes, in order: [SDK.Ready] once it
// listens; [SDK.KeepHealthy] for its whole life (a ping every half health
// period); [SDK.Watch] to learn its allocation and its public address and
// port (connect tokens must name the address clients reach, not the bind
// address); a counter ([SDK.SetCount], [SDK.SetCapacity]) kept equal to
// its rooms so the fleet can allocate by free capacity; labels and
// annotations; [SDK.Shutdown] once at the end.
//
// Every call retries while the sidecar is unreachable (it starts beside
// the game server and may come up later), up to Options.RetryFor; an
// error the sidecar answers with is returned at once as an [*Error].
// JSON is as the gateway speaks it: proto field names, int64 values as
// strings.
//
// Package agonestest has a fake sidecar that enforces the in-cluster
// contract, for tests of a game's integration without Kubernetes.
package agones
