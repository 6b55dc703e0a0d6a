package webpage

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/guard"
	"github.com/stewardhq/steward/web"
)

// netSim is a made-up network for one test: a resolver that maps made-up
// names to made-up addresses, and a dial hook that routes those addresses
// to one loopback test server. A dial of any other address fails the test,
// so no traffic ever leaves loopback.
type netSim struct {
	t      testing.TB
	srv    *httptest.Server
	port   string
	scheme string // http, or https for newNetSimTLS
	mu     sync.Mutex
	hosts  map[string]string // name → IP
	looked map[string]int
	dialed []string
}

func newNetSim(t testing.TB, h http.Handler) *netSim {
	t.Helper()
	return startNetSim(t, httptest.NewServer(h), "http")
}

// newNetSimTLS is newNetSim with an HTTPS test server, whose certificate
// is valid for example.com and its subdomains.
func newNetSimTLS(t testing.TB, h http.Handler) *netSim {
	t.Helper()
	return startNetSim(t, httptest.NewTLSServer(h), "https")
}

func startNetSim(t testing.TB, srv *httptest.Server, scheme string) *netSim {
	t.Helper()
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
		t.Fatalf("test server is not on loopback: %s", srv.URL)
	}
	return &netSim{t: t, srv: srv, port: u.Port(), scheme: scheme, hosts: map[string]string{}, looked: map[string]int{}}
}

// host adds a made-up name with its made-up address.
func (n *netSim) host(name, ip string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.hosts[name] = ip
}

// url is an address on a made-up host, served by the test server.
func (n *netSim) url(host, path string) string {
	return n.scheme + "://" + net.JoinHostPort(host, n.port) + path
}

func (n *netSim) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.looked[host]++
	ip, ok := n.hosts[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []net.IPAddr{{IP: net.ParseIP(ip)}}, nil
}

func (n *netSim) dial(ctx context.Context, network, addr string) (net.Conn, error) {
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
	n.mu.Unlock()
	if !known || ap.Addr().IsLoopback() {
		n.t.Errorf("a connection to %s %s was attempted; only the made-up hosts of the test may be dialed", network, addr)
		return nil, &net.OpError{Op: "dial", Net: network, Err: net.ErrClosed}
	}
	var d net.Dialer
	return d.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", n.port))
}

// lookups returns how often host was resolved.
func (n *netSim) lookups(host string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.looked[host]
}

// dials returns how many connections were opened.
func (n *netSim) dials() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.dialed)
}

func (n *netSim) service() *web.Service {
	o := web.ServiceOptions{
		Resolver: n,
		Dial:     n.dial,
		Logger:   discard(),
		Now:      func() time.Time { return time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC) },
	}
	if n.scheme == "https" {
		pool := x509.NewCertPool()
		pool.AddCert(n.srv.Certificate())
		o.TLSConfig = &tls.Config{RootCAs: pool}
	}
	return web.NewService(o)
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// reports collects what the filter reports.
type reports struct {
	mu  sync.Mutex
	all []guard.Report
}

func (r *reports) Report(rep guard.Report) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, rep)
}

func (r *reports) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.all)
}

func newFilter(r *reports) *guard.Filter {
	return guard.New(guard.Options{Reporter: r, Logger: discard()})
}

// longText is readable page text of about n characters.
func longText(n int) string {
	s := "The harbour authority published its annual report on shipping volumes, dredging work and the new ferry timetable. "
	return strings.Repeat(s, n/len(s)+1)[:n]
}
