package netsync_test

import (
	"math"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/bitstream"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/netsync"
)

// everyField codes one field with each Stream method.
type everyField struct {
	F   float32
	A   float32
	R   float32
	B   bool
	P   components.Press
	T   gw.Tick
	I8  int8
	U32 uint32
}

var (
	fieldQ     = netsync.Range(-10, 10, 1.0/64)
	fieldAngle = netsync.Angle(12)
)

func (v *everyField) Serialize(s *netsync.Stream) {
	s.Float(&v.F, fieldQ)
	s.Angle(&v.A, fieldAngle)
	s.Float32(&v.R)
	s.Bool(&v.B)
	s.Press(&v.P)
	s.Tick(&v.T)
	netsync.Int(s, &v.I8, -100, 100)
	netsync.Int(s, &v.U32, 0, math.MaxUint32)
}

// The public declarations reach the internal codec unchanged: a value
// coded through netsync's Stream decodes to its quantized self, and
// quantizing in place gives the same bits.
func TestStreamMethodsCodeEveryField(t *testing.T) {
	var b netsync.SchemaBuilder
	id := netsync.Component[everyField](&b)
	ns, err := b.Build()
	require.NoError(t, err)
	s := (*codec.Schema)(ns)
	in := everyField{F: 1.2345, A: 4, R: 0.1, B: true, P: 7, T: math.MaxUint32 - 1, I8: -120, U32: 123456789}
	var st codec.Stream
	var w bitstream.Writer
	s.Encode(&st, codec.ComponentID(id), &w, unsafe.Pointer(&in))
	var r bitstream.Reader
	r.Reset(w.Bytes())
	var out everyField
	require.NoError(t, s.Decode(&st, codec.ComponentID(id), &r, unsafe.Pointer(&out)))

	want := in
	var c codec.Coder
	c.Quantize(s, codec.ComponentID(id), unsafe.Pointer(&want))
	assert.Equal(t, want, out)
	assert.Equal(t, everyField{F: fieldQ.Quantize(1.2345), A: fieldAngle.Quantize(4), R: 0.1, B: true, P: 1, T: math.MaxUint32 - 1, I8: -100, U32: 123456789}, out)
}

// A decoding error is the stream's sticky Err, which a Serialize method
// may read.
func TestStreamErr(t *testing.T) {
	var b netsync.SchemaBuilder
	id := netsync.Component[errProbe](&b)
	ns, err := b.Build()
	require.NoError(t, err)
	var st codec.Stream
	var r bitstream.Reader
	r.Reset(nil)
	var v errProbe
	probeSeen = nil
	err = (*codec.Schema)(ns).Decode(&st, codec.ComponentID(id), &r, unsafe.Pointer(&v))
	require.ErrorIs(t, err, bitstream.ErrShortBuffer)
	assert.ErrorIs(t, probeSeen, bitstream.ErrShortBuffer, "Err returned the error to the description")
}

// errProbe's description keeps what Err returned in probeSeen: a
// component holds plain data only.
type errProbe struct{ B bool }

var probeSeen error

func (p *errProbe) Serialize(s *netsync.Stream) {
	s.Bool(&p.B)
	probeSeen = s.Err()
}

// The enums print their names.
func TestEnumStrings(t *testing.T) {
	assert.Equal(t, "owner", netsync.PredictOwner.String())
	assert.Equal(t, "all", netsync.PredictAll.String())
	assert.Equal(t, "none", netsync.PredictNone.String())
	assert.Equal(t, "repeat-last", netsync.MissingRepeatLast.String())
	assert.Equal(t, "neutral", netsync.MissingNeutral.String())
	assert.Equal(t, "schema mismatch", netsync.RejectSchema.String())
	assert.Equal(t, "RejectReason(9)", netsync.RejectReason(9).String())
}
