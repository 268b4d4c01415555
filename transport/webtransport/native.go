//go:build !js

package webtransport

import (
	"context"
	"errors"
	"sync"

	"github.com/quic-go/quic-go"
	wt "github.com/quic-go/webtransport-go"
)

// quicSession is a session over quic-go's WebTransport. Every session has a
// QUIC connection of its own, so ending the session ends the connection
// too (after, when set), freeing its memory at once rather than at its
// idle timeout.
type quicSession struct {
	s     *wt.Session
	after func()
	once  sync.Once
}

// send blocks while quic-go's datagram queue (32) is full.
func (q *quicSession) send(p []byte) error {
	err := q.s.SendDatagram(p)
	var tooLarge *quic.DatagramTooLargeError
	if errors.As(err, &tooLarge) {
		return errTooLarge
	}
	return err
}

func (q *quicSession) receive() ([]byte, error) { return q.s.ReceiveDatagram(context.Background()) }

func (q *quicSession) close() {
	q.once.Do(func() {
		_ = q.s.CloseWithError(0, "") // fails only when already closed
		if q.after != nil {
			q.after()
		}
	})
}
