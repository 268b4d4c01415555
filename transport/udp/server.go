package udp

import (
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/crypto/chacha20poly1305"
)

const (
	// keepAliveInterval is how long a side stays silent before it sends a
	// keep-alive (10 Hz, as the reference).
	keepAliveInterval = 100 * time.Millisecond
	// redundantDisconnects is how many disconnect packets a side sends when
	// it ends a connection, so one arrives despite loss.
	redundantDisconnects = 10
	// globalSequenceStart is the first sequence of the server's challenge
	// and denied packets. It sits above any per-connection sequence, so a
	// nonce under a client's server-to-client key never repeats.
	globalSequenceStart = 1 << 63
)

// packetWriter sends a datagram; *net.UDPConn implements it. Tests drive the
// server with a fake one and no socket.
type packetWriter interface {
	WriteToUDPAddrPort(b []byte, addr netip.AddrPort) (int, error)
}

// pending is a handshake waiting for the client's challenge response.
type pending struct {
	addr         netip.AddrPort
	clientID     uint64
	timeout      int32 // the token's timeout seconds
	expire       int64 // server clock; fixed at admission, never extended
	mac          [macSize]byte
	c2s, s2c     cipher.AEAD
	challengeSeq uint64
	challenge    [maxChallengePacketSize]byte
	challengeLen int
	// received and sent are the bytes exchanged with addr so far; the
	// server never lets sent exceed received before the address has
	// proved it reads what the server sends.
	received, sent int
	prev, next     *pending // admission order
	// srcPrev and srcNext link the handshakes of one source (sourceKey),
	// oldest first; admitted is the server clock at admission and
	// tokenExpire the token's expiry, unix seconds.
	srcPrev, srcNext *pending
	admitted         int64
	tokenExpire      uint64
}

// server is the netcode server without its socket: receive processes one
// datagram, update runs the timers. All state is guarded by mu; a
// connection's own state is guarded by its mu, always taken after s.mu.
type server struct {
	opts  Options
	out   packetWriter
	log   *slog.Logger
	start time.Time

	mu            sync.Mutex
	closed        bool
	tokenAEAD     cipher.AEAD // XChaCha20-Poly1305 under the private key
	challengeAEAD cipher.AEAD // ChaCha20-Poly1305 under a key random per start
	globalSeq     uint64
	slots         []*ServerConn
	connected     int
	byAddr        map[netip.AddrPort]*ServerConn
	byID          map[uint64]*ServerConn
	pending       map[netip.AddrPort]*pending
	pendingPerIP  map[netip.Addr]*sourcePending // by sourceKey
	history       *tokenHistory
	spent         *spentTokens
	oldest        *pending // the pending handshakes, oldest first
	newest        *pending
	limiter       *addressLimiter
	accept        []*ServerConn
	stats         Stats

	// Scratch for the receive path, guarded by mu, so it does not allocate.
	plain     [maxPacketSize]byte
	privPlain [PrivateTokenSize - macSize]byte
	priv      privateToken
	chPlain   [ChallengeTokenSize - macSize]byte
	ch        challengeToken
	req       requestPacket
	sendBuf   [maxPacketSize]byte
	sc        scratch
}

// newServer builds a server that sends through out. opts must have been
// through withDefaults and carry a valid PublicAddress.
func newServer(opts Options, out packetWriter, start time.Time) (*server, error) {
	tokenAEAD, err := chacha20poly1305.NewX(opts.PrivateKey[:])
	if err != nil {
		return nil, fmt.Errorf("udp: token cipher: %w", err)
	}
	var key [KeySize]byte
	if _, err := rand.Read(key[:]); err != nil {
		return nil, fmt.Errorf("udp: reading challenge key: %w", err)
	}
	challengeAEAD, err := chacha20poly1305.New(key[:])
	if err != nil {
		return nil, fmt.Errorf("udp: challenge cipher: %w", err)
	}
	return &server{
		opts:          opts,
		out:           out,
		log:           opts.Logger,
		start:         start,
		tokenAEAD:     tokenAEAD,
		challengeAEAD: challengeAEAD,
		globalSeq:     globalSequenceStart,
		slots:         make([]*ServerConn, opts.MaxClients),
		byAddr:        make(map[netip.AddrPort]*ServerConn, opts.MaxClients),
		byID:          make(map[uint64]*ServerConn, opts.MaxClients),
		pending:       make(map[netip.AddrPort]*pending),
		pendingPerIP:  make(map[netip.Addr]*sourcePending),
		history:       newTokenHistory(opts.TokenHistory),
		spent:         newSpentTokens(opts.SpentTokens),
		limiter:       newAddressLimiter(opts.AddressRate, opts.AddressSlots),
	}, nil
}

