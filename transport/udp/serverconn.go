package udp

import (
	"crypto/cipher"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/ghostwire/ghostwire/transport"
)

// Reasons a connection ends, matched with errors.Is against Err.
var (
	// ErrPeerDisconnected: the other side sent disconnect packets.
	ErrPeerDisconnected = errors.New("udp: peer disconnected")
	// ErrTimedOut: nothing authentic arrived within the token's timeout.
	ErrTimedOut = errors.New("udp: connection timed out")
	// ErrQueueFull: received payloads filled the receive queue because the
	// application stopped calling Receive.
	ErrQueueFull = errors.New("udp: receive queue full")
	// ErrLocalClose: this side called Close.
	ErrLocalClose = errors.New("udp: closed locally")
	// ErrListenerClosed: the server's Listener was closed.
	ErrListenerClosed = errors.New("udp: listener closed")
)

// ServerConn is the server's end of one client's connection: a netcode
// client slot bound to the token's client ID and to the source address that
// answered the challenge. Listener.Accept returns it as a transport.Conn;
// type-assert to *ServerConn for the client ID and user data. It is safe for
// concurrent use.
type ServerConn struct {
	s        *server
	addr     netip.AddrPort
	clientID uint64
	userData [UserDataSize]byte
	index    int
	timeout  int64 // nanoseconds; 0 = the token disabled it
	c2s, s2c cipher.AEAD

	mu          sync.Mutex
	closed      bool  // no more traffic either way
	localClosed bool  // Close was called; the queue is gone
	reason      error // why closed
	confirmed   bool  // the client has shown it knows its slot
	sendSeq     uint64
	lastSent    int64
	lastRecv    int64
	replay      replayWindow
	bucket      bucket
	queue       byteQueue
	stats       transport.Stats
	sendBuf     [maxPacketSize]byte
	sc          scratch
}

// ClientID returns the client ID from the connect token.
func (c *ServerConn) ClientID() uint64 { return c.clientID }

// UserData returns the user data from the connect token.
func (c *ServerConn) UserData() [UserDataSize]byte { return c.userData }

// ClientIndex returns the connection's slot, 0..MaxClients-1; a slot is
// reused after its connection ends.
func (c *ServerConn) ClientIndex() int { return c.index }

// RemoteAddr returns the client's address as the server sees it.
func (c *ServerConn) RemoteAddr() netip.AddrPort { return c.addr }

// Err returns nil while the connection is up, and afterwards why it ended
// (ErrPeerDisconnected, ErrTimedOut, ErrQueueFull, ErrLocalClose or
// ErrListenerClosed).
func (c *ServerConn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reason
}

// Send encrypts p into a payload packet and sends it to the client, preceded
// by a keep-alive while the client has not confirmed its slot. It returns an
// error matching transport.ErrDatagramSize for a p outside
// 1..transport.MaxDatagramSize bytes and transport.ErrClosed once the
// connection has ended. It does not allocate.
func (c *ServerConn) Send(p []byte) error {
	if len(p) == 0 || len(p) > transport.MaxDatagramSize {
		return sizeError(len(p))
	}
	mono := c.s.clock(time.Now())
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return transport.ErrClosed
	}
	if !c.confirmed {
		c.sendKeepAliveLocked(mono)
	}
	c.stats.Sent++
	c.stats.SentBytes += uint64(len(p))
	c.sendLocked(mono, packetPayload, p)
	return nil
}

// sendKeepAliveLocked sends a keep-alive carrying the slot and max clients.
func (c *ServerConn) sendKeepAliveLocked(mono int64) {
	body := c.sc.body[:keepAliveBodySize]
	binary.LittleEndian.PutUint32(body, uint32(c.index))
	binary.LittleEndian.PutUint32(body[4:], uint32(len(c.s.slots)))
	c.sendLocked(mono, packetKeepAlive, body)
}

// sendLocked seals and sends one packet under the connection's sequence.
func (c *ServerConn) sendLocked(mono int64, typ byte, body []byte) {
	b := sealPacket(c.sendBuf[:], &c.sc, c.s2c, c.s.opts.ProtocolID, typ, c.sendSeq, body)
	c.sendSeq++
	c.lastSent = mono
	_, _ = c.s.out.WriteToUDPAddrPort(b, c.addr) // a failed write is a lost datagram
}

// Receive copies the oldest received payload into buf. A payload longer
// than buf is discarded and counted in Stats.Truncated. Payloads that
// arrived before the connection ended can still be received, until Close.
// It does not allocate.
func (c *ServerConn) Receive(buf []byte) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.localClosed {
		return 0, false
	}
	return receiveQueued(&c.queue, &c.stats, buf)
}

// receiveQueued pops the next payload that fits buf, counting what it
// discards.
func receiveQueued(q *byteQueue, st *transport.Stats, buf []byte) (int, bool) {
	for {
		n, fits, ok := q.pop(buf)
		if !ok {
			return 0, false
		}
		if !fits {
			st.Truncated++
			continue
		}
		st.Received++
		st.ReceivedBytes += uint64(n)
		return n, true
	}
}

// Close sends the redundant disconnect packets to the client, frees its slot
// and drops what it had queued. Closing twice returns transport.ErrClosed.
func (c *ServerConn) Close() error {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	c.mu.Lock()
	if c.localClosed {
		c.mu.Unlock()
		return transport.ErrClosed
	}
	c.localClosed = true
	c.queue = byteQueue{}
	open := !c.closed
	c.mu.Unlock()
	if open && !s.closed {
		s.drop(c, s.clock(time.Now()), ErrLocalClose, true)
	}
	return nil
}

// Stats returns the connection's counters: payloads sent and received, and
// payloads discarded by Receive for a short buffer (Truncated). Lost,
// Duplicated, Reordered and Dropped stay zero: UDP does not tell.
func (c *ServerConn) Stats() transport.Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// sizeError returns the error for a datagram of n bytes, matching
// transport.ErrDatagramSize.
func sizeError(n int) error {
	if n == 0 {
		return errEmptyDatagram
	}
	return fmt.Errorf("%w: %d bytes exceeds transport.MaxDatagramSize %d", transport.ErrDatagramSize, n, transport.MaxDatagramSize)
}

var errEmptyDatagram = fmt.Errorf("%w: empty; a datagram must be 1 to %d bytes", transport.ErrDatagramSize, transport.MaxDatagramSize)
