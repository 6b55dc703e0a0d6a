package client

import (
	"net/url"
	"strings"

	"github.com/stewardhq/steward/redact"
)

// newRedactor returns the secrets of one server for package redact, which
// removes them from every message Steward makes of what went wrong: the
// values of its environment and headers (a header such as "Bearer abc" also
// by its token alone, which a server may quote) and the query of its URL
// and each of its parameters, which may carry a token.
func newRedactor(env, headers map[string]string, rawURL string) *redact.Set {
	r := &redact.Set{}
	add := func(v string) {
		v = strings.TrimSpace(v)
		r.Add(v)
		if _, tok, ok := strings.Cut(v, " "); ok {
			r.Add(tok)
		}
	}
	for _, v := range env {
		add(v)
	}
	for _, v := range headers {
		add(v)
	}
	if u, err := url.Parse(rawURL); err == nil && u.RawQuery != "" {
		add(u.RawQuery)
		for _, vs := range u.Query() {
			for _, v := range vs {
				add(v)
			}
		}
	}
	return r
}
