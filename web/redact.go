package web

import (
	"net/url"
	"strings"
)

// maxLoggedURL caps a logged address.
const maxLoggedURL = 2000

// RedactURL returns u in a form fit for logs: no userinfo, no fragment,
// every query value replaced by "*****" (names kept), at most 2,000
// characters.
func RedactURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	r := *u
	r.User = nil
	r.Fragment, r.RawFragment = "", ""
	if r.RawQuery != "" {
		parts := strings.Split(r.RawQuery, "&")
		for i, p := range parts {
			name, _, _ := strings.Cut(p, "=")
			parts[i] = name + "=*****"
		}
		r.RawQuery = strings.Join(parts, "&")
	}
	s := r.String()
	if len(s) > maxLoggedURL {
		cut := maxLoggedURL
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return s
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
