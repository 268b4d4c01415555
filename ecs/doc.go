// Package ecs is ghostwire's layer on top of the arche ECS
// (github.com/mlange-42/arche v0.15.3): the pieces arche deliberately lacks
// and that netcode needs, and nothing about networks.
//
//   - [World] wraps one arche world with the current tick and whether the
//     world is replaying. Systems query the arche world directly through
//     [World.Arche].
//   - [System] and [Schedule] order systems into stages ([Stage]); the
//     three prediction stages are what rollback re-runs, and systems
//     registered there as side effects are skipped during replay.
//   - [Commands] defers structural changes asked for while a query runs and
//     applies them between systems.
//   - [Tick] numbers the fixed simulation steps and wraps safely; a
//     [TimeSource] ([NewRealTime], or [VirtualTime] in tests) drives the
//     endpoints' fixed clock.
//   - [History] ([EnableHistory], [Register]) records the registered
//     components of predicted entities per tick in a bounded ring;
//     [Schedule.Rollback] restores a tick and replays the prediction stages
//     up to the newest recorded tick.
//   - [SyncTest] is the determinism check: every tick it rolls back and
//     replays, and reports the tick, entity and component that differ, or
//     the unregistered component the prediction writes.
package ecs
