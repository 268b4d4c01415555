//go:build !js

package web

import (
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/ghostwire/ghostwire/transport/webtransport"
)

// wtServer is the server's WebTransport: the listener, its socket, and
// Serve's result.
type wtServer struct {
	l      *webtransport.Listener
	conn   net.PacketConn
	served chan error
}

// setupWebTransport serves WebTransport on UDP at addr, beside the HTTP
// server, unless Options.Transport is websocket. Pages of any port of the
// host may open a session, as the page is served over TCP.
func (s *Server) setupWebTransport(addr string) error {
	s.transports = Transports{Mode: s.opts.Transport}
	if s.opts.Transport == TransportWebSocket {
		return nil
	}
	var cert tls.Certificate
	var err error
	if s.opts.CertFile != "" {
		cert, err = webtransport.LoadCertificate(s.opts.CertFile, s.opts.KeyFile)
	} else {
		cert, err = webtransport.NewDevCertificate(devValidity, "127.0.0.1", "::1", "localhost")
	}
	if err != nil {
		return err
	}
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return fmt.Errorf("web: WebTransport at udp %s: %w", addr, err)
	}
	host, _, _ := net.SplitHostPort(pc.LocalAddr().String()) // the socket's own address always splits
	ln, err := webtransport.NewListener(webtransport.ListenerOptions{Certificate: cert, OriginPatterns: []string{host + ":*"}})
	if err != nil {
		pc.Close()
		return err
	}
	s.wt.l, s.wt.conn = ln, pc
	s.transports.URL = "https://" + pc.LocalAddr().String() + "/wt"
	if s.opts.CertFile == "" {
		h, _ := webtransport.CertificateHash(cert) // NewDevCertificate's holds one
		s.transports.CertHash = hex.EncodeToString(h[:])
	}
	s.wt.served = make(chan error, 1)
	go func() { s.wt.served <- ln.Serve(pc, http.HandlerFunc(s.serveWebTransport)) }()
	s.opts.Logger.Info("web: WebTransport", "url", s.transports.URL, "dev_certificate", s.transports.CertHash != "")
	return nil
}

// serveWebTransport upgrades a page's WebTransport request and hands the
// session, conditioned by its session's link, to the game loop, as
// serveSocket does with a WebSocket.
func (s *Server) serveWebTransport(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("session")
	if err := validSession(id); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.accepting.Lock()
	s.wt.l.ServeHTTP(w, r)
	conn, ok := s.wt.l.Accept()
	if !ok {
		s.accepting.Unlock()
		return // refused and answered
	}
	s.mu.Lock()
	s.accepting.Unlock()
	defer s.mu.Unlock()
	s.sessionsWT++
	s.handOver(conn, id, false)
}

// closeWebTransport ends every WebTransport session and the socket.
func (s *Server) closeWebTransport() error {
	if s.wt.l == nil {
		return nil
	}
	err := s.wt.l.Close()
	if served := <-s.wt.served; served != nil {
		err = errors.Join(err, served)
	}
	return errors.Join(err, s.wt.conn.Close())
}
