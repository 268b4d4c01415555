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

// BenchmarkCopyBits splices 4 KiB of bits from bit 3 of a stream to bit 5
// of another (a stretch of records copied into a snapshot), beside, in
// the same run on the same bytes, the naive splice (one WriteBits per
// byte: naive-ns/op, x-naive) and a plain byte copy, which cannot shift
// (copy-ns/op, x-copy).
func BenchmarkCopyBits(b *testing.B) {
	const size = 4096
	rng := rand.New(rand.NewPCG(5, 5))
	src := make([]byte, size+1)
	for i := range src {
		src[i] = byte(rng.Uint32())
	}
	dst := make([]byte, 0, size+16)
	raw := make([]byte, size)
	var w bitstream.Writer
	const off, lead, n = 3, 5, size * 8
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		w.Reset(dst)
		w.WriteBits(0, lead)
		w.CopyBits(src, off, n)
	}
	b.StopTimer()
	got := append([]byte(nil), w.Bytes()...)
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)

	start := time.Now()
	for range b.N {
		w.Reset(dst)
		w.WriteBits(0, lead)
		for i := 0; i < n; i += 8 {
			v := uint64(src[(off+i)>>3]) | uint64(src[(off+i)>>3+1])<<8
			w.WriteBits(v>>(off&7), 8)
		}
	}
	naive := float64(time.Since(start).Nanoseconds()) / float64(b.N)
	if string(w.Bytes()) != string(got) {
		b.Fatal("the naive splice wrote other bits")
	}
	start = time.Now()
	for range b.N {
		copy(raw, src)
	}
	plain := float64(time.Since(start).Nanoseconds()) / float64(b.N)
	b.ReportMetric(naive, "naive-ns/op")
	b.ReportMetric(plain, "copy-ns/op")
	b.ReportMetric(ns/naive, "x-naive")
	b.ReportMetric(ns/plain, "x-copy")
}

// BenchmarkCopyBitsShort splices 1,000 stretches of 224 bits (3.5 words,
// a snapshot's typical copy), each from its own bit offset after its own
// 0..63 pending bits, beside, in the same run on the same bits, the same
// writes with one WriteBits per 56 bits instead of CopyBits (chunk-ns/op,
// x-chunk). ns/64bits is CopyBits' time per 64 bits copied, the pending
// bits' writes included.
func BenchmarkCopyBitsShort(b *testing.B) {
	const count, n = 1000, 224
	rng := rand.New(rand.NewPCG(3, 5))
	src := make([]byte, 4096)
	for i := range src {
		src[i] = byte(rng.Uint32())
	}
	offs, leads := make([]int, count), make([]int, count)
	for i := range offs {
		offs[i] = rng.IntN(8*len(src) - n - 64) // the baseline loads 8 bytes past each chunk
		leads[i] = rng.IntN(64)
	}
	dst := make([]byte, 0, count*(n+64)/8+16)
	var w bitstream.Writer
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		w.Reset(dst)
		for i, off := range offs {
			w.WriteBits(uint64(i), leads[i])
			w.CopyBits(src, off, n)
		}
	}
	b.StopTimer()
	got := append([]byte(nil), w.Bytes()...)
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)

	start := time.Now()
	for range b.N {
		w.Reset(dst)
		for i, off := range offs {
			w.WriteBits(uint64(i), leads[i])
			for j := 0; j < n; j += 56 {
				p := off + j
				w.WriteBits(binary.LittleEndian.Uint64(src[p>>3:])>>(p&7), min(56, n-j))
			}
		}
	}
	chunk := float64(time.Since(start).Nanoseconds()) / float64(b.N)
	if string(w.Bytes()) != string(got) {
		b.Fatal("the chunked splice wrote other bits")
	}
	b.ReportMetric(ns/(count*n/64), "ns/64bits")
	b.ReportMetric(chunk, "chunk-ns/op")
	b.ReportMetric(ns/chunk, "x-chunk")
}
