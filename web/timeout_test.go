package web

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestConnectTimeout proves the connect timeout fires on its own, well
// before the retrieval's total timeout. The injected dialer never touches
// the network: it blocks until its context is done, as a dial to a host
// that drops SYN packets would.
func TestConnectTimeout(t *testing.T) {
	const connect = 200 * time.Millisecond
	var mu sync.Mutex
	var dialed []string
	var budget time.Duration
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		dialed = append(dialed, addr)
		if d, ok := ctx.Deadline(); ok {
			budget = time.Until(d)
		}
		mu.Unlock()
		<-ctx.Done()
		return nil, &net.OpError{Op: "dial", Net: network, Err: ctx.Err()}
	}
	res := newResolver(map[string][]string{"slow.example": {publicIP}})
	s := NewService(ServiceOptions{Resolver: res, Dial: dial, ConnectTimeout: connect, HeaderTimeout: 20 * time.Second})
	start := time.Now()
	_, err := s.Retrieve(context.Background(), "http://slow.example/page", Options{Policy: PublicOnly, Timeout: 20 * time.Second})
	elapsed := time.Since(start)
	if !errors.Is(err, ErrConnectTimeout) || !errors.Is(err, ErrTimeout) {
		t.Fatalf("error %v, want ErrConnectTimeout wrapped in ErrTimeout", err)
	}
	if errors.Is(err, ErrHeaderTimeout) {
		t.Errorf("error %v also claims a header timeout", err)
	}
	if want := "connecting to the server timed out after 200ms"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q, want it to say %q", err, want)
	}
	if elapsed < connect || elapsed > 10*connect {
		t.Errorf("failed after %v, want about %v (the total timeout is 20s)", elapsed, connect)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(dialed) == 0 || dialed[0] != net.JoinHostPort(publicIP, "80") {
		t.Errorf("dialed %v, want the checked address", dialed)
	}
	if budget <= 0 || budget > connect {
		t.Errorf("the dialer got a deadline %v away, want at most the connect timeout %v", budget, connect)
	}
}

// TestConnectTimeoutEachAddress: every checked address gets its own
// connect timeout, so a host with one dead address still loads through
// the next one.
func TestConnectTimeoutEachAddress(t *testing.T) {
	const connect = 150 * time.Millisecond
	srv := newLoopbackHTML(t, "<html><head><title>Up</title></head><body><p>Reached through the second address.</p></body></html>")
	rt := newRouter(t)
	rt.route("93.184.216.35", srv)
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if strings.HasPrefix(addr, publicIP+":") {
			<-ctx.Done()
			return nil, &net.OpError{Op: "dial", Net: network, Err: ctx.Err()}
		}
		return rt.dial(ctx, network, addr)
	}
	res := newResolver(map[string][]string{"twoaddr.example": {publicIP, "93.184.216.35"}})
	s := NewService(ServiceOptions{Resolver: res, Dial: dial, ConnectTimeout: connect})
	start := time.Now()
	p, err := s.Retrieve(context.Background(), hostURL(t, srv, "twoaddr.example", "/"), Options{Policy: PublicOnly, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Markdown, "second address") {
		t.Errorf("markdown %q", p.Markdown)
	}
	if e := time.Since(start); e < connect || e > 10*connect {
		t.Errorf("took %v, want a little over one connect timeout (%v)", e, connect)
	}
}

// TestHeaderTimeout: a loopback server that accepts the connection and
// reads the request but never answers trips the header timeout, well
// before the total timeout.
func TestHeaderTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var conns []net.Conn
	var mu sync.Mutex
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func() { _, _ = c.Read(make([]byte, 4096)) }() // read the request, never answer
		}
	}()
	defer func() {
		ln.Close()
		wg.Wait()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()
	const header = 300 * time.Millisecond
	s := NewService(ServiceOptions{HeaderTimeout: header, ConnectTimeout: 5 * time.Second})
	start := time.Now()
	_, err = s.Retrieve(context.Background(), "http://"+ln.Addr().String()+"/", Options{Policy: UserChosen, Timeout: 20 * time.Second})
	elapsed := time.Since(start)
	if !errors.Is(err, ErrHeaderTimeout) || !errors.Is(err, ErrTimeout) || errors.Is(err, ErrConnectTimeout) {
		t.Fatalf("error %v, want ErrHeaderTimeout wrapped in ErrTimeout", err)
	}
	if !strings.Contains(err.Error(), "after 300ms") {
		t.Errorf("error %q does not name the header timeout", err)
	}
	if elapsed < header || elapsed > 10*header {
		t.Errorf("failed after %v, want about %v (the total timeout is 20s)", elapsed, header)
	}
}

// TestTotalTimeoutStillWins: when the total timeout is the shorter one,
// the error names it, not the connect timeout.
func TestTotalTimeoutStillWins(t *testing.T) {
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		<-ctx.Done()
		return nil, &net.OpError{Op: "dial", Net: network, Err: ctx.Err()}
	}
	res := newResolver(map[string][]string{"slow.example": {publicIP}})
	s := NewService(ServiceOptions{Resolver: res, Dial: dial, ConnectTimeout: 10 * time.Second})
	_, err := s.Retrieve(context.Background(), "http://slow.example/", Options{Policy: PublicOnly, Timeout: time.Second})
	if !errors.Is(err, ErrTimeout) || errors.Is(err, ErrConnectTimeout) || !strings.Contains(err.Error(), "after 1 second") {
		t.Fatalf("error %v, want the total timeout after 1 second", err)
	}
}

// newLoopbackHTML starts a loopback server that answers every request with
// doc and returns its URL.
func newLoopbackHTML(t *testing.T, doc string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(doc))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
