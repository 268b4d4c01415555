package ecs

import "fmt"

// System is one step of the simulation. It reads and writes the arche world
// through [World.Arche] and asks for structural changes through
// [World.Commands] while its queries are open.
type System interface {
	Update(w *World)
}

// SystemFunc adapts a function to [System].
type SystemFunc func(w *World)

// Update calls f(w).
func (f SystemFunc) Update(w *World) { f(w) }

// Group is an ordered list of systems; it is itself a System, so groups
// nest. Systems added as side effects (sound, particles, one-shot events,
// spawning, sending) are skipped while the world is replaying. After each
// system the group applies the world's queued commands.
type Group struct {
	name    string
	entries []groupEntry
}

type groupEntry struct {
	sys        System
	sideEffect bool
}

// NewGroup returns an empty group with a name used in diagnostics.
func NewGroup(name string) *Group { return &Group{name: name} }

// Name returns the group's name.
func (g *Group) Name() string { return g.name }

// Add appends a system that runs every time the group runs, replay
// included. It panics on a nil system.
func (g *Group) Add(s System) *Group {
	g.add(s, false)
	return g
}

// AddSideEffect appends a system that runs only the first time a tick is
// simulated, never during replay. It panics on a nil system.
func (g *Group) AddSideEffect(s System) *Group {
	g.add(s, true)
	return g
}

func (g *Group) add(s System, sideEffect bool) {
	if s == nil {
		panic(fmt.Sprintf("ecs: nil system added to group %q", g.name))
	}
	g.entries = append(g.entries, groupEntry{sys: s, sideEffect: sideEffect})
}

// Len returns the number of systems in the group.
func (g *Group) Len() int { return len(g.entries) }

// Update runs the group's systems in order, skipping side effects while
// replaying, and applies queued commands after each system.
func (g *Group) Update(w *World) {
	for i := range g.entries {
		e := &g.entries[i]
		if e.sideEffect && w.replaying {
			continue
		}
		e.sys.Update(w)
		if w.commands.Len() > 0 {
			w.commands.Apply()
		}
	}
}
