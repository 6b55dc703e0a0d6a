package client

import (
	"net/url"
	"sort"
	"strings"
)

// redactor removes a server's secret values from every message Steward
// makes of what went wrong.
type redactor struct {
	secrets []string
}

// newRedactor takes the values of the environment and headers and the
// query of the URL, whose parameters may carry a token.
func newRedactor(env, headers map[string]string, rawURL string) *redactor {
	r := &redactor{}
	add := func(v string) {
		v = strings.TrimSpace(v)
		if len(v) < 4 {
			return
		}
		r.secrets = append(r.secrets, v)
		// A header such as "Bearer abc" may be quoted by its token alone.
		if _, tok, ok := strings.Cut(v, " "); ok && len(strings.TrimSpace(tok)) >= 4 {
			r.secrets = append(r.secrets, strings.TrimSpace(tok))
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
	// Longer first, so that a secret containing another is removed whole.
	sort.Slice(r.secrets, func(i, j int) bool { return len(r.secrets[i]) > len(r.secrets[j]) })
	return r
}

// String returns s without any secret value.
func (r *redactor) String(s string) string {
	if r == nil {
		return s
	}
	for _, v := range r.secrets {
		s = strings.ReplaceAll(s, v, "***")
	}
	return s
}

// redactedError keeps the chain of err for errors.Is while its message
// holds no secret.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Error returns err with every secret value removed from its message.
func (r *redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := r.String(err.Error())
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}
