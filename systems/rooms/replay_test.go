package rooms_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/internal/testgame"
	"github.com/ghostwire/ghostwire/systems"
	"github.com/ghostwire/ghostwire/systems/replay"
	"github.com/ghostwire/ghostwire/systems/rooms"
)

// A room records its match through its server options (NewRoom) and
// closes the recording when it ends (OnEnd); the file replays with no
// network, every state hash equal.
func TestRoomRecordsItsMatch(t *testing.T) {
	files := make(chan []byte, 1)
	var buf bytes.Buffer
	var rec *replay.Recorder
	f := newFleet(t, func(o *rooms.Options) {
		newRoom := o.NewRoom
		o.NewRoom = func(name string) (*systems.Game, systems.ServerOptions, error) {
			g, so, err := newRoom(name)
			if err != nil {
				return nil, so, err
			}
			rec, err = replay.NewRecorder(&buf, g, replay.RecorderOptions{Config: []byte(name)})
			so.Recorder = rec
			return g, so, err
		}
		o.OnEnd = func(rooms.RoomStats, *systems.Server) {
			require.NoError(t, rec.Close())
			files <- buf.Bytes()
		}
	})
	require.NoError(t, f.m.Open("r"))
	ps := []*player{f.join("r", 1, nil), f.join("r", 2, nil)}
	play(t, ps, func() bool { return cars(ps[0].c) == 2 && cars(ps[1].c) == 2 })
	ticks := f.m.Rooms()[0].Ticks
	play(t, ps, func() bool { return f.m.Rooms()[0].Ticks > ticks+60 })
	require.True(t, f.m.End("r"))
	file := <-files
	f.stop()
	for _, p := range ps {
		p.c.Close()
		_ = p.conn.Close()
	}

	rf, err := replay.Open(bytes.NewReader(file))
	require.NoError(t, err)
	require.Equal(t, []byte("r"), rf.Header.Config)
	p, err := replay.NewPlayer(rf, func(*replay.Header) (*replay.Setup, error) {
		s, err := testgame.NewSchema()
		if err != nil {
			return nil, err
		}
		return &replay.Setup{Game: s.Game()}, nil
	})
	require.NoError(t, err)
	require.NoError(t, p.Run())
	_, last := rf.Ticks()
	require.Equal(t, last, p.Tick())
	require.Greater(t, p.Checked(), uint64(60))
}
