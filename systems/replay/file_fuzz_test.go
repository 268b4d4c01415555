package replay

import (
	"bytes"
	"testing"
	"time"

	gw "github.com/ghostwire/ghostwire/ecs"
)

// FuzzOpen feeds Open and a Player arbitrary files: nothing in a file may
// panic, and reading one allocates within the format's bounds.
func FuzzOpen(f *testing.F) {
	r := record(f, 2, time.Second, RecorderOptions{KeyframeEvery: 20})
	f.Add(r.file)
	f.Add(r.file[:len(r.file)/2])
	f.Add([]byte("GWRP\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Open(bytes.NewReader(data))
		if err != nil {
			return
		}
		file.Ticks()
		file.KeyframeAt(gw.Tick(file.Header.StartTick + 30))
		p, err := NewPlayer(file, build)
		if err != nil {
			return
		}
		_ = p.Run()
		_ = p.Seek(p.Last() / 2)
	})
}

// FuzzTicks feeds a Player arbitrary chunk payloads past the checksum,
// which Open's fuzzing rarely gets through: the records of connections,
// messages, inputs and hashes may not panic either.
func FuzzTicks(f *testing.F) {
	r := record(f, 2, time.Second, RecorderOptions{})
	whole, err := Open(bytes.NewReader(r.file))
	if err != nil {
		f.Fatal(err)
	}
	for _, c := range whole.ticks {
		f.Add(c.body)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		file := &File{Header: whole.Header, ticks: []ticksChunk{{first: gw.Tick(whole.Header.StartTick + 1), body: body}}}
		file.Ticks()
		p, err := NewPlayer(file, build)
		if err != nil {
			t.Fatal(err)
		}
		_ = p.Run()
	})
}