// clock converts a wall-clock reading into the server's monotonic
// nanoseconds.
func (s *server) clock(now time.Time) int64 { return int64(now.Sub(s.start)) }

// receive processes one datagram from the address from (normalized). It is
// the server's whole receive path: it never panics on any input, and a
// datagram that fails a check costs no allocation.
func (s *server) receive(now time.Time, from netip.AddrPort, pkt []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	mono := s.clock(now)
	if c := s.byAddr[from]; c != nil {
		s.receiveConnected(c, mono, pkt)
		return
	}
	if !s.limiter.allow(from.Addr(), mono, len(pkt)) {
		s.stats.RateLimited++
		return
	}
	if len(pkt) > 0 && pkt[0] == packetRequest {
		s.receiveRequest(now, mono, from, pkt)
		return
	}
	typ, seq, bodyAt, ok := peekHeader(pkt)
	if !ok || typ == packetDenied || typ == packetChallenge {
		s.stats.Malformed++ // a server never receives denied or challenge packets
		return
	}
	p := s.pending[from]
	if p == nil || typ != packetResponse {
		s.stats.UnknownClient++
		return
	}
	p.received += len(pkt)
	s.receiveResponse(p, mono, pkt, seq, bodyAt)
}

// receiveRequest handles a connection request from an address with no
// connection.
func (s *server) receiveRequest(now time.Time, mono int64, from netip.AddrPort, pkt []byte) {
	r := &s.req
	if !readRequest(pkt, r) {
		s.stats.Malformed++
		return
	}
	if r.protocolID != s.opts.ProtocolID {
		s.stats.WrongProtocol++
		return
	}
	if r.expire <= uint64(max(now.Unix(), 0)) {
		s.stats.ExpiredToken++
		return
	}
	mac := [macSize]byte(r.private[PrivateTokenSize-macSize:])
	if p := s.pending[from]; p != nil {
		// A retransmitted request: send the same challenge again, within the
		// budget the address has paid for. Another token from the same
		// address waits until this handshake ends.
		p.received += len(pkt)
		if p.mac == mac {
			s.sendPending(p, p.challenge[:p.challengeLen])
		}
		return
	}
	priv := &s.priv
	authentic, wellFormed := openPrivateToken(&s.sc, s.tokenAEAD, r.private, r.nonce, r.protocolID, r.expire, &s.privPlain, priv)
	if !authentic || !wellFormed {
		s.stats.BadToken++
		return
	}
	if !priv.addrs.contains(s.opts.PublicAddress) {
		s.stats.WrongAddress++
		return
	}
	if _, ok := s.byID[priv.clientID]; ok {
		s.stats.ClientInUse++
		return
	}
	unix := uint64(max(now.Unix(), 0))
	if !s.history.check(mac, from) || s.spent.has(mac) {
		s.stats.TokenReused++
		return
	}
	if !s.spent.room(unix) {
		s.stats.SpentTokensFull++
		return
	}
	src := sourceKey(from.Addr())
	if sp := s.pendingPerIP[src]; sp != nil && sp.n >= s.opts.MaxPendingPerIP {
		old := sp.oldest
		if mono-old.admitted < int64(PendingFairAge) {
			s.stats.PendingAddressFull++
			return
		}
		// The source's quota is held by handshakes nobody answered for
		// PendingFairAge: the oldest gives its place, and its token is not
		// admitted again, so each token holds a place once.
		s.stats.PendingDisplaced++
		s.history.spend(old.mac)
		s.removePending(old)
	}
	if s.history.add(mac, from, r.expire, unix) {
		s.stats.TokenHistoryFull++
	}
	c2s, err1 := chacha20poly1305.New(priv.c2s[:])
	s2c, err2 := chacha20poly1305.New(priv.s2c[:])
	if err1 != nil || err2 != nil {
		return // unreachable: the keys are KeySize bytes
	}
	if s.connected >= len(s.slots) {
		s.stats.ServerFull++
		s.sendDenied(s2c, from)
		return
	}
	if len(s.pending) >= s.opts.MaxPending {
		// The oldest handshake makes room: a flood then only delays an
		// honest client (its next request, 100 ms later, is admitted again)
		// unless it outpaces MaxPending handshakes per round trip.
		s.stats.PendingFull++
		s.removePending(s.oldest)
	}
	p := &pending{
		addr:        from,
		clientID:    priv.clientID,
		timeout:     priv.timeoutSeconds,
		expire:      mono + int64(s.opts.HandshakeTimeout),
		mac:         mac,
		c2s:         c2s,
		s2c:         s2c,
		received:    len(pkt),
		admitted:    mono,
		tokenExpire: r.expire,
	}
	p.challengeSeq = s.nextGlobal()
	body := s.sc.body[:]
	binary.LittleEndian.PutUint64(body, p.challengeSeq)
	s.ch = challengeToken{clientID: priv.clientID, userData: priv.userData}
	sealChallengeToken(body[8:], &s.sc, s.challengeAEAD, p.challengeSeq, &s.ch)
	p.challengeLen = len(sealPacket(p.challenge[:], &s.sc, s2c, s.opts.ProtocolID, packetChallenge, p.challengeSeq, body))
	s.pending[from] = p
	sp := s.pendingPerIP[src]
	if sp == nil {
		sp = &sourcePending{}
		s.pendingPerIP[src] = sp
	}
	sp.push(p)
	p.prev = s.newest
	if s.newest != nil {
		s.newest.next = p
	} else {
		s.oldest = p
	}
	s.newest = p
	s.sendPending(p, p.challenge[:p.challengeLen])
}

