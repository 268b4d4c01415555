package pub

// T is counted, with its exported method and not its unexported one.
type T[X any] struct{}

func (*T[X]) M() {}
func (T[X]) m()  {}
func F()         {}
func f()         {}

const A, b = 1, 2

var V int

type u struct{}

func (u) N() {}
