// Package bitstream reads and writes values bit by bit: the layer every
// wire encoding of ghostwire is built on. Decoders never panic on hostile
// data; their errors wrap [ErrShortBuffer], [ErrMalformed] or
// [ErrOutOfRange], so callers can test them with errors.Is.
package bitstream
