package chat

import (
	"strings"
	"testing"
	"unicode"

	"pgregory.net/rapid"
)

// randomCase changes the case of each letter of s at random.
func randomCase(t *rapid.T, s, label string) string {
	flips := rapid.SliceOfN(rapid.Bool(), len(s), len(s)).Draw(t, label)
	b := []rune(s)
	for i, r := range b {
		if i < len(flips) && flips[i] {
			if unicode.IsUpper(r) {
				b[i] = unicode.ToLower(r)
			} else {
				b[i] = unicode.ToUpper(r)
			}
		}
	}
	return string(b)
}

// TestRequestKeyProperties: two addresses ask for the same thing, and so
// share a key, when they differ only in the case of scheme and host, in a
// written default port or in the fragment; they differ when the path or
// the query differs.
func TestRequestKeyProperties(t *testing.T) {
	label := rapid.StringMatching(`[a-z][a-z0-9-]{0,8}[a-z0-9]`)
	segment := rapid.StringMatching(`[A-Za-z0-9._~%-]{0,8}`)
	rapid.Check(t, func(t *rapid.T) {
		scheme := rapid.SampledFrom([]string{"http", "https"}).Draw(t, "scheme")
		host := label.Draw(t, "host") + "." + rapid.SampledFrom([]string{"example", "org", "de"}).Draw(t, "tld")
		path := "/" + strings.Join(rapid.SliceOfN(segment, 0, 4).Draw(t, "path"), "/")
		if strings.Contains(path, "%") {
			path = strings.ReplaceAll(path, "%", "%25")
		}
		query := ""
		if rapid.Bool().Draw(t, "has query") {
			query = "?q=" + rapid.StringMatching(`[A-Za-z0-9]{1,6}`).Draw(t, "query")
		}
		base := scheme + "://" + host + path + query
		key, ok := RequestKey(base)
		if !ok {
			t.Fatalf("no key for %q", base)
		}

		port := map[string]string{"http": ":80", "https": ":443"}[scheme]
		variant := randomCase(t, scheme, "scheme case") + "://" + randomCase(t, host, "host case")
		if rapid.Bool().Draw(t, "write port") {
			variant += port
		}
		variant += path + query
		if rapid.Bool().Draw(t, "fragment") {
			variant += "#" + rapid.StringMatching(`[A-Za-z0-9]{0,6}`).Draw(t, "fragment text")
		}
		if k, ok := RequestKey(variant); !ok || k != key {
			t.Fatalf("%q and %q ask for the same but have keys %q and %q", base, variant, key, k)
		}

		// Changing the path or the query changes what is asked for.
		other := scheme + "://" + host + path + "x" + query
		if k, _ := RequestKey(other); k == key {
			t.Fatalf("%q and %q share key %q", base, other, k)
		}
		if query != "" {
			upper := scheme + "://" + host + path + strings.ToUpper(query)
			if upper != base {
				if k, _ := RequestKey(upper); k == key {
					t.Fatalf("query case ignored: %q and %q share %q", base, upper, k)
				}
			}
		}
	})
}
