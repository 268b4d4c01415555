package udp

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"time"
)

// Defaults applied by Listen to zero Options fields.
const (
	DefaultMaxClients       = 64
	DefaultHandshakeTimeout = 5 * time.Second
	DefaultMaxPending       = 1024
	DefaultMaxPendingPerIP  = 16
	DefaultAddressSlots     = 4096
	DefaultQueueBytes       = 64 << 10
	DefaultTokenHistory     = 8192
	DefaultSpentTokens      = 1 << 18

	// MaxClientsLimit is the largest MaxClients a Listener accepts.
	MaxClientsLimit = 4096
)

var (
	// DefaultAddressRate limits the traffic of one source IP that has no
	// connection: enough for a few clients behind one NAT to handshake at
	// 10 Hz, far too little to keep the server busy decrypting tokens.
	DefaultAddressRate = Rate{Packets: 256, Bytes: 256 << 10}
	// DefaultConnRate limits what one connected client may send: several
	// times a 60 Hz client's full-size traffic.
	DefaultConnRate = Rate{Packets: 512, Bytes: 1 << 20}
)

// ErrInvalidOptions is matched (errors.Is) by the error Listen returns for
// options it cannot use.
var ErrInvalidOptions = errors.New("udp: invalid options")

// Options configures a Listener. The zero value of every field but
// BindAddress and PrivateKey gives a useful default.
type Options struct {
	// BindAddress is the local UDP address to bind, such as "0.0.0.0:40000"
	// or "127.0.0.1:0".
	BindAddress string
	// PublicAddress is the address connect tokens name for this server. It
	// may differ from the bound address behind NAT or a load balancer. Zero
	// means the bound address, which must then be a specific IP.
	// Listener.SetPublicAddress changes it later.
	PublicAddress netip.AddrPort
	// PrivateKey is shared with the backend that makes connect tokens. An
	// all-zero key is refused: it is a missing configuration, not a key.
	PrivateKey [KeySize]byte
	// ProtocolID must match the tokens' protocol ID.
	ProtocolID uint64
	// MaxClients is the number of client slots, 1..MaxClientsLimit; zero
	// means DefaultMaxClients. A handshake past it is denied.
	MaxClients int
	// HandshakeTimeout is how long a handshake may wait for the client's
	// challenge response; nothing the client sends extends it. Zero means
	// DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// MaxPending caps the handshakes waiting for a challenge response; past
	// it the oldest makes room. Zero means DefaultMaxPending.
	MaxPending int
	// MaxPendingPerIP caps the waiting handshakes from one source (an IPv4
	// address or an IPv6 /64, any port); past it, a request takes the place
	// of the source's oldest handshake once that one has waited
	// PendingFairAge, or is refused. Zero means DefaultMaxPendingPerIP.
	MaxPendingPerIP int
	// AddressRate limits, per source IP, the packets from addresses with no
	// connection, before any crypto. The zero Rate means DefaultAddressRate;
	// a Rate with negative fields disables the limit.
	AddressRate Rate
	// AddressSlots is the size of the fixed table of per-IP buckets; zero
	// means DefaultAddressSlots.
	AddressSlots int
	// ConnRate limits, per connection, the authenticated packets a client
	// sends. The zero Rate means DefaultConnRate; negative fields disable it.
	ConnRate Rate
	// QueueBytes bounds the received payloads waiting for Receive on one
	// connection, two bytes of overhead each; a connection that fills it is
	// disconnected. Zero means DefaultQueueBytes.
	QueueBytes int
	// TokenHistory caps the remembered connect tokens (MAC and first source
	// address) that stop a token being used from a second address; past it
	// the oldest is forgotten. Zero means DefaultTokenHistory.
	TokenHistory int
	// SpentTokens caps the record of connect tokens that completed a
	// connection, each kept until it expires so it is never admitted again
	// (a second connection with the same keys would repeat AEAD nonces).
	// When it is full of unexpired tokens, new handshakes are refused
	// (Stats.SpentTokensFull). Size it as the most connections a server
	// completes per second times the tokens' lifetime: the default,
	// 262,144 (about 15 MB at most), holds 300 connections a minute of
	// tokens valid for 14 hours. Zero means DefaultSpentTokens.
	SpentTokens int
	// Polled makes the Listener read its socket only in Poll, with no
	// goroutine of its own: a server that ticks reads what arrived when
	// it ticks, with one system call per 32 datagrams, instead of waking a
	// reading goroutine for each (a thread switch per datagram, the
	// largest cost of a game server's networking on a busy host). Poll
	// also runs the keep-alive and timeout timers and flushes; call it at
	// least every 25 ms (systems.Server calls it at the start of every
	// Update). A Poll reads at most 1,024 datagrams, so a flood cannot
	// hold the tick (Stats.PollCapped counts the Polls that stopped
	// there; the rest waits for the next). Where recvmmsg is not used (not
	// Linux amd64 or arm64) a goroutine still reads, and Poll runs the
	// timers and flushes.
	Polled bool
	// SendBatch is how many datagrams the Listener's connections queue
	// before it writes them with one system call (sendmmsg on Linux amd64
	// and arm64; one write per datagram elsewhere). Queued datagrams leave
	// at the latest at the next Flush, after a batch of received
	// datagrams is handled, or within 25 ms on the Listener's timer (in
	// the next Poll when Polled):
	// a caller that sends a round of datagrams calls Flush after it
	// (systems.Server does, once per Update). Zero or 1 writes each
	// datagram as it is sent. Allowed: 0..MaxSendBatch.
	SendBatch int
	// Logger receives connection events at debug level; nil discards them.
	Logger *slog.Logger
}

