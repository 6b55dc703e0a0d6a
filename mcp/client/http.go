package client

import (
	"net/http"
	"net/url"
	"strings"
)

// secretClient returns the client for a server whose requests carry its
// configured headers: a copy of base whose redirects stay on the origin of
// the request that started them, so a header never travels to another
// host. setting names the configuration in the refusal.
//
// It is the one place to switch to credhttp.Client once that package is on
// main.
func secretClient(base *http.Client, setting string, origin *url.URL, headers map[string]string) *http.Client {
	c := &http.Client{}
	if base != nil {
		*c = *base
	}
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c.Transport = &headerTransport{base: rt, origin: origin, headers: headers}
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return &redirectError{setting: setting, reason: "stopped after 10 redirects"}
		}
		if !sameOrigin(req.URL, via[0].URL) {
			return &redirectError{setting: setting, reason: "the server redirected to " + originOf(req.URL) + ", another origin; the request was not sent there"}
		}
		return nil
	}
	return c
}

// redirectError refuses a redirect to another origin.
type redirectError struct{ setting, reason string }

func (e *redirectError) Error() string {
	return "the MCP server " + e.setting + ": " + e.reason + "; check its URL"
}

func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Host, b.Host)
}

func originOf(u *url.URL) string { return u.Scheme + "://" + u.Host }

// headerTransport sets the configured headers on every request to the
// server's origin, and on no other.
type headerTransport struct {
	base    http.RoundTripper
	origin  *url.URL
	headers map[string]string
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) == 0 || t.origin == nil || !sameOrigin(req.URL, t.origin) {
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