// nextGlobal returns the next sequence of the server's global counter.
func (s *server) nextGlobal() uint64 {
	seq := s.globalSeq
	s.globalSeq++
	return seq
}

// sendPending sends b to a pending handshake's address. Every reply
// answers one packet larger than itself (checked when the package
// compiles), so an unproven address never receives more than it sent.
func (s *server) sendPending(p *pending, b []byte) {
	p.sent += len(b)
	_, _ = s.out.WriteToUDPAddrPort(b, p.addr) // UDP is lossy anyway; a failed write is a lost packet
}

// sendDenied answers one request or response with a denied packet, which
// is smaller than either.
func (s *server) sendDenied(s2c cipher.AEAD, to netip.AddrPort) {
	b := sealPacket(s.sendBuf[:], &s.sc, s2c, s.opts.ProtocolID, packetDenied, s.nextGlobal(), nil)
	_, _ = s.out.WriteToUDPAddrPort(b, to)
}

// receiveResponse handles a challenge response from a pending handshake's
// address.
func (s *server) receiveResponse(p *pending, mono int64, pkt []byte, seq uint64, bodyAt int) {
	body, res := openPacket(pkt, &s.sc, packetResponse, seq, bodyAt, p.c2s, s.opts.ProtocolID, nil, s.plain[:])
	switch res {
	case readAuth:
		s.stats.AuthFailed++
		return
	case readBadSize:
		s.stats.Malformed++
		return
	}
	chSeq := binary.LittleEndian.Uint64(body)
	// The challenge token must be the one sent to this address: a token
	// fetched from another address would let a token holder skip proving
	// that it reads what is sent to this one.
	if chSeq != p.challengeSeq ||
		!openChallengeToken(&s.sc, s.challengeAEAD, chSeq, body[8:], &s.chPlain, &s.ch) ||
		s.ch.clientID != p.clientID {
		s.stats.BadToken++
		return
	}
	if _, ok := s.byID[p.clientID]; ok {
		s.stats.ClientInUse++
		return
	}
	if s.connected >= len(s.slots) {
		s.stats.ServerFull++
		p.sent += deniedPacketSize
		s.sendDenied(p.s2c, p.addr)
		return
	}
	s.removePending(p)
	s.history.spend(p.mac)
	s.spent.add(p.mac, p.tokenExpire)
	s.connect(p, mono)
}

// removePending forgets a handshake.
func (s *server) removePending(p *pending) {
	if p.prev != nil {
		p.prev.next = p.next
	} else {
		s.oldest = p.next
	}
	if p.next != nil {
		p.next.prev = p.prev
	} else {
		s.newest = p.prev
	}
	p.prev, p.next = nil, nil
	delete(s.pending, p.addr)
	src := sourceKey(p.addr.Addr())
	if sp := s.pendingPerIP[src]; sp != nil {
		if sp.remove(p); sp.n == 0 {
			delete(s.pendingPerIP, src)
		}
	}
}

// connect turns a handshake whose challenge was answered into a connection
// in a free slot, queues it for Accept and sends its first keep-alive.
func (s *server) connect(p *pending, mono int64) {
	index := 0
	for s.slots[index] != nil {
		index++
	}
	c := &ServerConn{
		s:        s,
		addr:     p.addr,
		clientID: p.clientID,
		userData: s.ch.userData,
		index:    index,
		c2s:      p.c2s,
		s2c:      p.s2c,
		lastRecv: mono,
		queue:    newByteQueue(s.opts.QueueBytes),
	}
	if p.timeout > 0 {
		c.timeout = int64(time.Duration(p.timeout) * time.Second)
	}
	s.slots[index] = c
	s.connected++
	s.byAddr[c.addr] = c
	s.byID[c.clientID] = c
	s.accept = append(s.accept, c)
	c.mu.Lock()
	c.sendKeepAliveLocked(mono)
	c.mu.Unlock()
	s.log.Debug("udp: client connected", "client", c.clientID, "addr", c.addr, "index", index)
}

