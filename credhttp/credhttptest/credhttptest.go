// Package credhttptest helps test that a service holding a secret never
// follows a redirect to another origin: a loopback server that redirects
// every request to a second loopback address, which records whatever
// reaches it.
//
// Both servers listen on loopback only (127.0.0.1 and 127.0.0.2); nothing
// else is contacted.
package credhttptest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Leak is one request that reached the second server.
type Leak struct {
	Method, Path string
	Header       http.Header
	Body         string
}

// Redirector is a pair of loopback servers: the first answers every request
// with a redirect to the same path and query on the second, which records
// it and answers 200 with an empty JSON object.
type Redirector struct {
	// URL is the first server's base address, to configure as the
	// service's base URL.
	URL string
	// Target is the second server's base address, where nothing may
	// arrive.
	Target string
	// Status is the redirect status the first server answers with.
	Status int

	mu     sync.Mutex
	leaks  []Leak
	served int
}

// NewRedirector starts the two servers for status (301, 302, 303, 307 or
// 308) and stops them when the test ends. The second server listens on
// 127.0.0.2, so it is another origin even when the ports matched; the test
// is skipped where that address cannot be bound.
func NewRedirector(t testing.TB, status int) *Redirector {
	t.Helper()
	r := &Redirector{Status: status}
	second := newServer(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		r.mu.Lock()
		r.leaks = append(r.leaks, Leak{Method: req.Method, Path: req.URL.RequestURI(), Header: req.Header.Clone(), Body: string(b)})
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "{}")
	}))
	r.Target = second.URL
	first := newServer(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.served++
		r.mu.Unlock()
		_, _ = io.Copy(io.Discard, io.LimitReader(req.Body, 1<<20))
		http.Redirect(w, req, r.Target+req.URL.RequestURI(), status)
	}))
	r.URL = first.URL
	return r
}

func newServer(t testing.TB, ip string, h http.Handler) *httptest.Server {
	t.Helper()
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Skipf("credhttptest: cannot listen on %s: %v", ip, err)
	}
	s := httptest.NewUnstartedServer(h)
	s.Listener.Close()
	s.Listener = l
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// Requests is how many requests reached the first server.
func (r *Redirector) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.served
}

// Leaks returns the requests that reached the second server.
func (r *Redirector) Leaks() []Leak {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Leak(nil), r.leaks...)
}

// AssertNothingLeaked fails the test when any request reached the second
// server, listing what it received, and when the first server was never
// asked (which would make the check prove nothing).
func (r *Redirector) AssertNothingLeaked(t testing.TB) {
	t.Helper()
	if r.Requests() == 0 {
		t.Errorf("credhttptest: the redirecting server at %s was never asked; the test proves nothing", r.URL)
	}
	for _, l := range r.Leaks() {
		var hs []string
		for k, v := range l.Header {
			hs = append(hs, fmt.Sprintf("%s: %s", k, strings.Join(v, ", ")))
		}
		t.Errorf("credhttptest: after a %d redirect, %s %s reached %s with headers [%s] and a body of %d bytes",
			r.Status, l.Method, l.Path, r.Target, strings.Join(hs, "; "), len(l.Body))
	}
}

// Statuses returns the redirect statuses every service is tested with.
func Statuses() []int {
	return []int{
		http.StatusMovedPermanently,
		http.StatusFound,
		http.StatusSeeOther,
		http.StatusTemporaryRedirect,
		http.StatusPermanentRedirect,
	}
}

// SameOrigin starts one loopback server that redirects requests for from
// to to on itself (status 307, so a body is resent) and serves to with h.
// It returns the server's base address.
func SameOrigin(t testing.TB, from, to string, h http.Handler) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc(from, func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, io.LimitReader(req.Body, 1<<20))
		http.Redirect(w, req, to, http.StatusTemporaryRedirect)
	})
	mux.Handle(to, h)
	s := newServer(t, "127.0.0.1", mux)
	return s.URL
}
