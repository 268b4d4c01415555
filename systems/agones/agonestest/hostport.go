package agonestest

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
)

// MaxHostPortClients bounds NewHostPort's clients.
const MaxHostPortClients = 1024

// HostPort forwards UDP between clients and a game server bound to
// another port, as the node port Agones gives a game server (its
// hostPort, the port of its public address) forwards to the container's
// port: clients send to the HostPort's address, the game server's public
// address, which is not the address it is bound to. On loopback it lets a
// test connect to a server whose public address differs from its bind
// address, the case of every game server behind Agones.
//
// Each client address gets a socket of its own toward the game server, so
// the server sees one source per client, as behind NAT. Datagrams from a
// client beyond the first clients are dropped and counted (Dropped). It is
// safe for concurrent use.
type HostPort struct {
	down    *net.UDPConn
	target  netip.AddrPort
	clients int

	mu      sync.Mutex
	ups     map[netip.AddrPort]*net.UDPConn
	closed  bool
	dropped atomic.Uint64
	wg      sync.WaitGroup
}

// NewHostPort listens on a free port of target's IP and forwards to
// target, for at most clients client addresses (1..MaxHostPortClients).
func NewHostPort(target netip.AddrPort, clients int) (*HostPort, error) {
	if clients < 1 || clients > MaxHostPortClients {
		return nil, fmt.Errorf("agonestest: %d host port clients outside 1..%d", clients, MaxHostPortClients)
	}
	down, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(target.Addr(), 0)))
	if err != nil {
		return nil, fmt.Errorf("agonestest: host port for %v: %w", target, err)
	}
	h := &HostPort{down: down, target: target, clients: clients, ups: map[netip.AddrPort]*net.UDPConn{}}
	h.wg.Add(1)
	go h.forward()
	return h, nil
}

// Addr returns the address clients send to: the game server's public
// address.
func (h *HostPort) Addr() netip.AddrPort { return h.down.LocalAddr().(*net.UDPAddr).AddrPort() }

// Dropped returns the datagrams dropped from clients beyond the first
// clients.
func (h *HostPort) Dropped() uint64 { return h.dropped.Load() }

// Close stops forwarding and waits for its goroutines.
func (h *HostPort) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return net.ErrClosed
	}
	h.closed = true
	err := h.down.Close()
	for _, up := range h.ups {
		_ = up.Close()
	}
	h.mu.Unlock()
	h.wg.Wait()
	return err
}

// forward reads the clients' datagrams and sends each on its client's
// socket toward the game server.
func (h *HostPort) forward() {
	defer h.wg.Done()
	buf := make([]byte, 2048)
	for {
		n, from, err := h.down.ReadFromUDPAddrPort(buf)
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue
		}
		if up := h.upstream(from); up != nil {
			_, _ = up.Write(buf[:n])
		}
	}
}

// upstream returns the socket of client from, opening it for a new client
// while there is room; nil when the client is dropped.
func (h *HostPort) upstream(from netip.AddrPort) *net.UDPConn {
	h.mu.Lock()
	defer h.mu.Unlock()
	if up := h.ups[from]; up != nil || h.closed {
		return up
	}
	if len(h.ups) >= h.clients {
		h.dropped.Add(1)
		return nil
	}
	up, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(h.target))
	if err != nil {
		h.dropped.Add(1)
		return nil
	}
	h.ups[from] = up
	h.wg.Add(1)
	go h.back(up, from)
	return up
}

// back sends the game server's datagrams to the client, from the public
// address.
func (h *HostPort) back(up *net.UDPConn, client netip.AddrPort) {
	defer h.wg.Done()
	buf := make([]byte, 2048)
	for {
		n, err := up.Read(buf)
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue // an ICMP report of a client gone: the server may still send
		}
		_, _ = h.down.WriteToUDPAddrPort(buf[:n], client)
	}
}
