package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Options configure the operator's endpoints.
type Options struct {
	// Gatherer is what /metrics serves; nil: a registry of a Collector of
	// Sources and Go's runtime and process collectors.
	Gatherer prometheus.Gatherer
	// Sources feed the default registry's Collector.
	Sources Sources
	// Pprof serves net/http/pprof under /debug/pprof/. The address must
	// then be a loopback one: profiles show a process's memory and code.
	Pprof bool
}

// Handler serves /metrics, /healthz (200 while the process runs),
// /readyz (200 once SetReady(true), 503 before and once draining) and,
// with Options.Pprof, /debug/pprof/. Every other path is a 404.
type Handler struct {
	mux   *http.ServeMux
	ready atomic.Bool
}

// NewHandler returns the endpoints' handler.
func NewHandler(opts Options) *Handler {
	g := opts.Gatherer
	if g == nil {
		reg := prometheus.NewRegistry()
		reg.MustRegister(NewCollector(opts.Sources), prometheus.NewGoCollector(),
			prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
		g = reg
	}
	h := &Handler{mux: http.NewServeMux()}
	h.mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{Timeout: 5 * time.Second}))
	h.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	h.mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !h.ready.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	if opts.Pprof {
		h.mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		h.mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		h.mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
		h.mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		h.mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	}
	return h
}

// SetReady says whether the process takes new players: /readyz follows.
func (h *Handler) SetReady(ok bool) { h.ready.Store(ok) }

// ServeHTTP serves the endpoints; a request body is never read.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// Serve serves h on addr until ctx ends, with read, write and idle
// timeouts and a 1 KB header cap (the endpoints take no body). It errors
// at once when addr cannot be listened on, or when pprof is on and addr is
// not a loopback address.
func Serve(ctx context.Context, addr string, h *Handler, pprofOn bool) error {
	if pprofOn {
		if err := loopbackOnly(addr); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return ServeListener(ctx, ln, h, pprofOn)
}

// ServeListener is Serve on a listener the caller made: to learn the port
// of ":0" before serving, or to serve a socket handed over. It closes ln.
// It errors at once, closing ln, when pprof is on and ln is not on a
// loopback address.
func ServeListener(ctx context.Context, ln net.Listener, h *Handler, pprofOn bool) error {
	if pprofOn {
		if err := loopbackOnly(ln.Addr().String()); err != nil {
			_ = ln.Close()
			return err
		}
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 35 * time.Second, IdleTimeout: 60 * time.Second, MaxHeaderBytes: 1 << 10}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
		<-done
		return nil
	case err := <-done:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}

// loopbackOnly refuses an address pprof may not be served on.
func loopbackOnly(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	ip, perr := netip.ParseAddr(host)
	if err != nil || perr != nil || !ip.IsLoopback() {
		return fmt.Errorf("metrics: pprof on %q: only on a loopback address (127.0.0.1:port, [::1]:port)", addr)
	}
	return nil
}