// receiveConnected handles a datagram from a connected client's address.
func (s *server) receiveConnected(c *ServerConn, mono int64, pkt []byte) {
	if len(pkt) > 0 && pkt[0] == packetRequest {
		return // the client's requests still in flight after its connection
	}
	typ, seq, bodyAt, ok := peekHeader(pkt)
	if !ok || typ == packetDenied || typ == packetChallenge {
		s.stats.Malformed++
		return
	}
	if typ == packetResponse {
		return // a retransmitted response: the client has not seen a keep-alive yet
	}
	c.mu.Lock()
	body, res := openPacket(pkt, &s.sc, typ, seq, bodyAt, c.c2s, s.opts.ProtocolID, &c.replay, s.plain[:])
	switch res {
	case readReplayed:
		c.mu.Unlock()
		s.stats.Replayed++
		return
	case readAuth:
		c.mu.Unlock()
		s.stats.AuthFailed++
		return
	case readBadSize:
		c.mu.Unlock()
		s.stats.Malformed++
		return
	}
	if !c.bucket.allow(&s.opts.ConnRate, mono, len(pkt)) {
		c.mu.Unlock()
		s.stats.RateLimited++
		return
	}
	c.lastRecv = mono
	switch typ {
	case packetKeepAlive:
		c.confirmed = true
	case packetPayload:
		c.confirmed = true
		if !c.queue.push(body) {
			c.mu.Unlock()
			s.stats.QueueFull++
			s.drop(c, mono, ErrQueueFull, true)
			return
		}
	case packetDisconnect:
		c.mu.Unlock()
		s.drop(c, mono, ErrPeerDisconnected, false)
		return
	}
	c.mu.Unlock()
}

// drop ends a connection: it marks it closed with reason, optionally sends
// the redundant disconnect packets, and frees its slot. s.mu must be held.
func (s *server) drop(c *ServerConn, mono int64, reason error, notify bool) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	if notify {
		for range redundantDisconnects {
			c.sendLocked(mono, packetDisconnect, nil)
		}
	}
	c.closed = true
	c.reason = reason
	c.mu.Unlock()
	s.slots[c.index] = nil
	s.connected--
	delete(s.byAddr, c.addr)
	delete(s.byID, c.clientID)
	for i, a := range s.accept {
		if a == c {
			s.accept = append(s.accept[:i], s.accept[i+1:]...)
			break
		}
	}
	s.log.Debug("udp: client disconnected", "client", c.clientID, "addr", c.addr, "reason", reason)
}

// update runs the timers: keep-alives to quiet connections, timeouts of
// silent connections and unanswered handshakes. Its cost is
// O(MaxClients + handshakes expiring now).
func (s *server) update(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	mono := s.clock(now)
	for _, c := range s.slots {
		if c == nil {
			continue
		}
		c.mu.Lock()
		timedOut := c.timeout > 0 && mono-c.lastRecv > c.timeout
		if !timedOut && mono-c.lastSent >= int64(keepAliveInterval) {
			c.sendKeepAliveLocked(mono)
		}
		c.mu.Unlock()
		if timedOut {
			s.stats.Timeout++
			s.drop(c, mono, ErrTimedOut, false)
		}
	}
	// Every handshake lives HandshakeTimeout, so the oldest expire first.
	for s.oldest != nil && mono >= s.oldest.expire {
		s.stats.PendingExpired++
		s.removePending(s.oldest)
	}
}

// close disconnects every client (sending the redundant disconnect packets)
// and stops the server processing datagrams.
func (s *server) close(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	mono := s.clock(now)
	for _, c := range s.slots {
		if c != nil {
			s.drop(c, mono, ErrListenerClosed, true)
		}
	}
	s.accept = nil
	s.pending = nil
	s.pendingPerIP = nil
	s.oldest, s.newest = nil, nil
	s.closed = true
}

// acceptConn pops the oldest connection not yet accepted.
func (s *server) acceptConn() (*ServerConn, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.accept) == 0 {
		return nil, false
	}
	c := s.accept[0]
	s.accept[0] = nil
	s.accept = s.accept[1:]
	return c, true
}

// snapshot returns the server's counters.
func (s *server) snapshot() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}