// withDefaults validates o and fills its zero fields.
func (o Options) withDefaults() (Options, error) {
	if o.PrivateKey == ([KeySize]byte{}) {
		return o, fmt.Errorf("%w: PrivateKey is all zero; configure the key shared with the token backend", ErrInvalidOptions)
	}
	if o.MaxClients == 0 {
		o.MaxClients = DefaultMaxClients
	}
	if o.MaxClients < 1 || o.MaxClients > MaxClientsLimit {
		return o, fmt.Errorf("%w: MaxClients %d outside 1..%d", ErrInvalidOptions, o.MaxClients, MaxClientsLimit)
	}
	if o.HandshakeTimeout == 0 {
		o.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if o.MaxPending == 0 {
		o.MaxPending = DefaultMaxPending
	}
	if o.MaxPendingPerIP == 0 {
		o.MaxPendingPerIP = DefaultMaxPendingPerIP
	}
	if o.AddressSlots == 0 {
		o.AddressSlots = DefaultAddressSlots
	}
	if o.QueueBytes == 0 {
		o.QueueBytes = DefaultQueueBytes
	}
	if o.TokenHistory == 0 {
		o.TokenHistory = DefaultTokenHistory
	}
	if o.SpentTokens == 0 {
		o.SpentTokens = DefaultSpentTokens
	}
	if o.AddressRate == (Rate{}) {
		o.AddressRate = DefaultAddressRate
	}
	if o.ConnRate == (Rate{}) {
		o.ConnRate = DefaultConnRate
	}
	switch {
	case o.HandshakeTimeout < 0:
		return o, fmt.Errorf("%w: HandshakeTimeout %v is negative", ErrInvalidOptions, o.HandshakeTimeout)
	case o.MaxPending < 1:
		return o, fmt.Errorf("%w: MaxPending %d is below 1", ErrInvalidOptions, o.MaxPending)
	case o.MaxPendingPerIP < 1:
		return o, fmt.Errorf("%w: MaxPendingPerIP %d is below 1", ErrInvalidOptions, o.MaxPendingPerIP)
	case o.AddressSlots < 1:
		return o, fmt.Errorf("%w: AddressSlots %d is below 1", ErrInvalidOptions, o.AddressSlots)
	case o.QueueBytes < 2+1200:
		return o, fmt.Errorf("%w: QueueBytes %d cannot hold one full datagram (%d bytes)", ErrInvalidOptions, o.QueueBytes, 2+1200)
	case o.TokenHistory < 1:
		return o, fmt.Errorf("%w: TokenHistory %d is below 1", ErrInvalidOptions, o.TokenHistory)
	case o.SpentTokens < 1:
		return o, fmt.Errorf("%w: SpentTokens %d is below 1", ErrInvalidOptions, o.SpentTokens)
	case o.SendBatch < 0 || o.SendBatch > MaxSendBatch:
		return o, fmt.Errorf("%w: SendBatch %d outside 0..%d", ErrInvalidOptions, o.SendBatch, MaxSendBatch)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.PublicAddress = normalize(o.PublicAddress)
	return o, nil
}
