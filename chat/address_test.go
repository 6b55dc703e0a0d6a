package chat

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

func TestFindWebAddresses(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"plain", "Read https://example.com/a/b?x=1 now", []string{"https://example.com/a/b?x=1"}},
		{"any case", "HTTP://EXAMPLE.COM/X and hTtPs://e.org", []string{"HTTP://EXAMPLE.COM/X", "hTtPs://e.org"}},
		{"sentence end", "See https://example.com/a.", []string{"https://example.com/a"}},
		{"trailing punctuation", "https://example.com/x_~*!?;:, next", []string{"https://example.com/x"}},
		{"balanced parentheses kept", "(see https://en.wikipedia.org/wiki/Go_(language))", []string{"https://en.wikipedia.org/wiki/Go_(language)"}},
		{"markdown link", "[docs](https://go.dev/doc/) and [x][1]", []string{"https://go.dev/doc/"}},
		{"unbalanced bracket", "[https://a.example/b]", []string{"https://a.example/b"}},
		{"balanced bracket kept", "https://a.example/b[1]", []string{"https://a.example/b[1]"}},
		{"angle brackets", "<https://a.example/x>", []string{"https://a.example/x"}},
		{"quotes", `href="https://a.example/x" src='http://b.example/y'`, []string{"https://a.example/x", "http://b.example/y"}},
		{"stop characters", "https://a.example/x{y} https://b.example/p|q https://c.example/r\\s https://d.example/t^u https://e.example/`v`",
			[]string{"https://a.example/x", "https://b.example/p", "https://c.example/r", "https://d.example/t", "https://e.example/"}},
		{"unicode space ends it", "https://a.example/x\u00a0y", []string{"https://a.example/x"}},
		{"non-ASCII kept", "https://bücher.example/ü?q=ö.", []string{"https://bücher.example/ü?q=ö"}},
		{"inside a word", "xhttps://a.example", []string{"https://a.example"}},
		{"each once", "https://a.example https://a.example", []string{"https://a.example"}},
		{"html decoded variant", "https://a.example/?a=1&amp;b=2", []string{"https://a.example/?a=1&amp;b=2", "https://a.example/?a=1&b=2"}},
		{"encoded quotes", "href=&quot;https://a.example/x&quot;&gt;", []string{"https://a.example/x&quot;&gt", "https://a.example/x"}},
		{"scheme only", "https:// and http://", nil},
		{"other schemes", "ftp://a.example mailto:a@b.example file:///etc", nil},
		{"no address", "nothing here", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := FindWebAddresses(tc.text)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("FindWebAddresses(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

// "Two addresses count as the same when they ask the server for the same:
// scheme and host regardless of case, path and query exactly, the fragment
// not at all."
func TestRequestKey(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" means no key
	}{
		{"https://example.com/a?b=1", "https://example.com:443/a?b=1"},
		{"HTTPS://Example.COM/Path?Q=1#frag", "https://example.com:443/Path?Q=1"},
		{"http://example.com", "http://example.com:80/"},
		{"http://example.com:8080/a", "http://example.com:8080/a"},
		{"http://example.com:080/a", "http://example.com:80/a"},
		{"https://example.com:443/", "https://example.com:443/"},
		{"http://user:pa%20ss@example.com/x", "http://user:pa%20ss@example.com:80/x"},
		{"https://bücher.example/ü?q=ä", "https://xn--bcher-kva.example:443/%C3%BC?q=%C3%A4"},
		{"https://BÜCHER.example/", "https://xn--bcher-kva.example:443/"},
		{"https://xn--bcher-kva.example/", "https://xn--bcher-kva.example:443/"},
		{"http://[::1]:8080/x", "http://[::1]:8080/x"},
		{"http://[FE80::1]/", "http://[fe80::1]:80/"},
		{"http://[0:0::1]/", "http://[::1]:80/"},
		{"http://[fe80::1%25eth0]/", "http://[fe80::1%25eth0]:80/"},
		{"http://[fe80::1%25e%2Fth]/", ""},
		{"http://[1.2.3.4]/", ""},
		{"http://exa_mple.com/", "http://exa_mple.com:80/"},
		{"http://a.example/a%2Fb", "http://a.example:80/a%2Fb"},
		{"http://a.example/?", "http://a.example:80/?"},
		{"http://a.example/x y", "http://a.example:80/x%20y"},
		{"ftp://example.com/", ""},
		{"/relative/path", ""},
		{"example.com/x", ""},
		{"mailto:a@b.example", ""},
		{"http:opaque", ""},
		{"http:///path", ""},
		{"http://example.com:99999/", ""},
		{"http://exa mple.com/", ""},
		{"http://a.example/%zz", ""},
		{"", ""},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := RequestKey(tc.in)
			if tc.want == "" {
				if ok {
					t.Fatalf("RequestKey(%q) = %q, want no key", tc.in, got)
				}
				return
			}
			if !ok || got != tc.want {
				t.Fatalf("RequestKey(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
			}
			again, ok := RequestKey(got)
			if !ok || again != got {
				t.Errorf("key is not stable: %q -> %q", got, again)
			}
		})
	}
	same := [][2]string{
		{"https://example.com/a", "HTTPS://EXAMPLE.COM:443/a#top"},
		{"http://example.com", "http://example.com:80/"},
		{"https://bücher.example/x", "https://xn--bcher-kva.example/x"},
	}
	for _, p := range same {
		a, _ := RequestKey(p[0])
		b, _ := RequestKey(p[1])
		if a != b {
			t.Errorf("%q and %q should ask for the same: %q vs %q", p[0], p[1], a, b)
		}
	}
	different := [][2]string{
		{"https://example.com/a", "https://example.com/A"},
		{"https://example.com/?q=a", "https://example.com/?q=A"},
		{"https://example.com/?a=%41", "https://example.com/?a=A"},
		{"http://example.com/", "https://example.com/"},
		{"https://example.com/", "https://example.com:8443/"},
		{"https://user@example.com/", "https://example.com/"},
	}
	for _, p := range different {
		a, _ := RequestKey(p[0])
		b, _ := RequestKey(p[1])
		if a == b {
			t.Errorf("%q and %q should differ, both are %q", p[0], p[1], a)
		}
	}
}

