package chat

import (
	"bytes"
	"encoding/json"
	"html"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// FindWebAddresses returns the http and https addresses in text, each once,
// in the order they first appear. An address is "http://" or "https://", in
// any case, followed by characters other than whitespace and
// < > " ' ` { } | \ ^. Trailing punctuation (. , ; : ! ? * _ ~) and an
// unbalanced ")" or "]" are trimmed, since they usually belong to the
// sentence around the address. When an address holds HTML character
// references such as &amp;, its decoded variant is returned as well.
func FindWebAddresses(text string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	findRaw(text, func(addr string) {
		add(addr)
		if strings.IndexByte(addr, '&') < 0 {
			return
		}
		// The decoded text may end or split the address differently,
		// e.g. at a decoded quote, so it is searched again.
		if dec := html.UnescapeString(addr); dec != addr {
			findRaw(dec, add)
		}
	})
	return out
}

// findRaw calls yield with each address in text, trimmed.
func findRaw(text string, yield func(string)) {
	for i := 0; i < len(text); {
		j := indexScheme(text[i:])
		if j < 0 {
			return
		}
		start := i + j
		p := start + len("http")
		if text[p] == 's' || text[p] == 'S' {
			p++
		}
		p += len("://")
		end := p
		for end < len(text) {
			if c := text[end]; c < utf8.RuneSelf {
				if asciiStop[c] {
					break
				}
				end++
				continue
			}
			r, size := utf8.DecodeRuneInString(text[end:])
			if isAddressStop(r) {
				break
			}
			end += size
		}
		if addr := trimAddress(text[start:end]); len(addr) > p-start {
			yield(addr)
		}
		i = end
	}
}

// indexScheme returns the index of the first "http://" or "https://" in s,
// in any case, or -1. It looks for "://" first, which is fast, and then at
// what stands before it.
func indexScheme(s string) int {
	from := 0
	for {
		k := strings.Index(s[from:], "://")
		if k < 0 {
			return -1
		}
		k += from
		if k >= 5 && strings.EqualFold(s[k-5:k], "https") {
			return k - 5
		}
		if k >= 4 && strings.EqualFold(s[k-4:k], "http") {
			return k - 4
		}
		from = k + 3
	}
}

// asciiStop marks the ASCII characters which end an address.
var asciiStop = func() (t [utf8.RuneSelf]bool) {
	for c := rune(0); c < utf8.RuneSelf; c++ {
		t[c] = isAddressStop(c)
	}
	return t
}()

func isAddressStop(r rune) bool {
	switch r {
	case '<', '>', '"', '\'', '`', '{', '}', '|', '\\', '^':
		return true
	}
	return unicode.IsSpace(r)
}

// trimAddress drops trailing punctuation and unbalanced closing brackets.
func trimAddress(s string) string {
	for len(s) > 0 {
		switch c := s[len(s)-1]; c {
		case '.', ',', ';', ':', '!', '?', '*', '_', '~':
			s = s[:len(s)-1]
			continue
		case ')':
			if strings.Count(s, "(") < strings.Count(s, ")") {
				s = s[:len(s)-1]
				continue
			}
		case ']':
			if strings.Count(s, "[") < strings.Count(s, "]") {
				s = s[:len(s)-1]
				continue
			}
		}
		return s
	}
	return s
}

// hostProfile maps an internationalized host name to punycode the way a
// client looking it up does, without refusing the underscores some real
// host names carry.
var hostProfile = idna.New(idna.MapForLookup(), idna.StrictDomainName(false), idna.Transitional(false))

// RequestKey returns what an address asks the server for, so that two
// addresses which ask for the same thing have the same key:
// scheme://[userinfo@]host:port/path?query. Scheme and host are lower case,
// the host in punycode; the port is always written; path and query are kept
// exactly, in their escaped form; the fragment is dropped. Only absolute
// http and https addresses have a key.
func RequestKey(rawURL string) (string, bool) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Opaque != "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	var defaultPort string
	switch scheme {
	case "http":
		defaultPort = "80"
	case "https":
		defaultPort = "443"
	default:
		return "", false
	}
	host := u.Hostname()
	if host == "" {
		return "", false
	}
	if strings.HasPrefix(u.Host, "[") {
		h, ok := ipv6Host(host)
		if !ok {
			return "", false
		}
		host = h
	} else {
		if !isASCII(host) {
			h, err := hostProfile.ToASCII(host)
			if err != nil {
				return "", false
			}
			host = h
		}
		host = strings.ToLower(host)
		if host == "" || !validHost(host) {
			return "", false
		}
	}
	port := u.Port()
	if port == "" {
		port = defaultPort
	} else {
		n, err := strconv.Atoi(port)
		if err != nil || n > 65535 {
			return "", false
		}
		port = strconv.Itoa(n)
	}
	var b strings.Builder
	b.Grow(len(rawURL) + 8)
	b.WriteString(scheme)
	b.WriteString("://")
	if u.User != nil {
		b.WriteString(u.User.String())
		b.WriteByte('@')
	}
	b.WriteString(host)
	b.WriteByte(':')
	b.WriteString(port)
	path := u.EscapedPath()
	if path == "" {
		// An empty path asks the server for "/".
		path = "/"
	}
	b.WriteString(path)
	if u.RawQuery != "" || u.ForceQuery {
		b.WriteByte('?')
		b.WriteString(escapeQuery(u.RawQuery))
	}
	return b.String(), true
}

