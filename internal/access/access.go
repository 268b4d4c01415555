// Package access carries what ghostwire's public packages keep unexported
// to the framework's own packages, the way google.golang.org/protobuf
// reaches its internals: a public package stores its functions here in its
// init, and a typed internal package asserts each one to its exact type
// once (internal/ecsx for package ecs, internal/lagcompx for package
// lagcomp). Nothing else reads these variables.
//
// The variables are typed any because this package sits below the public
// ones and cannot name their types; the typed packages are where a wrong
// type shows, at their initialization, so a mismatch fails every test at
// once instead of one call site.
package access

import (
	"unsafe"

	"github.com/mlange-42/arche/ecs"
)

// Set by package ecs; read by internal/ecsx, which documents each.
var (
	ECSNewHistory    any
	ECSRegisterType  any
	ECSRecord        any
	ECSNewest        any
	ECSHas           any
	ECSCapacity      any
	ECSLookup        any
	ECSView          any
	ECSHistoryOf     any
	ECSWorldOf       any
	ECSSetTick       any
	ECSMarkServer    any
	ECSLayoutVersion any
	ECSScheduleStats any
	ECSSyncChecks    any
	ECSDesync        any
	ECSStages        any
)

// Set by package lagcomp; read by internal/lagcompx.
var (
	LagcompProbe    any
	LagcompPresent  any
	LagcompHistory  any
	LagcompReasons  any
	LagcompTickRate any
)

// Set by package systems; read by package lagcomp: queue a verdict for
// the shooter's client.
var ServerConfirm any

// TickView reads one recorded tick of an ecs history without copying:
// entities by row, values by row and component. It is valid until that
// tick's ring slot is recorded again. Lag compensation rewinds through it.
type TickView interface {
	// Len returns the number of entities recorded at the tick.
	Len() int
	// Entity returns the entity of row i.
	Entity(i int) ecs.Entity
	// Row returns the row of entity e, and false if e was not recorded.
	// The first call on a tick builds an index (O(entities)); later calls
	// are one map lookup.
	Row(e ecs.Entity) (int, bool)
	// Component returns the history's index of component id, or -1 if it
	// is not recorded; pass it to Value.
	Component(id ecs.ID) int
	// Value returns a pointer to the recorded value of component c (from
	// Component) of row i, or nil if that entity did not have it.
	Value(i, c int) unsafe.Pointer
}
