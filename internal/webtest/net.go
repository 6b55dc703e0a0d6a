package webtest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/web"
)

// Net is a made-up network for one test: a resolver that maps made-up
// names to made-up addresses, and a dial hook that routes those addresses
// to one loopback test server. A dial of any other address, or of a
// loopback one, fails the test, so no traffic ever leaves loopback.
type Net struct {
	t             testing.TB
	srv           *httptest.Server
	port          string
	scheme        string // http, or https for NewTLSNet
	mu            sync.Mutex
	hosts         map[string]string // name → IP
	looked        map[string]int
	dialed        []string
	refusePrivate bool
}

// NewNet starts the test server for h (the test's cleanup closes it) and
// returns a network with no hosts yet.
func NewNet(t testing.TB, h http.Handler) *Net {
	t.Helper()
	return start(t, httptest.NewServer(h), "http")
}

// NewTLSNet is NewNet with an HTTPS test server, whose certificate is
// valid for example.com and its subdomains; Service trusts it.
func NewTLSNet(t testing.TB, h http.Handler) *Net {
	t.Helper()
	return start(t, httptest.NewTLSServer(h), "https")
}

// NewNetFor returns a network for a test server the caller started on
// loopback (and closes), e.g. one with a certificate of its own for the
// made-up names; https when srv has TLS.
func NewNetFor(t testing.TB, srv *httptest.Server) *Net {
	t.Helper()
	if srv.TLS != nil {
		return start(t, srv, "https")
	}
	return start(t, srv, "http")
}

func start(t testing.TB, srv *httptest.Server, scheme string) *Net {
	t.Helper()
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
		t.Fatalf("test server is not on loopback: %s", srv.URL)
	}
	return &Net{t: t, srv: srv, port: u.Port(), scheme: scheme, hosts: map[string]string{}, looked: map[string]int{}}
}

// RefusePrivateDials makes a dial of a private address fail the test too,
// for code that must never reach a private host even when it resolves.
func (n *Net) RefusePrivateDials() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.refusePrivate = true
}

// Host adds a made-up name with its made-up address.
func (n *Net) Host(name, ip string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.hosts[name] = ip
}

// URL is an address on a made-up host, served by the test server.
func (n *Net) URL(host, path string) string {
	return n.scheme + "://" + net.JoinHostPort(host, n.port) + path
}

// Port is the test server's port, which every made-up host shares.
func (n *Net) Port() string { return n.port }

// LookupIPAddr resolves the made-up names; any other is "no such host".
func (n *Net) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.looked[host]++
	ip, ok := n.hosts[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []net.IPAddr{{IP: net.ParseIP(ip)}}, nil
}

// Dial connects a made-up address to the test server; any other address
// fails the test and is refused.
func (n *Net) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	ap, err := netip.ParseAddrPort(addr)
	n.mu.Lock()
	n.dialed = append(n.dialed, addr)
	known := false
	if err == nil {
		for _, ip := range n.hosts {
			if netip.MustParseAddr(ip) == ap.Addr().Unmap() && ap.Port() != 0 {
				known = true
			}
		}
	}
	refusePrivate := n.refusePrivate
	n.mu.Unlock()
	if !known || ap.Addr().IsLoopback() || (refusePrivate && ap.Addr().IsPrivate()) {
		n.t.Errorf("a connection to %s %s was attempted; only the made-up hosts of the test may be dialed", network, addr)
		return nil, &net.OpError{Op: "dial", Net: network, Err: net.ErrClosed}
	}
	var d net.Dialer
	return d.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", n.port))
}

// Lookups returns how often host was resolved.
func (n *Net) Lookups(host string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.looked[host]
}

// Dials returns how many connections were attempted.
func (n *Net) Dials() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.dialed)
}

// Now is the fixed clock of the services Service returns.
func Now() time.Time { return time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC) }

// serviceOptions resolve and dial through n and trust the test server.
func (n *Net) serviceOptions() web.ServiceOptions {
	o := web.ServiceOptions{
		Resolver: n,
		Dial:     n.Dial,
		Logger:   Discard(),
		Now:      Now,
	}
	if n.scheme == "https" {
		pool := x509.NewCertPool()
		pool.AddCert(n.srv.Certificate())
		o.TLSConfig = &tls.Config{RootCAs: pool}
	}
	return o
}

// Client returns an HTTP client for configured services (web.ServiceTransport)
// that resolves and dials through n and trusts the test server, for code
// that talks to a service's API rather than reading pages.
func (n *Net) Client() *http.Client {
	return &http.Client{Transport: web.ServiceTransport(n.serviceOptions())}
}

// Service returns a web.Service that resolves and dials through n, logs
// nowhere, whose clock stands at Now and which, for NewTLSNet, trusts the
// test server's certificate.
func (n *Net) Service() *web.Service {
	return web.NewService(n.serviceOptions())
}