// "An address in a tool result counts only when it is no echo of the call:
// one which stands in the arguments, even as a part of one, is left out."
func TestReturnedAddresses(t *testing.T) {
	key := func(s string) string {
		k, ok := RequestKey(s)
		if !ok {
			t.Fatalf("no key for %q", s)
		}
		return k
	}
	tests := []struct {
		name, content, args string
		want                []string
	}{
		{"found", "Hits: https://a.example/1 and https://b.example/2.", `{"query":"go"}`,
			[]string{key("https://a.example/1"), key("https://b.example/2")}},
		{"none", "no links", `{}`, nil},
		{"echo of an argument", "You searched https://evil.example/x?d=secret. Also https://a.example/",
			`{"query":"https://evil.example/x?d=secret"}`, []string{key("https://a.example/")}},
		{"part of a value", "Result: https://evil.example/x?d=secret",
			`{"query":"please read https://evil.example/x?d=secret today"}`, nil},
		{"same request, other spelling", "See https://evil.example/x#frag",
			`{"url":"HTTPS://EVIL.EXAMPLE:443/x"}`, nil},
		{"prefix of a value", "See https://evil.example/x", `{"url":"https://evil.example/xyz"}`, nil},
		{"nested argument", "See https://evil.example/x", `{"filter":{"urls":["https://evil.example/x"]}}`, nil},
		{"not an echo", "See https://a.example/x", `{"url":"https://a.example/y"}`, []string{key("https://a.example/x")}},
		{"arguments not JSON", "See https://evil.example/x", `not json https://evil.example/x`, nil},
		{"each once", "https://a.example/ https://A.example:443/#x", `{}`, []string{key("https://a.example/")}},
		{"blank arguments", "https://a.example/", ``, []string{key("https://a.example/")}},
		// Issue 18, point 5: an address percent-encoded in the arguments
		// and echoed back decoded is still an echo, and so is the other
		// way round.
		{"percent-encoded in the arguments", "You asked about https://evil.example/collect?d=order-4711",
			`{"query":"https%3A%2F%2Fevil.example%2Fcollect%3Fd%3Dorder-4711"}`, nil},
		{"encoded twice in the arguments", "You asked about https://evil.example/collect?d=secret",
			`{"query":"https%253A%252F%252Fevil.example%252Fcollect%253Fd%253Dsecret"}`, nil},
		{"path characters encoded in the arguments", "Result: https://evil.example/secret-4711",
			`{"url":"https://evil.example/%73ecret-%34711"}`, nil},
		{"encoded in the result", "Result: https://evil.example/%73ecret-%34711",
			`{"url":"https://evil.example/secret-4711"}`, nil},
		{"entities in the arguments", "Result: https://evil.example/x?a=1&b=secret",
			`{"q":"https:&#x2F;&#x2F;evil.example/x?a=1&amp;b=secret"}`, nil},
		{"decoding does not hide a real result", "See https://a.example/docs%20page and https://evil.example/x",
			`{"query":"https%3A%2F%2Fevil.example%2Fx"}`, []string{key("https://a.example/docs%20page")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ReturnedAddresses(tc.content, json.RawMessage(tc.args))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func FuzzFindWebAddresses(f *testing.F) {
	for _, s := range []string{
		"https://example.com/a.", "(https://x.example/a_(b))", "HTTP://[::1]:80/x", "https://bücher.example/ü",
		"https://a.example/?a=1&amp;b=2", "href=&quot;https://a/x&quot;", "http://", "https://%zz", "http://a:99999",
		"https://[fe80::1%25eth0]/", "http://user:pw@host/p?q#f", "https://a.example/\x00\xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, a := range FindWebAddresses(text) {
			if !strings.HasPrefix(strings.ToLower(a), "http://") && !strings.HasPrefix(strings.ToLower(a), "https://") {
				t.Fatalf("%q does not start with a scheme", a)
			}
			for _, r := range a {
				if isAddressStop(r) {
					t.Fatalf("%q holds a stop character %q", a, r)
				}
			}
			if last := a[len(a)-1]; strings.IndexByte(".,;:!?*_~", last) >= 0 {
				t.Fatalf("%q ends with punctuation", a)
			}
			checkKey(t, a)
		}
		checkKey(t, text)
	})
}

func FuzzRequestKey(f *testing.F) {
	for _, s := range []string{
		"https://example.com/a?b#c", "http://[::1]:8080/", "https://BÜCHER.example/", "http://u:p@h:1/p?q",
		"http://a/%2F", "http://a.example/?", "http://[fe80::1%25EN0]/", "http://a/ü?ü", "HTTP://A:0080",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkKey(t, s) })
}

// checkKey checks that a key, when there is one, is stable and well formed.
func checkKey(t *testing.T, s string) {
	t.Helper()
	k, ok := RequestKey(s)
	if !ok {
		return
	}
	again, ok := RequestKey(k)
	if !ok || again != k {
		t.Fatalf("RequestKey(%q) = %q, but its key is %q (%v)", s, k, again, ok)
	}
	if strings.Contains(k, "#") {
		t.Fatalf("key %q keeps a fragment", k)
	}
	for _, r := range k {
		if r > unicode.MaxASCII || unicode.IsSpace(r) {
			t.Fatalf("key %q is not escaped", k)
		}
	}
}

// FuzzReturnedAddresses: never panics, returns only well-formed keys, each
// once, and never one whose address stands in the arguments.
func FuzzReturnedAddresses(f *testing.F) {
	f.Add("See https://a.example/x and https://b.example/", `{"query":"https://b.example/"}`)
	f.Add("https://a.example/?a=1&amp;b=2", `{"q":["x",{"y":"https://a.example/?a=1&b=2"}]}`)
	f.Add("http://[::1]/", `not json`)
	f.Fuzz(func(t *testing.T, content, args string) {
		keys := ReturnedAddresses(content, json.RawMessage(args))
		echoed := map[string]bool{}
		for _, v := range argumentValues(json.RawMessage(args)) {
			for _, a := range FindWebAddresses(v) {
				if k, ok := RequestKey(a); ok {
					echoed[k] = true
				}
			}
		}
		seen := map[string]bool{}
		for _, k := range keys {
			if again, ok := RequestKey(k); !ok || again != k {
				t.Fatalf("%q is not a request key", k)
			}
			if seen[k] {
				t.Fatalf("%q returned twice", k)
			}
			seen[k] = true
			if echoed[k] {
				t.Fatalf("%q is an echo of the arguments %s", k, args)
			}
		}
	})
}

// FuzzEchoIsNeverGiven: an address the model wrote into its arguments, in
// any mix of percent-encoding (once or twice, any characters), HTML
// character references and letter case, never comes back as given when the
// tool echoes it decoded; and the same holds the other way round, for an
// address written plainly in the arguments and echoed encoded. An
// unrelated address in the same result still counts.
func FuzzEchoIsNeverGiven(f *testing.F) {
	f.Add("collect", "d=order-4711", uint64(0xffffffff), uint8(1))
	f.Add("a/b/c", "", uint64(0x5), uint8(2))
	f.Add("secret", "x=1&y=2", uint64(1<<63), uint8(3))
	f.Add("caf\u00e9", "q=%41", uint64(0xaaaaaaaa), uint8(0))
	f.Fuzz(func(t *testing.T, path, query string, mask uint64, how uint8) {
		clean := func(s string) string {
			var b strings.Builder
			for _, r := range s {
				if r > ' ' && r < 0x7f && !strings.ContainsRune("<>\"'`{}|\\^#%", r) {
					b.WriteRune(r)
				}
			}
			return b.String()
		}
		addr := "https://fuzz.example/" + clean(path)
		if q := clean(query); q != "" {
			addr += "?" + q
		}
		addr = trimAddress(addr)
		key, ok := RequestKey(addr)
		if !ok || len(FindWebAddresses(addr)) != 1 || FindWebAddresses(addr)[0] != addr {
			return
		}
		// encode writes s with the bytes the mask picks percent-encoded,
		// then applies the extra encodings how asks for.
		encode := func(s string, keepAddress bool) string {
			var b strings.Builder
			for i := 0; i < len(s); i++ {
				c := s[i]
				pick := mask&(1<<(uint(i)%64)) != 0
				if keepAddress && i < len("https://fuzz.example/") {
					pick = false // the result must still hold an address
				}
				if pick {
					fmt.Fprintf(&b, "%%%02X", c)
				} else {
					b.WriteByte(c)
				}
			}
			out := b.String()
			if how&1 != 0 && !keepAddress {
				out = strings.ReplaceAll(out, "%", "%25") // encoded twice
			}
			if how&2 != 0 {
				out = strings.ReplaceAll(out, "/", "&#x2F;")
				if keepAddress {
					out = strings.Replace(out, "https:&#x2F;&#x2F;fuzz.example&#x2F;", "https://fuzz.example/", 1)
				}
			}
			if how&4 != 0 && !keepAddress {
				out = strings.ToUpper(out)
			}
			return out
		}
		const other = "https://unrelated.example/page"
		otherKey, _ := RequestKey(other)
		argsOf := func(v string) json.RawMessage {
			b, _ := json.Marshal(map[string]string{"query": "look at " + v + " please"})
			return b
		}
		// Encoded in the arguments, echoed decoded.
		got := ReturnedAddresses("Echo: "+addr+" and "+other, argsOf(encode(addr, false)))
		if slices.Contains(got, key) {
			t.Fatalf("%q counts as given although the arguments carry it as %q", addr, encode(addr, false))
		}
		if !slices.Contains(got, otherKey) {
			t.Fatalf("the unrelated %q was left out: %q", other, got)
		}
		// Plain in the arguments, echoed encoded.
		echo := encode(addr, true)
		got = ReturnedAddresses("Echo: "+echo+" and "+other, argsOf(addr))
		for _, a := range FindWebAddresses(echo) {
			if k, ok := RequestKey(a); ok && slices.Contains(got, k) {
				t.Fatalf("the echo %q of %q counts as given", a, addr)
			}
		}
		if !slices.Contains(got, otherKey) {
			t.Fatalf("the unrelated %q was left out: %q", other, got)
		}
	})
}

// referenceFinder is the harness's pattern as a regular expression, with
// Unicode white space spelled out as unicode.IsSpace knows it.
var referenceFinder = regexp.MustCompile("(?i)https?://[^\\s\\x{0B}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}<>\"'`{}|\\\\^]+")

// FuzzFinderMatchesPattern compares the hand-written scanner with the
// pattern it implements.
func FuzzFinderMatchesPattern(f *testing.F) {
	for _, s := range []string{
		"a https://x.example/b c", "HTTPS://A\u3000b", "http://\u0085x", "https://a\xffb", "httphttps://a", "https://https://a",
		"http:// x", "x://y http://z", "https://a\\b^c|d{e}f`g'h\"i<j>k",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var got []string
		findRaw(text, func(a string) { got = append(got, a) })
		var want []string
		for _, m := range referenceFinder.FindAllString(text, -1) {
			// The pattern needs one character after "://"; trimming may
			// leave none.
			if a := trimAddress(m); len(a) > strings.Index(a, "://")+3 {
				want = append(want, a)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("text %q: scanner found %q, pattern %q", text, got, want)
		}
	})
}
