// Package pub is listed: exported names with their signatures.
package pub

import (
	_ "example.com/mod/internal/hidden"
	"example.com/mod/transport"
)

// T is listed with its exported field and method, not its unexported ones.
type T[X any] struct {
	Exported int
	hidden   int
}

func (*T[X]) M() {}
func (T[X]) m()  {}

// F is listed with its parameters.
func F(x int) (int, error) { return x, nil }

func G[E any](e E) E { return e }

func f() {}

const A, b = 1, 2

var V int

type u struct{}

func (u) N() {}

type I interface {
	Do(n int) error
	do()
}

var _ transport.Conn
