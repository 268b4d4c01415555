package netsync

import (
	"reflect"
	"unsafe"
)

// Codec encodes one component type for the wire. The value is passed as a
// pointer to the component's memory (arche storage, a snapshot or a history
// record), so encoding needs no copy and no interface per value.
//
// A codec's round trip defines quantization: the value a client receives is
// Decode(Encode(v)), and the server applies exactly that to its own state at
// the end of each tick ([Quantize]) so a correct prediction is bit-identical
// to the server. A codec must therefore be deterministic, and decoding
// hostile bits must return an error, never panic.
type Codec interface {
	// Type is the component type.
	Type() reflect.Type
	// Encode writes the value at v.
	Encode(w *BitWriter, v unsafe.Pointer)
	// Decode reads a value into v; an error leaves v unspecified.
	Decode(r *BitReader, v unsafe.Pointer) error
}

// NewCodec returns a Codec for component type T from two functions.
// decode must check what it reads (ranges, NaN) and return errors naming
// the value; it must never panic on any input.
func NewCodec[T any](encode func(w *BitWriter, v *T), decode func(r *BitReader, v *T) error) Codec {
	return &typedCodec[T]{enc: encode, dec: decode}
}

type typedCodec[T any] struct {
	enc func(w *BitWriter, v *T)
	dec func(r *BitReader, v *T) error
}

func (c *typedCodec[T]) Type() reflect.Type { return reflect.TypeFor[T]() }

func (c *typedCodec[T]) Encode(w *BitWriter, v unsafe.Pointer) { c.enc(w, (*T)(v)) }

func (c *typedCodec[T]) Decode(r *BitReader, v unsafe.Pointer) error { return c.dec(r, (*T)(v)) }

// RoundTrip applies codecs' round trips in place. It owns scratch buffers,
// so one Quantizer per goroutine; steady state it allocates nothing.
type RoundTrip struct {
	w   BitWriter
	r   BitReader
	buf []byte
	a   []byte
}

// Quantize replaces the value at v by Decode(Encode(v)): what a peer would
// receive. A decode error (a codec that cannot read what it wrote) panics,
// since it is a bug in the codec, not bad input.
func (q *RoundTrip) Quantize(c Codec, v unsafe.Pointer) {
	q.w.Reset(q.buf[:0])
	c.Encode(&q.w, v)
	b := q.w.Bytes()
	q.buf = b[:0]
	q.r.Reset(b)
	if err := c.Decode(&q.r, v); err != nil {
		panic("netsync: codec for " + c.Type().String() + " cannot decode what it encoded: " + err.Error())
	}
}

// Equal reports whether a and b encode to the same bits: whether a peer
// would see the same value.
func (q *RoundTrip) Equal(c Codec, a, b unsafe.Pointer) bool {
	q.w.Reset(q.buf[:0])
	c.Encode(&q.w, a)
	n := q.w.BitLen()
	q.a = append(q.a[:0], q.w.Bytes()...)
	q.w.Reset(q.buf[:0])
	c.Encode(&q.w, b)
	if q.w.BitLen() != n {
		return false
	}
	eb := q.w.Bytes()
	q.buf = eb[:0]
	return string(q.a) == string(eb)
}
