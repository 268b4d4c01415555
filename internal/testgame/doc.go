// Package testgame is the framework's own end-to-end test game: cars on a
// wrapping plane, driven by an input unlike the arena's (steer, throttle,
// brake and a handbrake that is a press), with a replicated counter of
// handbrake pulls so a test can see that a press counts exactly once, a
// zero-size tag component declared last in the car's ghost type, and
// messages both ways (a client's Honk at each pull, the server's Honks to
// every client). The framework's tests use it so they do not depend on
// the arena example; it is internal because no game should import it.
package testgame
