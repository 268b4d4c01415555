//go:build !js

package webtransport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	wt "github.com/quic-go/webtransport-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ghostwire/ghostwire/internal/longtest"
	"github.com/ghostwire/ghostwire/transport"
)

// rawTLS trusts s's certificate by hash, as Dial does.
func (s server) rawTLS() *tls.Config {
	return &tls.Config{NextProtos: []string{http3.NextProtoH3}, InsecureSkipVerify: true,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			return verifyPinned(raw, [][32]byte{s.hash}, time.Now())
		}}
}

// rawDial opens a session with quic-go's client itself, so a test can
// send what a Conn never sends. The session closes when t ends.
func (s server) rawDial(t *testing.T, hdr http.Header) (*http.Response, *wt.Session, error) {
	t.Helper()
	tr := &wt.Transport{TLSClientConfig: s.rawTLS(), QUICConfig: quicConfig(DefaultIdleTimeout)}
	ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
	defer cancel()
	resp, sess, err := tr.Dial(ctx, s.url, hdr)
	if err != nil {
		_ = tr.Close()
		return resp, nil, err
	}
	t.Cleanup(func() {
		_ = sess.CloseWithError(0, "")
		_ = tr.Close()
	})
	return resp, sess, nil
}

func TestOversizedDatagramsAreDroppedAndCounted(t *testing.T) {
	s := serve(t, ListenerOptions{})
	_, sess, err := s.rawDial(t, nil)
	require.NoError(t, err)
	srv := s.accept(t)
	for _, size := range []int{transport.MaxDatagramSize + 1, transport.MaxDatagramSize + 10} {
		require.NoError(t, sess.SendDatagram(make([]byte, size)), "quic-go carries %d bytes on loopback", size)
	}
	require.NoError(t, sess.SendDatagram([]byte("fits")))
	assert.Equal(t, "fits", string(receiveOne(t, srv)), "the datagram after oversized ones still arrives")
	assert.Equal(t, uint64(2), srv.Stats().Truncated, "each oversized datagram counted")
	assert.Equal(t, uint64(1), srv.Stats().Received)
}

func TestReceiveRateDropsAFlood(t *testing.T) {
	s := serve(t, ListenerOptions{Conn: Options{ReceiveRate: Rate{Datagrams: 10, Bytes: -1}}})
	_, sess, err := s.rawDial(t, nil)
	require.NoError(t, err)
	srv := s.accept(t)
	const flood = 30 // under quic-go's queue of 32, so none is lost before the limiter
	for i := range flood {
		require.NoError(t, sess.SendDatagram([]byte{byte(i)}))
	}
	settle(t, func() bool {
		buf := make([]byte, 8)
		for {
			if _, ok := srv.Receive(buf); !ok {
				break
			}
		}
		st := srv.Stats()
		return st.Received+st.Dropped == flood
	})
	st := srv.Stats()
	assert.GreaterOrEqual(t, st.Received, uint64(10), "a second's worth passes")
	assert.Less(t, st.Received, uint64(flood), "the rest is dropped")
	assert.Equal(t, flood-st.Received, st.Dropped)
}

// TestSessionFloodIsRefusedAndCounted opens more sessions than MaxSessions
// allows: the extra connections are closed at once, counted, and the
// Listener never holds more than MaxSessions.
func TestSessionFloodIsRefusedAndCounted(t *testing.T) {
	const maxSessions, flood = 3, 8
	s := serve(t, ListenerOptions{MaxSessions: maxSessions})
	ok := 0
	for range flood {
		if _, _, err := s.rawDial(t, nil); err == nil {
			ok++
		}
		assert.LessOrEqual(t, s.ln.Stats().Open, maxSessions)
	}
	assert.Equal(t, maxSessions, ok)
	settle(t, func() bool {
		st := s.ln.Stats()
		return st.Refused == flood-maxSessions && st.Pending == maxSessions
	})
}

func TestMaxPendingRefusesWith503(t *testing.T) {
	s := serve(t, ListenerOptions{MaxPending: 2})
	for range 2 {
		_, _, err := s.rawDial(t, nil)
		require.NoError(t, err)
	}
	resp, _, err := s.rawDial(t, nil)
	require.Error(t, err)
	require.NotNil(t, resp)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	settle(t, func() bool { st := s.ln.Stats(); return st.Pending == 2 && st.Refused == 1 })

	s.accept(t)
	_, _, err = s.rawDial(t, nil)
	require.NoError(t, err, "a slot frees once Accept takes a session")
}

func TestOriginIsChecked(t *testing.T) {
	s := serve(t, ListenerOptions{OriginPatterns: []string{"game.example:*"}})
	resp, _, err := s.rawDial(t, http.Header{"Origin": {"https://evil.example"}})
	require.Error(t, err)
	require.NotNil(t, resp)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Equal(t, uint64(1), s.ln.Stats().Failed)

	_, _, err = s.rawDial(t, http.Header{"Origin": {"http://GAME.example:8080"}})
	require.NoError(t, err, "a listed origin, whatever its case")
	_, _, err = s.rawDial(t, nil)
	require.NoError(t, err, "a client that sends no Origin")
	settle(t, func() bool { return s.ln.Stats().Pending == 2 })
}

