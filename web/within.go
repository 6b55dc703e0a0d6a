package web

import (
	"net/url"
	"strings"
)

// WithinBase reports whether u lies inside base: the same scheme, host and
// port, no userinfo, and a path at or below base's path. A dot segment or
// an escaped slash in u's path counts as outside, because the server could
// resolve it to a place above base. Tools use it to keep every request and
// redirect inside a configured site, such as the organization's wiki.
func WithinBase(base, u *url.URL) bool {
	if base == nil || u == nil {
		return false
	}
	if !strings.EqualFold(base.Scheme, u.Scheme) || !strings.EqualFold(base.Hostname(), u.Hostname()) {
		return false
	}
	if portOrDefault(lowerScheme(base)) != portOrDefault(lowerScheme(u)) {
		return false
	}
	if u.User != nil || u.Opaque != "" {
		return false
	}
	p := u.EscapedPath()
	for _, seg := range strings.Split(p, "/") {
		// A dot segment could climb out of base's path on the server.
		if d := strings.ToLower(strings.ReplaceAll(strings.ReplaceAll(seg, "%2e", "."), "%2E", ".")); d == "." || d == ".." || strings.Contains(strings.ToLower(seg), "%2f") {
			return false
		}
	}
	prefix := strings.TrimSuffix(base.EscapedPath(), "/")
	if prefix == "" {
		return true
	}
	return p == prefix || strings.HasPrefix(p, prefix+"/")
}

// lowerScheme returns u with its scheme in lower case, for portOrDefault.
func lowerScheme(u *url.URL) *url.URL {
	if u.Scheme == strings.ToLower(u.Scheme) {
		return u
	}
	c := *u
	c.Scheme = strings.ToLower(u.Scheme)
	return &c
}
