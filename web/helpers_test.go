package web

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// fakeResolver answers from a table. Each host has a list of successive
// answers; the last one repeats. Unknown hosts are "no such host".
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][][]string
	calls   map[string]int
}

func newResolver(m map[string][]string) *fakeResolver {
	r := &fakeResolver{answers: map[string][][]string{}, calls: map[string]int{}}
	for h, ips := range m {
		r.answers[h] = [][]string{ips}
	}
	return r
}

// sequence sets successive answers for host (for rebinding tests).
func (r *fakeResolver) sequence(host string, answers ...[]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answers[host] = answers
}

func (r *fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seq, ok := r.answers[host]
	n := r.calls[host]
	r.calls[host] = n + 1
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	if n >= len(seq) {
		n = len(seq) - 1
	}
	var out []net.IPAddr
	for _, s := range seq[n] {
		ip := net.ParseIP(s)
		if ip == nil {
			panic("bad test IP " + s)
		}
		out = append(out, net.IPAddr{IP: ip})
	}
	return out, nil
}

func (r *fakeResolver) count(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[host]
}

// router is a dial hook for a made-up network: it routes the listed
// checked addresses ("ip:port") to loopback test servers and fails the test
// for any other address, so no traffic leaves loopback and a refused
// target that was dialed is caught.
type router struct {
	t      testing.TB
	mu     sync.Mutex
	routes map[string]string // "ip" → loopback host:port is chosen by port
	dialed []string
}

func newRouter(t testing.TB) *router { return &router{t: t, routes: map[string]string{}} }

// route sends connections for ip on the test server's port to the server.
func (r *router) route(ip string, serverURL string) {
	u, err := url.Parse(serverURL)
	if err != nil {
		r.t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.routes[net.JoinHostPort(netip.MustParseAddr(ip).String(), u.Port())] = u.Host
}

func (r *router) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	r.mu.Lock()
	target, ok := r.routes[addr]
	r.dialed = append(r.dialed, addr)
	r.mu.Unlock()
	if !ok {
		r.t.Errorf("router: a connection to %s %s was attempted; only routed, checked addresses may be dialed", network, addr)
		return nil, &net.OpError{Op: "dial", Net: network, Err: net.ErrClosed}
	}
	var d net.Dialer
	return d.DialContext(ctx, network, target)
}

func (r *router) dials() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.dialed...)
}

// portOf returns the port of a test server URL.
func portOf(t testing.TB, serverURL string) string {
	u, err := url.Parse(serverURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

// hostURL rewrites a test server URL to use host instead of 127.0.0.1.
func hostURL(t testing.TB, serverURL, host, path string) string {
	return "http://" + net.JoinHostPort(host, portOf(t, serverURL)) + path
}

func allowAll(string) bool { return true }

func allowOnly(hosts ...string) func(string) bool {
	return func(h string) bool {
		for _, x := range hosts {
			if strings.EqualFold(x, h) {
				return true
			}
		}
		return false
	}
}
