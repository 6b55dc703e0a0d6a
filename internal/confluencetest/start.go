package confluencetest

import (
	"crypto/tls"
	"net/http/httptest"
	"testing"
)

// Running is a fake started on loopback with TLS.
type Running struct {
	*Server
	// HTTP is the loopback server; its URL is https://127.0.0.1:<port>.
	HTTP *httptest.Server
	// Cert is the server's self-signed certificate (its own root).
	Cert tls.Certificate
}

// Start serves the fake for o on 127.0.0.1 over TLS, with a certificate for
// names (and 127.0.0.1), until the test ends.
func Start(t testing.TB, o Options, names ...string) *Running {
	t.Helper()
	s := New(o)
	cert := Certificate(t, names...)
	srv := httptest.NewUnstartedServer(s)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return &Running{Server: s, HTTP: srv, Cert: cert}
}
