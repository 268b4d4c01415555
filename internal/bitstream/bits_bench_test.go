package bitstream_test

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ghostwire/ghostwire/internal/bitstream"
)

// BenchmarkBitPack13 writes then reads 1,000 13-bit values. ns/op and
// allocs/op cover the bit packing alone; the same values are also put and
// read with binary.LittleEndian.PutUint16/Uint16 as a baseline, reported as
// binary-ns/value and as the ratio x-binary (bit packing time over baseline
// time).
func BenchmarkBitPack13(b *testing.B) {
	const count, width = 1000, 13
	rng := rand.New(rand.NewPCG(13, 13))
	values := make([]uint16, count)
	var want uint64
	for i := range values {
		values[i] = uint16(rng.UintN(1 << width))
		want += uint64(values[i])
	}
	packed := make([]byte, 0, (count*width+7)/8)
	raw := make([]byte, 2*count)
	var w bitstream.Writer
	var r bitstream.Reader
	var bitSum, binSum uint64
	b.ReportAllocs()
	b.ResetTimer()

	start := time.Now()
	for range b.N {
		w.Reset(packed)
		for _, v := range values {
			w.WriteBits(uint64(v), width)
		}
		r.Reset(w.Bytes())
		for range count {
			v, err := r.ReadBits(width)
			if err != nil {
				b.Fatal(err)
			}
			bitSum += v
		}
	}
	bitTime := time.Since(start)
	b.StopTimer()

	start = time.Now()
	for range b.N {
		for i, v := range values {
			binary.LittleEndian.PutUint16(raw[2*i:], v)
		}
		for i := range count {
			binSum += uint64(binary.LittleEndian.Uint16(raw[2*i:]))
		}
	}
	binTime := time.Since(start)

	if bitSum != want*uint64(b.N) || binSum != want*uint64(b.N) {
		b.Fatalf("read back sums %d and %d, want %d", bitSum, binSum, want*uint64(b.N))
	}
	if len(w.Bytes()) != (count*width+7)/8 {
		b.Fatalf("packed %d bytes, want %d", len(w.Bytes()), (count*width+7)/8)
	}
	values64 := float64(b.N) * count
	b.ReportMetric(float64(bitTime.Nanoseconds())/values64, "ns/value")
	b.ReportMetric(float64(binTime.Nanoseconds())/values64, "binary-ns/value")
	b.ReportMetric(float64(bitTime)/float64(binTime), "x-binary")
}