// ipv6Host writes an IPv6 literal in its canonical form, in brackets, with
// its zone kept exactly and its "%" escaped as a URL must carry it.
func ipv6Host(host string) (string, bool) {
	addr, zone, _ := strings.Cut(host, "%")
	ip, err := netip.ParseAddr(addr)
	if err != nil || !ip.Is6() {
		return "", false
	}
	var b strings.Builder
	b.WriteByte('[')
	b.WriteString(ip.String())
	if zone != "" {
		// Zones name network interfaces; anything beyond the unreserved
		// characters does not read back the same.
		for i := 0; i < len(zone); i++ {
			c := zone[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~", c) >= 0) {
				return "", false
			}
		}
		b.WriteString("%25")
		b.WriteString(zone)
	}
	b.WriteByte(']')
	return b.String(), true
}

// validHost reports whether host holds only what a registered name may
// carry, so that the key reads back as the same host.
func validHost(host string) bool {
	for i := 0; i < len(host); i++ {
		c := host[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case strings.IndexByte("-._~!$&'()*+,;=", c) >= 0:
		default:
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// escapeQuery percent-encodes what a client escapes before sending a query
// (bytes outside printable ASCII), and keeps everything else exactly.
func escapeQuery(q string) string {
	const hex = "0123456789ABCDEF"
	var b []byte
	for i := 0; i < len(q); i++ {
		c := q[i]
		if c > ' ' && c < 0x7f {
			if b != nil {
				b = append(b, c)
			}
			continue
		}
		if b == nil {
			b = append(make([]byte, 0, len(q)+16), q[:i]...)
		}
		b = append(b, '%', hex[c>>4], hex[c&15])
	}
	if b == nil {
		return q
	}
	return string(b)
}

// ReturnedAddresses returns the request keys of the web addresses a tool
// result gives the model: those found in content, each once, minus every
// address that also appears in the call's own argument values, even as part
// of one. A tool such as semantic search echoes its query, and the model
// could otherwise turn any address it makes up into one a tool returned.
//
// An echo is recognised however it was spelt: both the arguments and the
// result's addresses are compared as written and as they read once their
// percent-encoding (applied up to four times over) and HTML character
// references are undone, by request key (RequestKey) and as text,
// ignoring case. So an address the model percent-encoded in its arguments
// and the tool echoed decoded counts as an echo, and so does the other way
// round. That leaves out a little more than needed, never less.
func ReturnedAddresses(content string, args json.RawMessage) []string {
	found := FindWebAddresses(content)
	if len(found) == 0 {
		return nil
	}
	var forms []string // every argument value in every decoded form, lower case
	echoed := map[string]bool{}
	for _, v := range argumentValues(args) {
		for _, f := range decodedForms(v) {
			forms = append(forms, strings.ToLower(f))
			for _, a := range FindWebAddresses(f) {
				for _, af := range decodedForms(a) {
					if k, ok := RequestKey(af); ok {
						echoed[k] = true
					}
				}
			}
		}
	}
	var keys []string
	seen := map[string]bool{}
	for _, a := range found {
		k, ok := RequestKey(a)
		if !ok || seen[k] {
			continue
		}
		if echoed[k] || isEcho(a, echoed, forms) {
			continue
		}
		seen[k] = true
		keys = append(keys, k)
	}
	return keys
}

// isEcho reports whether addr, as written or decoded, has the request key
// of an address in the arguments or stands in one of their values.
func isEcho(addr string, echoed map[string]bool, forms []string) bool {
	for i, f := range decodedForms(addr) {
		if k, ok := RequestKey(f); i > 0 && ok && echoed[k] {
			return true
		}
		low := strings.ToLower(f)
		for _, v := range forms {
			if strings.Contains(v, low) {
				return true
			}
		}
	}
	return false
}

// maxDecodeRounds is how often a text is decoded: an address
// percent-encoded that many times over is still recognised.
const maxDecodeRounds = 4

// decodedForms returns s followed by what it reads as after its HTML
// character references and percent-encoding are undone, round after round,
// until nothing changes or maxDecodeRounds is reached.
func decodedForms(s string) []string {
	out := []string{s}
	cur := s
	for i := 0; i < maxDecodeRounds; i++ {
		next := percentDecode(html.UnescapeString(cur))
		if next == cur {
			break
		}
		out = append(out, next)
		cur = next
	}
	return out
}

// percentDecode replaces every valid %XX escape with its byte and leaves
// everything else, an invalid escape included, as it is.
func percentDecode(s string) string {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// argumentValues returns every string in args, at any depth, plus the keys
// of objects; arguments that are not JSON count as one value.
func argumentValues(args json.RawMessage) []string {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(trimmed, &v); err != nil {
		return []string{string(trimmed)}
	}
	var out []string
	var walk func(any)
	walk = func(x any) {
		switch t := x.(type) {
		case string:
			out = append(out, t)
		case []any:
			for _, e := range t {
				walk(e)
			}
		case map[string]any:
			for k, e := range t {
				out = append(out, k)
				walk(e)
			}
		}
	}
	walk(v)
	return out
}
