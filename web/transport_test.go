package web

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
)

type mapResolver map[string]string

func (m mapResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	ip, ok := m[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []net.IPAddr{{IP: net.ParseIP(ip)}}, nil
}

// ServiceTransport resolves and dials through the injected hooks, which is
// how tests keep a configured service on loopback, and trusts the given
// roots.
func TestServiceTransportUsesTheInjectedNetwork(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello "+r.Host) }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	var mu sync.Mutex
	var dialed []string
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		dialed = append(dialed, addr)
		mu.Unlock()
		var d net.Dialer
		return d.DialContext(ctx, network, u.Host)
	}
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	tr := ServiceTransport(ServiceOptions{Resolver: mapResolver{"api.example.com": "10.9.8.7"}, Dial: dial, TLSConfig: &tls.Config{RootCAs: pool}})
	c := &http.Client{Transport: tr}
	resp, err := c.Get("https://api.example.com:" + u.Port() + "/x")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hello api.example.com:"+u.Port() || len(dialed) != 1 || dialed[0] != "10.9.8.7:"+u.Port() {
		t.Fatalf("%q, dialed %v", b, dialed)
	}
	if tr.Proxy != nil {
		t.Error("an injected network must not go through a proxy")
	}
	if _, err := c.Get("https://unknown.example.com/"); err == nil {
		t.Fatal("an unknown name was reached")
	} else if len(dialed) != 1 {
		t.Fatalf("an unknown name was dialed: %v", dialed)
	}
}
