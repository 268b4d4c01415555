package codec_test

import (
	"fmt"

	"github.com/ghostwire/ghostwire/internal/codec"
)

func ExampleQuantizer() {
	// Positions in a 1 km arena, to the centimetre. Range never fails; a
	// bad configuration is in Err (and refused when a schema is built).
	q := codec.Range(-500, 500, 0.01)
	if err := q.Err(); err != nil {
		panic(err)
	}
	fmt.Println(q.Bits(), "bits")

	x := float32(12.3456)
	// The server stores the quantized value, so its state matches what
	// clients decode bit for bit.
	x = q.Quantize(x)
	fmt.Println(x, q.Quantize(x) == x)

	got, err := q.Decode(q.Encode(x)) // what crosses the wire is the code
	fmt.Println(got, err, got == x)
	// Output:
	// 17 bits
	// 12.349989 true
	// 12.349989 <nil> true
}

func ExampleQuantizer_Encode() {
	q := codec.Range(0, 10, 1)
	fmt.Println(q.Encode(3.4), q.Encode(3.5), q.Encode(-2), q.Encode(99))
	// Output: 3 4 0 10
}

func ExampleAngleQuantizer() {
	// Yaw in 16 bits: about 0.0055° per step.
	q := codec.Angle(16)
	if err := q.Err(); err != nil {
		panic(err)
	}
	const pi = 3.14159265
	// π and -π are the same direction, and so are 0 and 2π.
	fmt.Println(q.Encode(pi) == q.Encode(-pi), q.Encode(0) == q.Encode(2*pi))
	fmt.Println(q.Quantize(pi/2), q.Quantize(5*pi/2))
	// Output:
	// true true
	// 1.5707964 1.5707964
}