// TestDatagramsBeforeASessionAreNeverDelivered: a QUIC connection that
// sends datagrams without opening a session gets nothing delivered, holds
// its slot only until SetupTimeout, is counted, and costs bounded memory.
func TestDatagramsBeforeASessionAreNeverDelivered(t *testing.T) {
	s := serve(t, ListenerOptions{SetupTimeout: 200 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
	defer cancel()
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	qc, err := quic.DialAddr(ctx, s.ln.Addr().String(), s.rawTLS(), quicConfig(DefaultIdleTimeout))
	require.NoError(t, err)
	defer qc.CloseWithError(0, "")
	settle(t, func() bool { return s.ln.Stats().Open == 1 })

	// Quarter stream IDs 0 and 1: the first request streams a session
	// would have. 4 MB in all, sent until the server cuts the connection.
	payload := make([]byte, 1000)
	sent := 0
	for i := 0; i < 4000; i++ {
		payload[0] = byte(i % 2)
		if qc.SendDatagram(payload) != nil {
			break
		}
		sent++
	}
	settle(t, func() bool { return s.ln.Stats().TimedOut == 1 && s.ln.Stats().Open == 0 })
	<-qc.Context().Done()
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)

	assert.Positive(t, sent)
	_, ok := s.ln.Accept()
	assert.False(t, ok, "no session, so nothing to accept")
	assert.Equal(t, ListenerStats{TimedOut: 1}, s.ln.Stats())
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	assert.Less(t, grown, int64(1<<20), "%d datagrams (%d KB) sent; the heap grew by %d KB", sent, sent, grown>>10)
}

// TestIdleSessionEnds: long tier, as QUIC's idle timer ends a quiet
// session after one to five seconds here (quic-go counts the idle time
// from the last packet, which its path probing sends for a while).
func TestIdleSessionEnds(t *testing.T) {
	longtest.Skip(t)
	s := serve(t, ListenerOptions{IdleTimeout: time.Second})
	_, sess, err := s.rawDial(t, nil)
	require.NoError(t, err)
	srv := s.accept(t)
	began := time.Now()
	// Neither end sends (a Send would draw an acknowledgement, which is
	// traffic), so only an idle timer can end the session.
	select {
	case <-srv.(*conn).ended:
	case <-time.After(settleTimeout):
		t.Fatalf("the session outlived IdleTimeout by %v", settleTimeout)
	}
	assert.GreaterOrEqual(t, time.Since(began), 900*time.Millisecond)
	assert.ErrorIs(t, srv.Send([]byte{1}), transport.ErrClosed)
	<-sess.Context().Done()
}

func TestListenerOptionsAreChecked(t *testing.T) {
	cert, err := NewDevCertificate(time.Hour)
	require.NoError(t, err)
	for _, c := range []struct {
		opts ListenerOptions
		want string
	}{
		{ListenerOptions{}, "webtransport: ListenerOptions.Certificate is empty: use NewDevCertificate or LoadCertificate"},
		{ListenerOptions{Certificate: cert, MaxSessions: MaxSessionsLimit + 1}, "webtransport: MaxSessions 4097: allowed range is 1..4096"},
		{ListenerOptions{Certificate: cert, MaxPending: -1}, "webtransport: MaxPending -1: allowed range is 1..4096"},
		{ListenerOptions{Certificate: cert, SetupTimeout: time.Millisecond}, "webtransport: SetupTimeout 1ms: allowed range is 100ms..1m"},
		{ListenerOptions{Certificate: cert, IdleTimeout: time.Hour}, "webtransport: IdleTimeout 1h0m0s: allowed range is 1s..5m"},
		{ListenerOptions{Certificate: cert, OriginPatterns: []string{"["}}, `webtransport: OriginPatterns "[": syntax error in pattern`},
		{ListenerOptions{Certificate: cert, Conn: Options{SendRate: Rate{Datagrams: 5}}},
			"webtransport: SendRate {Datagrams:5 Bytes:0 Burst:0}: Datagrams and Bytes must each be positive, or negative for no limit"},
		{ListenerOptions{Certificate: cert, Conn: Options{ReceiveRate: Rate{Datagrams: 5, Bytes: 5, Burst: 61}}},
			"webtransport: ReceiveRate.Burst 61 s: allowed range is 0..60"},
	} {
		_, err := NewListener(c.opts)
		require.EqualError(t, err, c.want)
	}
}

func TestCloseEndsEverySessionAndServe(t *testing.T) {
	s := serve(t, ListenerOptions{})
	client := s.dial(t, Options{})
	srv := s.accept(t)
	pending := s.dial(t, Options{})
	settle(t, func() bool { return s.ln.Stats().Pending == 1 })
	require.NoError(t, s.ln.Close())
	require.ErrorIs(t, s.ln.Close(), transport.ErrClosed)
	settle(t, func() bool {
		return client.Send([]byte{1}) == transport.ErrClosed && pending.Send([]byte{1}) == transport.ErrClosed &&
			srv.Send([]byte{1}) == transport.ErrClosed
	})
	_, ok := s.ln.Accept()
	assert.False(t, ok)
}
