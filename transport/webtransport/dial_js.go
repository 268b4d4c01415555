//go:build js && wasm

package webtransport

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall/js"

	"github.com/ghostwire/ghostwire/transport"
)

// Dial opens a WebTransport session to url (https://host:port/path) through
// the browser's WebTransport and returns it as a transport.Conn. ctx bounds
// the handshake only; the session lasts until either end closes it. The
// browser needs a secure context (an https:// page, or one served from
// 127.0.0.1 or localhost); elsewhere, or in a browser without
// WebTransport, Dial fails at once, so the caller can fall back to
// WebSocket. opts.CertificateHashes become serverCertificateHashes;
// opts.Header is ignored. It returns the handshake's error, naming url.
func Dial(ctx context.Context, url string, opts DialOptions) (transport.Conn, error) {
	if err := opts.Conn.validate(); err != nil {
		return nil, err
	}
	ctor := js.Global().Get("WebTransport")
	if ctor.Type() != js.TypeFunction {
		return nil, fmt.Errorf("webtransport: dial %s: this browser has no WebTransport (or the page is not a secure context)", url)
	}
	init := js.Global().Get("Object").New()
	if len(opts.CertificateHashes) > 0 {
		hashes := js.Global().Get("Array").New()
		for _, h := range opts.CertificateHashes {
			v := js.Global().Get("Uint8Array").New(len(h))
			js.CopyBytesToJS(v, h[:])
			e := js.Global().Get("Object").New()
			e.Set("algorithm", "sha-256")
			e.Set("value", v)
			hashes.Call("push", e)
		}
		init.Set("serverCertificateHashes", hashes)
	}
	var wt js.Value
	if err := catch(func() { wt = ctor.New(url, init) }); err != nil {
		return nil, fmt.Errorf("webtransport: dial %s: %w", url, err)
	}
	ready := make(chan error, 1)
	go func() {
		_, err := await(wt.Get("ready"))
		ready <- err
	}()
	select {
	case err := <-ready:
		if err != nil {
			return nil, fmt.Errorf("webtransport: dial %s: %w", url, err)
		}
	case <-ctx.Done():
		wt.Call("close")
		return nil, fmt.Errorf("webtransport: dial %s: %w", url, ctx.Err())
	}
	s := &browserSession{
		wt:     wt,
		reader: wt.Get("datagrams").Get("readable").Call("getReader"),
		writer: wt.Get("datagrams").Get("writable").Call("getWriter"),
	}
	return newConn(s, opts.Conn, nil), nil
}

// browserSession is a session over the browser's WebTransport.
type browserSession struct {
	wt, reader, writer js.Value
	once               sync.Once
}

// send hands p to the browser, which copies it and sends it, or drops it
// without telling when its own queue is full or the datagram too long for
// the path (write() resolves all the same). Once the session is over,
// write() rejects; the reader sees the end and records it.
func (s *browserSession) send(p []byte) error {
	v := js.Global().Get("Uint8Array").New(len(p))
	js.CopyBytesToJS(v, p)
	return catch(func() { s.writer.Call("write", v).Call("catch", ignore) })
}

func (s *browserSession) receive() ([]byte, error) {
	r, err := await(s.reader.Call("read"))
	if err != nil {
		return nil, err
	}
	if r.Get("done").Bool() {
		return nil, transport.ErrClosed
	}
	v := r.Get("value")
	p := make([]byte, v.Get("byteLength").Int())
	js.CopyBytesToGo(p, v)
	return p, nil
}

func (s *browserSession) close() {
	s.once.Do(func() {
		_ = catch(func() { s.wt.Call("close") }) // throws only when already closed
	})
}

// ignore is a rejection handler that drops the reason: a datagram write
// that fails needs no handling, and an unhandled rejection would log.
var ignore = js.FuncOf(func(js.Value, []js.Value) any { return nil })

// catch runs f and returns the JavaScript exception it threw, if any.
func catch(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(js.Error); ok {
				err = e
				return
			}
			panic(r)
		}
	}()
	f()
	return nil
}

// await blocks until promise settles and returns its value, or an error
// holding the reason it was rejected with. The page's event loop runs
// meanwhile (a goroutine blocked here lets it).
func await(promise js.Value) (js.Value, error) {
	type result struct {
		v   js.Value
		err error
	}
	done := make(chan result, 1)
	var then, fail js.Func
	then = js.FuncOf(func(_ js.Value, args []js.Value) any {
		done <- result{v: arg(args)}
		return nil
	})
	fail = js.FuncOf(func(_ js.Value, args []js.Value) any {
		reason := arg(args)
		msg := reason.Call("toString").String()
		done <- result{err: errors.New(msg)}
		return nil
	})
	promise.Call("then", then, fail)
	r := <-done
	then.Release()
	fail.Release()
	return r.v, r.err
}

// arg returns the first of a callback's arguments, or undefined.
func arg(args []js.Value) js.Value {
	if len(args) == 0 {
		return js.Undefined()
	}
	return args[0]
}
