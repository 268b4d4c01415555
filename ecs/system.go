package ecs

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
)

// System is one step of the simulation. It reads and writes the arche world
// through [World.Arche] and asks for structural changes through
// [World.Commands] while its queries are open.
//
// A system that also has a method Name() string is called by that name in
// diagnostics; others by their type, a [SystemFunc] by its function's name.
type System interface {
	Update(w *World)
}

// SystemFunc adapts a function to [System].
type SystemFunc func(w *World)

// Update calls f(w).
func (f SystemFunc) Update(w *World) { f(w) }

// group is an ordered list of systems, one per stage of a [Schedule]; it
// is itself a System, so groups nest. Systems added as side effects (sound, particles, one-shot events,
// spawning, sending) are skipped while the world is replaying. After each
// system the group applies the world's queued commands.
type group struct {
	name    string
	entries []groupEntry
}

type groupEntry struct {
	sys        System
	sideEffect bool
}

// newGroup returns an empty group with a name used in diagnostics.
func newGroup(name string) *group { return &group{name: name} }

// add appends a system: one that runs every time the group runs, replay
// included, or a side effect, run only the first time a tick is simulated,
// never during replay. It panics on a nil system.
func (g *group) add(s System, sideEffect bool) {
	if s == nil {
		panic(fmt.Sprintf("ecs: nil system added to group %q", g.name))
	}
	g.entries = append(g.entries, groupEntry{sys: s, sideEffect: sideEffect})
}

// Update runs the group's systems in order, skipping side effects while
// replaying, and applies queued commands after each system.
//
// A structural change made while a query holds the arche world locked
// panics in arche with only "attempt to modify a locked world"; Update
// panics instead with an error naming the system, its groups (and stage,
// under a [Schedule]) and the cure, [World.Commands]. A system that returns
// with a query still open (left with break, never closed) would leave the
// world locked for everything after it: Update panics then too, naming the
// system. Other panics pass through unchanged.
func (g *group) Update(w *World) {
	for i := range g.entries {
		e := &g.entries[i]
		if e.sideEffect && w.replaying {
			continue
		}
		wasLocked := w.arche.IsLocked()
		g.run(w, e.sys)
		if !wasLocked && w.arche.IsLocked() {
			panic(&lockedWorldPanic{system: systemName(e.sys), groups: []string{g.name}, openQuery: true})
		}
		if w.commands.queued() > 0 {
			w.commands.apply()
		}
	}
}

// run updates one system, naming it in a locked-world panic.
func (g *group) run(w *World, s System) {
	defer func() {
		if r := recover(); r != nil {
			panic(lockedWorld(r, s, g.name))
		}
	}()
	s.Update(w)
}

// lockedWorldPanic is what a system's structural change inside a query
// panics with: arche's message, with the system, its groups and stage.
type lockedWorldPanic struct {
	system string
	groups []string // innermost first
	stage  string   // empty when the group ran outside a Schedule
	cause  string   // arche's message
	// openQuery is set when the system returned with a query open
	// instead.
	openQuery bool
}

// Error names the system, where it ran and what to do instead.
func (p *lockedWorldPanic) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "ecs: system %q", p.system)
	for _, g := range p.groups {
		fmt.Fprintf(&b, " in group %q", g)
	}
	if p.stage != "" {
		fmt.Fprintf(&b, " in stage %q", p.stage)
	}
	if p.openQuery {
		b.WriteString(" returned with a query still open, which keeps the world locked: " +
			"iterate every query to the end or Close it (after a break too)")
		return b.String()
	}
	if strings.Contains(p.cause, "register") {
		fmt.Fprintf(&b, " met a component type new to the world while a query held it locked (arche: %s): "+
			"register component types before running, for example with ecs.ComponentID when the system is built; "+
			"structural changes go through World.Commands()", p.cause)
		return b.String()
	}
	fmt.Fprintf(&b, " changed the world's structure while a query held it locked (arche: %s): "+
		"queue structural changes with World.Commands(), applied after the system returns", p.cause)
	return b.String()
}

// lockedWorld turns arche's locked-world panic r, raised while s ran in
// group, into a *lockedWorldPanic, or adds the group to one raised in a
// nested group. Any other value is returned unchanged.
func lockedWorld(r any, s System, group string) any {
	switch v := r.(type) {
	case *lockedWorldPanic:
		v.groups = append(v.groups, group)
		return v
	case string:
		if strings.HasPrefix(v, "attempt to modify a locked world") ||
			strings.HasPrefix(v, "attempt to register a new component in a locked world") {
			return &lockedWorldPanic{system: systemName(s), groups: []string{group}, cause: v}
		}
	}
	return r
}

// systemName is s's Name(), its function's name for a SystemFunc, or its
// type.
func systemName(s System) string {
	if n, ok := s.(interface{ Name() string }); ok {
		return n.Name()
	}
	if f, ok := s.(SystemFunc); ok {
		if fn := runtime.FuncForPC(reflect.ValueOf(f).Pointer()); fn != nil {
			return fn.Name()
		}
	}
	return fmt.Sprintf("%T", s)
}
