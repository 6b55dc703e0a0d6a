package llmtest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/llm"
)

// ReplayServer is a loopback server that answers the recorded exchanges in
// order and keeps what the client sent.
type ReplayServer struct {
	*httptest.Server
	mu        sync.Mutex
	exchanges []Exchange
	bodies    [][]byte
	headers   []http.Header
	paths     []string
}

// NewReplayServer starts a ReplayServer for exchanges; the test's cleanup
// closes it. A request beyond the last exchange is answered 418 with a
// provider-style error.
func NewReplayServer(t testing.TB, exchanges []Exchange) *ReplayServer {
	t.Helper()
	rs := &ReplayServer{exchanges: exchanges}
	rs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rs.mu.Lock()
		n := len(rs.bodies)
		rs.bodies = append(rs.bodies, body)
		rs.headers = append(rs.headers, r.Header.Clone())
		rs.paths = append(rs.paths, r.URL.Path)
		rs.mu.Unlock()
		if n >= len(rs.exchanges) {
			http.Error(w, `{"error":{"message":"no more recorded answers"}}`, http.StatusTeapot)
			return
		}
		ex := rs.exchanges[n]
		ct := ex.ContentType
		if ct == "" {
			ct = "text/event-stream"
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(ex.Status)
		w.Write(ex.Body)
	}))
	t.Cleanup(rs.Close)
	return rs
}

// Body returns the body of the i-th request, nil when fewer were sent.
func (rs *ReplayServer) Body(i int) []byte {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if i >= len(rs.bodies) {
		return nil
	}
	return rs.bodies[i]
}

// Header returns the headers of the i-th request, nil when fewer were
// sent.
func (rs *ReplayServer) Header(i int) http.Header {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if i >= len(rs.headers) {
		return nil
	}
	return rs.headers[i]
}

// Path returns the URL path of the i-th request, "" when fewer were sent.
func (rs *ReplayServer) Path(i int) string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if i >= len(rs.paths) {
		return ""
	}
	return rs.paths[i]
}

// Bodies returns the bodies of all requests so far.
func (rs *ReplayServer) Bodies() [][]byte {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return append([][]byte(nil), rs.bodies...)
}

// HangingServer starts a loopback server that answers every request with
// an event stream of head and then sends nothing until the test ends.
func HangingServer(t testing.TB, head string) *httptest.Server {
	t.Helper()
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(head))
		w.(http.Flusher).Flush()
		select {
		case <-done:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv
}

// LoopbackTransport returns a transport that tries once, never waits, and
// only ever dials loopback; any other address fails the test.
func LoopbackTransport(t testing.TB) *llm.Transport {
	t.Helper()
	d := &net.Dialer{}
	return &llm.Transport{
		Client: &http.Client{Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				host, _, err := net.SplitHostPort(addr)
				if err != nil {
					return nil, err
				}
				ip := net.ParseIP(host)
				if ip == nil || !ip.IsLoopback() {
					t.Errorf("a connection to %s was attempted; tests only reach loopback", addr)
					return nil, fmt.Errorf("refused non-loopback address %s", addr)
				}
				return d.DialContext(ctx, network, addr)
			},
		}},
		MaxAttempts: 1,
		Sleep:       func(context.Context, time.Duration) error { return nil },
	}
}
