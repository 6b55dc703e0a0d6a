package client

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/stewardhq/steward/credhttp"
)

// secretClient returns the client for a server whose requests carry its
// configured headers: credhttp's copy of base, whose redirects stay on the
// origin of the request that started them, so a header never travels to
// another host. setting names the configuration in the refusal.
func secretClient(base *http.Client, setting string, origin *url.URL, headers map[string]string) *http.Client {
	c := credhttp.Client(base, setting)
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c.Transport = &headerTransport{base: rt, origin: origin, headers: headers}
	return c
}

// headerTransport sets the configured headers on every request to the
// server's origin, and on no other.
type headerTransport struct {
	base    http.RoundTripper
	origin  *url.URL
	headers map[string]string
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) == 0 || t.origin == nil || credhttp.Origin(req.URL) != credhttp.Origin(t.origin) {
		return t.base.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	for k, v := range t.headers {
		// A header that expands to nothing is not sent, as in Crush.
		if strings.TrimSpace(v) != "" {
			r.Header.Set(k, v)
		}
	}
	return t.base.RoundTrip(r)
}
