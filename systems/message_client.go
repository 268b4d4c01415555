package systems

import (
	"errors"
	"fmt"

	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/codec"
)

// ErrMessageRate is matched (errors.Is) by the error of a client's send
// beyond its message type's rate limit (netsync.MessageRules.PerSecond
// and Burst): nothing was sent. The server would refuse such a message.
var ErrMessageRate = errors.New("systems: message rate limit reached")

// ErrNotConnected is returned by a client's send before the server's
// welcome and after the connection ended: nothing was sent.
var ErrNotConnected = errors.New("systems: not connected")

// SendToServer sends m, a value of message type T (declared with
// netsync.Message), from the client whose world is w to the server, on
// T's channel, with tick: the tick the message refers to, which the
// server's handlers get in Envelope.Tick (w.Tick() for the tick being
// predicted). m is copied at once. It goes out with the next tick's
// inputs (reliable messages after them, within
// ClientOptions.MessageBytesPerSecond; docs/messages.md).
//
// A send during a replay (a rollback's, or the determinism check's) is
// dropped and counted (MessageStats.Suppressed) without an error: the
// tick's first run sent it, so a prediction system may send as a
// side-effect system does. It errors when w is not a client's world,
// when T is not a message type of the schema or travels to clients only,
// when m's fields pass T's MaxBytes, with ErrNotConnected, with an error
// matching ErrMessageRate when T's rate limit is spent (counted in
// MessageStats.RateLimited), and when the packet layer refuses it (its
// reliable queue is full). It allocates nothing in steady state.
func SendToServer[T any](w *gw.World, tick gw.Tick, m *T) error {
	mb, id, out, err := outgoing[T](w, false)
	if err != nil {
		return err
	}
	*out = *m
	return mb.client.sendMessage(id, tick)
}

// sendMessage sends the outgoing value of message type id to the server.
func (c *Client) sendMessage(id codec.MessageID, tick gw.Tick) error {
	pm := &c.msgPeer
	if c.world.IsReplaying() {
		pm.stats.Suppressed++
		return nil
	}
	if c.state != stateConnected {
		return ErrNotConnected
	}
	buf, m, err := c.msgs.encode(id, tick)
	if err != nil {
		return err
	}
	ts := &pm.types[id]
	if r := &m.Rules; !ts.rate.take(c.src.Now(), r.PerSecond, float64(r.Burst)) {
		pm.stats.RateLimited++
		return fmt.Errorf("systems: message %s: %w (%v a second, bursts of %d)", m.Name(), ErrMessageRate, r.PerSecond, r.Burst)
	}
	if err := sendOn(c.link.pc, ts, m.Rules.Channel, buf); err != nil {
		return err
	}
	pm.stats.Sent++
	return nil
}
