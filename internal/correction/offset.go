// Package correction holds the presentation-only offset the client's
// smoother gives a predicted ghost after a correction. Games read the drawn
// position through systems.Smoother.Visual instead.
package correction

// Offset is the presentation-only offset of a predicted ghost after a
// correction: it is drawn at its position plus the offset. The offset
// starts at the visual jump the correction would have caused and decays to
// zero; logic never reads it.
type Offset struct{ X, Y, Z float32 }
