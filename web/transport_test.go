package web

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
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

// LocalOnlyDial connects a local service to its loopback and private
// addresses and refuses any other before it is dialed: an answer that
// mixes in a public address only ever dials the private one, and a name
// that now answers only public or link-local addresses fails with a
// *NotLocalError naming the address, the hook never called.
func TestLocalOnlyDialRefusesAnAddressThatIsNotLocal(t *testing.T) {
	res := newResolver(map[string][]string{
		"gpu.corp.example":    {"93.184.215.14", "10.20.30.40"},
		"moved.corp.example":  {"93.184.215.14"},
		"meta.corp.example":   {"169.254.169.254"},
		"mapped.corp.example": {"::ffff:93.184.215.14"},
	})
	var dialed []string
	dial := func(_ context.Context, _, addr string) (net.Conn, error) {
		dialed = append(dialed, addr)
		if addr != "10.20.30.40:8000" {
			t.Errorf("dialed %s, which is not local", addr)
		}
		c1, c2 := net.Pipe()
		c2.Close()
		return c1, nil
	}
	d := LocalOnlyDial(ServiceOptions{Resolver: res, Dial: dial})
	c, err := d(context.Background(), "tcp", "gpu.corp.example:8000")
	if err != nil {
		t.Fatalf("the private address: %v", err)
	}
	c.Close()
	for _, host := range []string{"moved.corp.example", "meta.corp.example", "mapped.corp.example", "93.184.215.14", "[2001:4860::8888]"} {
		_, err := d(context.Background(), "tcp", host+":8000")
		var nl *NotLocalError
		if !errors.As(err, &nl) || !strings.Contains(err.Error(), "which is neither loopback nor private") || !nl.Permanent() {
			t.Errorf("%s: %v", host, err)
		}
	}
	if len(dialed) != 1 {
		t.Errorf("dialed %v", dialed)
	}
}

// Without a dial hook, LocalOnlyDial's own dialer checks the socket's
// address once more right before connecting: loopback connects, anything
// else is refused by the Control function, which is asked directly here
// (no socket is opened for the public address).
func TestLocalOnlyDialControlsTheSocket(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "local") }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	tr := &http.Transport{DialContext: LocalOnlyDial(ServiceOptions{Resolver: mapResolver{"box.localhost": "127.0.0.1"}})}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get("http://box.localhost:" + u.Port() + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "local" {
		t.Fatalf("%q", b)
	}
	for addr, ok := range map[string]bool{"127.0.0.1:80": true, "[::1]:80": true, "10.1.2.3:80": true, "192.168.1.5:80": true,
		"93.184.215.14:80": false, "169.254.169.254:80": false, "[2001:4860::8888]:80": false, "0.0.0.0:80": false, "nonsense": false} {
		if err := localOnlyControl("tcp", addr, nil); (err == nil) != ok {
			t.Errorf("%s: %v, want allowed %v", addr, err, ok)
		}
	}
}
