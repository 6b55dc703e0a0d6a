package websearch

import (
	"net"
	"net/url"
	"strings"

	"golang.org/x/net/idna"
)

// candidate is one distinct result after merging.
type candidate struct {
	url      string // the address as the best-ranked backend gave it, fragment dropped
	key      string // the normalized address
	title    string
	snippet  string
	date     string
	backends []string
}

// normalizeURL returns the key under which two hits count as the same:
// scheme and host (IDN in punycode) lower-cased, a trailing dot of the host
// removed, the port only when it is not the default, userinfo kept, path
// and query exact, no fragment. Only absolute http and https addresses
// have one.
func normalizeURL(raw string) (clean, key string, ok bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return "", "", false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", "", false
	}
	clean = strings.TrimSpace(raw)
	if i := strings.IndexByte(clean, '#'); i >= 0 {
		clean = clean[:i]
	}
	host := strings.TrimSuffix(u.Hostname(), ".")
	if host == "" {
		return "", "", false
	}
	if !strings.Contains(host, ":") { // not an IPv6 literal
		ascii, err := idna.Lookup.ToASCII(host)
		if err != nil {
			return "", "", false
		}
		host = ascii
	}
	host = strings.ToLower(host)
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	hostport := host
	if strings.Contains(host, ":") {
		hostport = "[" + host + "]"
	}
	if port != "" {
		hostport = net.JoinHostPort(host, port)
	}
	var b strings.Builder
	b.WriteString(scheme)
	b.WriteString("://")
	if u.User != nil {
		b.WriteString(u.User.String())
		b.WriteByte('@')
	}
	b.WriteString(hostport)
	b.WriteString(u.EscapedPath())
	if u.ForceQuery || u.RawQuery != "" {
		b.WriteByte('?')
		b.WriteString(u.RawQuery)
	}
	return clean, b.String(), true
}

// backendHits are the hits one backend returned, in its order.
type backendHits struct {
	backend string
	hits    []hit
}

// merge takes the first limit hits of each backend, keeps the absolute http
// and https ones, and merges them round-robin by position (the first hit of
// each backend, then the second of each …), de-duplicated by normalized
// address. A duplicate lists every backend that found it; the better-ranked
// hit keeps its address, title, snippet and date, and fills only empty
// fields from the others. It returns at most limit candidates and how many
// hits were taken before filtering.
func merge(lists []backendHits, limit int) ([]candidate, int) {
	taken := 0
	for i := range lists {
		if len(lists[i].hits) > limit {
			lists[i].hits = lists[i].hits[:limit]
		}
		taken += len(lists[i].hits)
	}
	var out []*candidate
	byKey := map[string]*candidate{}
	for pos := 0; pos < limit; pos++ {
		for _, l := range lists {
			if pos >= len(l.hits) {
				continue
			}
			h := l.hits[pos]
			clean, key, ok := normalizeURL(h.url)
			if !ok {
				continue
			}
			if c, dup := byKey[key]; dup {
				if !contains(c.backends, l.backend) {
					c.backends = append(c.backends, l.backend)
				}
				fill(&c.title, h.title)
				fill(&c.snippet, h.snippet)
				fill(&c.date, h.date)
				continue
			}
			c := &candidate{url: clean, key: key, title: strings.TrimSpace(h.title), snippet: strings.TrimSpace(h.snippet),
				date: strings.TrimSpace(h.date), backends: []string{l.backend}}
			byKey[key] = c
			out = append(out, c)
		}
	}
	if len(out) > limit {
		out = out[:limit]
	}
	res := make([]candidate, len(out))
	for i, c := range out {
		res[i] = *c
	}
	return res, taken
}

func fill(dst *string, v string) {
	if strings.TrimSpace(*dst) == "" {
		*dst = strings.TrimSpace(v)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
