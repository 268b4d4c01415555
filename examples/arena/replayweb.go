package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/ghostwire/ghostwire/examples/arena/web/replayview"
)

// serveReplay replays the recording in file once (every state hash
// checked), then serves the replay page at addr until ctx ends.
func serveReplay(ctx context.Context, file, addr string, stdout io.Writer) error {
	f, err := openRecording(file)
	if err != nil {
		return err
	}
	v, err := replayview.Load(f)
	if err != nil {
		return fmt.Errorf("-replay %s: %w", file, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	info := v.Info()
	fmt.Fprintf(stdout, "replay of %s: %d ticks, %d kills, %d shots kept, %d state hashes equal; open http://%s/\n",
		file, info.Last-info.First+1, len(info.Kills), len(info.Shots), info.Hashes, ln.Addr())
	srv := &http.Server{Handler: replayview.NewPage(v).Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
