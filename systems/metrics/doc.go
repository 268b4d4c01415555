// Package metrics exports a ghostwire process's state to Prometheus, and
// serves the operator's endpoints: /metrics in the Prometheus text
// format, /healthz and /readyz, and pprof only when asked for and only on
// a loopback address.
//
// It is a package of its own so that the framework does not depend on
// github.com/prometheus/client_golang: a game that does not export
// metrics does not link it. The collector reads what the rooms and the
// token service publish for concurrent readers (rooms.Manager.Rooms,
// tokens.Service.Stats) at scrape time; it never touches a running world.
package metrics
