package testgame

import (
	"math/bits"
	"testing"
	"time"
	"unsafe"

	"github.com/mlange-42/arche/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/components"
	gw "github.com/ghostwire/ghostwire/ecs"
	"github.com/ghostwire/ghostwire/internal/bitstream"
	"github.com/ghostwire/ghostwire/internal/codec"
	"github.com/ghostwire/ghostwire/internal/protocol"
	"github.com/ghostwire/ghostwire/netsync"
	"github.com/ghostwire/ghostwire/systems/harness"
	"github.com/ghostwire/ghostwire/transport/packet"
)

// A hand-made client speaks the protocol without the library, through the
// packet layer as every endpoint does, and sends what a library client
// never would: steering at 2 (beyond the rule's -1..1, on the wire's grid)
// and, every fifth packet, a throttle coded beyond its quantizer's top
// code. The server clamps the first with the game's rule and refuses the
// second as undecodable, counting both; the car it drives never steers
// beyond the rule, and the honest client beside it is unaffected.
func TestHandMadeClientIsClampedAndRefused(t *testing.T) {
	s := newSchema(t)
	h, err := harness.New(s.Options(3, Player{Link: Link(40*time.Millisecond, 0, 0)}))
	require.NoError(t, err)
	link, err := h.Net.Dial("server", Link(40*time.Millisecond, 0, 0))
	require.NoError(t, err)
	conn, err := packet.NewConn(link, h.Time, packet.Options{})
	require.NoError(t, err)
	send := func(msg []byte) {
		_, err := conn.SendUnreliable(msg)
		require.NoError(t, err)
		require.NoError(t, conn.Flush())
	}
	cs := (*codec.Schema)(s.Schema)
	hello := protocol.Hello{SchemaHash: cs.Hash(), TickRate: TickRate, ComponentHashes: make([]uint64, cs.NumComponents())}
	for i := range hello.ComponentHashes {
		hello.ComponentHashes[i] = cs.ComponentHash(codec.ComponentID(i))
	}
	var welcome protocol.Welcome
	sent := 0
	var maxSteer float32
	steer := netsync.Range(-2, 2, 1.0/64) // Drive's axis
	drives := generic.NewMap[Drive](h.Server.World().Arche())
	h.Server.Schedule().Add(gw.StageSimulation, gw.SystemFunc(func(w *gw.World) {
		if e, ok := h.Server.Player(welcome.Conn); ok {
			d := drives.Get(e)
			maxSteer = max(maxSteer, d.Steer, -d.Steer)
		}
	}))
	for h.Time.Now() < 3*time.Second {
		if h.Time.Now()%(16*time.Millisecond) == 0 {
			if welcome.Conn == 0 {
				send(protocol.AppendHello(nil, &hello))
			}
			for {
				msg, ok := conn.Receive()
				if !ok {
					break
				}
				if typ, _ := protocol.PeekType(msg.Data); typ == protocol.MsgWelcome {
					require.NoError(t, protocol.DecodeWelcome(msg.Data, &welcome))
				}
			}
			if welcome.Conn != 0 {
				tick := h.Server.World().Tick().Add(3)
				d := Drive{Steer: steer.Quantize(2), Throttle: 1}
				if sent%5 == 4 {
					send(throttleOutOfRange(t, cs, tick, d))
				} else {
					send(protocol.AppendInputs(nil, cs, &protocol.InputBatch{
						Heads: []components.InputHeader{{Tick: tick}}, Data: driveBytes(&d)}))
				}
				sent++
			}
		}
		h.Step()
	}
	st := h.Server.Stats()
	assert.Greater(t, st.InputsClamped, uint64(10), "steering at 2 is clamped")
	assert.Greater(t, st.InputsRejected, uint64(2), "throttle codes beyond the range are refused")
	assert.Equal(t, float32(1), maxSteer, "the hand-made car steers as far as the rule allows, never further")
	assert.Equal(t, 2, st.Connections)
	require.NoError(t, h.CheckOwnState(0), "the honest client is unaffected")
}

// driveBytes views d as the record an InputBatch carries for it.
func driveBytes(d *Drive) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(d)), unsafe.Sizeof(*d))
}

// throttleOutOfRange returns the inputs packet of d for tick with Throttle
// coded beyond its quantizer's largest code, which the library's encoder
// would clamp into range. It finds the field's top bit as the one bit where
// the packets of the largest and the smallest Throttle differ, and sets
// the bit below it too.
func throttleOutOfRange(t *testing.T, s *codec.Schema, tick gw.Tick, d Drive) []byte {
	t.Helper()
	encode := func(v float32) []byte {
		c := d
		c.Throttle = v
		return protocol.AppendInputs(nil, s, &protocol.InputBatch{
			Heads: []components.InputHeader{{Tick: tick}}, Data: driveBytes(&c)})
	}
	hi, lo := encode(2), encode(-2)
	require.Len(t, lo, len(hi))
	top := -1
	for i := range hi {
		if x := hi[i] ^ lo[i]; x != 0 {
			require.Equal(t, -1, top, "the packets differ in more than one byte")
			require.Equal(t, 1, bits.OnesCount8(x), "the packets differ in more than one bit")
			top = i*8 + bits.TrailingZeros8(x)
		}
	}
	require.Positive(t, top, "Throttle's top bit")
	hi[(top-1)/8] |= 1 << ((top - 1) % 8)
	var b protocol.InputBatch
	require.ErrorIs(t, protocol.DecodeInputs(hi, s, &b), bitstream.ErrOutOfRange, "the crafted packet is undecodable")
	return hi
}
