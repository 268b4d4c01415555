// Package lagcomp is server-side lag compensation: shots are judged against
// what the shooter saw. A [Compensator] records the declared components
// ([Register]) of every entity with [components.Hitboxes] each tick for a
// bounded window; [Compensator.Judge] rewinds them to the shooter's
// fractional view tick, blended between the two neighbouring ticks exactly
// as clients interpolate, read-only ([Rewound], [Get]), runs the ray test
// on those poses against static geometry and returns a [Verdict].
//
// The rules (from the platform rulebook the project follows):
//   - the view tick is the client's claim: a rewind beyond the window is
//     refused, never extrapolated, and the verdict says so;
//   - history is read, never written into the live world;
//   - what is rewound is registered (Register), not everything;
//   - what the shooter could not see then is not readable now (Visible);
//   - the decision is made in the past, its consequences (damage) are the
//     game's to apply to the present state;
//   - a miss is a verdict with a reason, not an error.
package lagcomp
