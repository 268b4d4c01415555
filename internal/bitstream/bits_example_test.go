package bitstream_test

import (
	"errors"
	"fmt"

	"github.com/ghostwire/ghostwire/internal/bitstream"
)

func ExampleWriter() {
	// A message header: a 3-bit kind, a flag, a sequence number and a name.
	var w bitstream.Writer
	w.Reset(make([]byte, 0, 64))
	w.WriteBits(5, 3)
	w.WriteBool(true)
	w.WriteUvarint(1000)
	name := []byte("ghost")
	w.WriteUvarint(uint64(len(name)))
	w.WriteBytes(name)
	fmt.Printf("%d bits in %d bytes\n", w.BitLen(), len(w.Bytes()))

	var r bitstream.Reader
	r.Reset(w.Bytes())
	kind, _ := r.ReadBits(3)
	flag, _ := r.ReadBool()
	seq, _ := r.ReadUvarint()
	n, _ := r.ReadUvarint()
	got, _ := r.ReadBytes(int(n), nil)
	// Errors are sticky, so one check after the whole message is enough.
	if err := r.Err(); err != nil {
		fmt.Println("bad message:", err)
		return
	}
	fmt.Println(kind, flag, seq, string(got))
	// Output:
	// 68 bits in 9 bytes
	// 5 true 1000 ghost
}

func ExampleReader_hostileLength() {
	// A peer claims a 1 GiB string in a 3-byte packet.
	var w bitstream.Writer
	w.WriteUvarint(1 << 30)
	var r bitstream.Reader
	r.Reset(w.Bytes())
	n, _ := r.ReadUvarint()
	_, err := r.ReadBytes(int(n), nil)
	fmt.Println(err)
	fmt.Println(errors.Is(err, bitstream.ErrShortBuffer))
	// Output:
	// netsync: reading 1073741824 bytes at bit 40 of 40: only 0 bits remain: short buffer
	// true
}
