package websearch

import (
	"context"
	"net"
	"net/http"
	"testing"
)

// loopbackClient is the HTTP client for the search services: it dials only
// loopback and fails the test for anything else.
func loopbackClient(t testing.TB) *http.Client {
	tr := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
				t.Errorf("a search service request went to %s; only loopback test servers may be asked", addr)
				return nil, &net.OpError{Op: "dial", Net: network, Err: net.ErrClosed}
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}
