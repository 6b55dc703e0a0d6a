package web

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/stewardhq/steward/internal/testenv"
	"github.com/stewardhq/steward/policy"
)

// The made-up DNS of the battery. Public-looking answers are never dialed
// here: address cases use testenv.FailDial, server cases route them to
// loopback test servers.
const publicIP = "93.184.216.34"

func batteryResolver() *fakeResolver {
	return newResolver(map[string][]string{
		"intranet.example":         {"10.0.0.5"},
		"evil.example":             {"127.0.0.1"},
		"loop2.example":            {"127.3.4.5"},
		"six.example":              {"::1"},
		"mapped.example":           {"::ffff:127.0.0.1"},
		"mapped-private.example":   {"::ffff:192.168.1.20"},
		"nat64.example":            {"64:ff9b::7f00:1"},
		"nat64-meta.example":       {"64:ff9b::a9fe:a9fe"},
		"sixtofour.example":        {"2002:7f00:1::1"},
		"teredo.example":           {"2001:0:4136:e378:8000:63bf:80ff:fffe"},
		"linklocal.example":        {"fe80::1"},
		"linklocal4.example":       {"169.254.10.10"},
		"multicast.example":        {"224.0.0.251"},
		"multicast6.example":       {"ff02::fb"},
		"zero.example":             {"0.0.0.0"},
		"unspec6.example":          {"::"},
		"broadcast.example":        {"255.255.255.255"},
		"meta.example":             {"169.254.169.254"},
		"meta6.example":            {"fd00:ec2::254"},
		"cgnat.example":            {"100.64.1.1"},
		"benchmark.example":        {"198.18.0.7"},
		"ula.example":              {"fd12:3456:789a::1"},
		"sitelocal.example":        {"fec0::1"},
		"doc6.example":             {"2001:db8::7"},
		"mixed.example":            {publicIP, "10.0.0.1"},
		"mixed-loop.example":       {publicIP, "127.0.0.1"},
		"mixed-loop-first.example": {"127.0.0.1", publicIP},
		"mixed6.example":           {"2606:2800:220:1:248:1893:25c8:1946", "fd00::1"},
		"wiki.corp.example":        {"10.1.2.3"},
		"wiki-loop.corp.example":   {"127.0.0.1"},
		"wiki-meta.corp.example":   {"169.254.169.254"},
		"empty.example":            {},
		"xn--lcalhost-zdg":         {"127.0.0.1"},       // lοcalhost with a Greek omicron
		"xn--pple-43d.example":     {"10.0.0.1"},        // аpple.example with a Cyrillic a
		"xn--ggle-55da.example":    {"169.254.169.254"}, // gооgle.example, Cyrillic o's
	})
}

type addrCase struct {
	url  string
	want error
	// both runs the case under PublicOnly and under AllowList with every
	// host allow-listed and a HIGH provider: never-allowed targets must
	// be refused even there.
	both bool
}

func addressBattery() []addrCase {
	never := func(u string) addrCase { return addrCase{u, ErrNeverAllowedAddress, true} }
	private := func(u string) addrCase { return addrCase{u, ErrPrivateHostNotAllowed, false} }
	nonstd := func(u string) addrCase { return addrCase{u, ErrNonStandardIP, true} }
	local := func(u string) addrCase { return addrCase{u, ErrLocalHostName, true} }
	meta := func(u string) addrCase { return addrCase{u, ErrMetadataHost, true} }
	scheme := func(u string) addrCase { return addrCase{u, ErrUnsupportedScheme, true} }
	invalid := func(u string) addrCase { return addrCase{u, ErrInvalidAddress, true} }
	return []addrCase{
		// Decimal, octal, hexadecimal and short IPv4 forms.
		nonstd("http://2130706433/"),
		nonstd("http://0x7f000001/"),
		nonstd("http://0x7F000001/"),
		nonstd("http://0x7f.0x0.0x0.0x1/"),
		nonstd("http://0177.0.0.1/"),
		nonstd("http://0177.0000.0000.0001/"),
		nonstd("http://017700000001/"),
		nonstd("http://127.1/"),
		nonstd("http://127.0.1/"),
		nonstd("http://127.000.000.001/"),
		nonstd("http://0x7f.1/"),
		nonstd("http://0/"),
		nonstd("http://0x0/"),
		nonstd("http://10.1/"),
		nonstd("http://3232235521/"),          // 192.168.0.1
		nonstd("http://2852039166/"),          // 169.254.169.254
		nonstd("http://0xa9fea9fe/"),          // 169.254.169.254
		nonstd("http://0251.0376.0251.0376/"), // 169.254.169.254
		nonstd("http://2130706433:8080/path"),
		nonstd("http://0x7f000001./"),
		nonstd("http://www.0x7f000001/"),
		// 0.0.0.0 and [::].
		never("http://0.0.0.0/"),
		never("http://0.0.0.0:8080/"),
		never("http://[::]/"),
		never("http://[0:0:0:0:0:0:0:0]:80/"),
		never("http://[::ffff:0.0.0.0]/"),
		never("http://zero.example/"),
		never("http://unspec6.example/"),
		// Loopback spelled in many ways.
		never("http://127.0.0.1/"),
		never("http://127.0.0.1:22/"),
		never("http://127.255.255.254/"),
		never("http://127.0.0.1./"),
		invalid("http://%31%32%37.0.0.1/"),
		never("HTTP://127.0.0.1/"),
		never("http://[::1]/"),
		never("http://[0:0:0:0:0:0:0:1]/"),
		never("https://[::1]:8443/"),
		// IPv4-mapped and IPv4-compatible IPv6.
		never("http://[::ffff:127.0.0.1]/"),
		never("http://[::ffff:7f00:1]/"),
		never("http://[0:0:0:0:0:ffff:127.0.0.1]/"),
		never("http://[::ffff:169.254.169.254]/"),
		never("http://[::127.0.0.1]/"),
		private("http://[::ffff:10.0.0.1]/"),
		private("http://[::ffff:192.168.1.1]/"),
		private("http://[::10.0.0.1]/"),
		never("http://mapped.example/"),
		private("http://mapped-private.example/"),
		// NAT64.
		never("http://[64:ff9b::127.0.0.1]/"),
		never("http://[64:ff9b::7f00:1]/"),
		never("http://[64:ff9b::a9fe:a9fe]/"),
		never("http://[64:ff9b:1:7f00:0:100::]/"),
		private("http://[64:ff9b::10.0.0.1]/"),
		private("http://[64:ff9b::8.8.8.8]/"),
		never("http://nat64.example/"),
		never("http://nat64-meta.example/"),
		// 6to4.
		never("http://[2002:7f00:1::]/"),
		never("http://[2002:7f00:0001::1]/"),
		never("http://[2002:a9fe:a9fe::1]/"),
		private("http://[2002:0a00:0001::1]/"),
		private("http://[2002:c0a8:0101::1]/"),
		never("http://sixtofour.example/"),
		// Teredo (client address stored with inverted bits).
		never("http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/"),   // client 127.0.0.1
		never("http://[2001:0:4136:e378:8000:63bf:5601:5601]/"),   // client 169.254.169.254
		never("http://[2001:0:7f00:1::]/"),                        // server 127.0.0.1
		private("http://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/"), // client 10.0.0.1
		private("http://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/"), // public inside Teredo: not public
		never("http://teredo.example/"),
		// Link-local, multicast, reserved, broadcast.
		never("http://169.254.1.1/"),
		never("http://[fe80::1]/"),
		never("http://224.0.0.1/"),
		never("http://239.255.255.250:1900/"),
		never("http://240.0.0.1/"),
		never("http://255.255.255.255/"),
		never("http://[ff02::1]/"),
		never("http://[ff05::2]/"),
		never("http://linklocal.example/"),
		never("http://linklocal4.example/"),
		never("http://multicast.example/"),
		never("http://multicast6.example/"),
		never("http://broadcast.example/"),
		invalid("http://[fe80::1%25eth0]/"),
		// Private ranges under PublicOnly.
		private("http://10.0.0.1/"),
		private("http://10.255.255.255/"),
		private("http://172.16.0.1/"),
		private("http://172.31.255.255/"),
		private("http://192.168.0.1/"),
		private("http://100.64.0.1/"),
		private("http://100.127.255.254/"),
		private("http://198.18.0.1/"),
		private("http://198.19.255.255/"),
		private("http://192.0.2.1/"),
		private("http://198.51.100.7/"),
		private("http://203.0.113.9/"),
		private("http://192.0.0.8/"),
		private("http://[fc00::1]/"),
		private("http://[fd12:3456::1]/"),
		private("http://[fec0::1]/"),
		private("http://[2001:db8::1]/"),
		// Metadata services.
		never("http://169.254.169.254/latest/meta-data/"),
		never("http://169.254.170.2/v2/credentials"),
		never("http://[fd00:ec2::254]/latest/meta-data/"),
		never("http://100.100.100.200/latest/meta-data/"),
		never("http://meta.example/"),
		never("http://meta6.example/"),
		meta("http://metadata.google.internal/computeMetadata/v1/"),
		meta("http://metadata.google.internal./computeMetadata/v1/"),
		meta("http://METADATA.GOOGLE.INTERNAL/"),
		meta("http://metadata/computeMetadata/v1/"),
		meta("http://metadata.goog/"),
		meta("http://instance-data/latest/"),
		meta("http://metadata.azure.com/"),
		// Names that resolve to private or forbidden addresses.
		private("http://intranet.example/"),
		never("http://evil.example/"),
		never("http://loop2.example:8080/"),
		never("http://six.example/"),
		private("http://cgnat.example/"),
		private("http://benchmark.example/"),
		private("http://ula.example/"),
		private("http://sitelocal.example/"),
		private("http://doc6.example/"),
		// Rebinding within one answer: one public, one private address.
		private("http://mixed.example/"),
		never("http://mixed-loop.example/"),
		never("http://mixed-loop-first.example/"),
		private("http://mixed6.example/"),
		// localhost names.
		local("http://localhost/"),
		local("http://LOCALHOST:8080/"),
		local("http://localhost./"),
		local("http://foo.localhost/"),
		local("http://a.b.localhost:3000/x"),
		local("http://localhost.localdomain/"),
		local("http://ip6-localhost/"),
		// Schemes other than http and https.
		scheme("file:///etc/passwd"),
		scheme("file://localhost/etc/passwd"),
		scheme("gopher://127.0.0.1:70/_GET%20/"),
		scheme("data:text/html,<h1>hi</h1>"),
		scheme("data:text/plain;base64,SGVsbG8="),
		scheme("ftp://example.com/file"),
		scheme("javascript:alert(1)"),
		scheme("ws://example.com/socket"),
		scheme("dict://127.0.0.1:11211/stat"),
		scheme("mailto:someone@example.com"),
		scheme("//example.com/no-scheme"),
		scheme("example.com"),
		// Userinfo tricks: the host after @ is what counts.
		never("http://public.example@127.0.0.1/"),
		never("http://" + publicIP + "@127.0.0.1/"),
		never("http://user:pass@[::1]/"),
		never("http://public.example:80@127.0.0.1:8080/"),
		never("http://127.0.0.1#@public.example/"),
		private("http://trusted.example@10.0.0.1/"),
		invalid("http://127.0.0.1\\@public.example/"),
		// IDN look-alikes and Unicode spellings.
		local("http://ｌｏｃａｌｈｏｓｔ/"),
		local("http://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ/"),
		local("http://locａlhost/"),
		never("http://１２７.０.０.１/"),
		never("http://127。0。0。1/"),
		nonstd("http://０x7f000001/"),
		meta("http://ｍｅｔａｄａｔａ.google.internal/"),
		never("http://lοcalhost/"),
		private("http://аpple.example/"),
		never("http://gооgle.example/"),
		// Failures that are refused without a connection.
		{"http://empty.example/", ErrNoAddresses, true},
		invalid("http:///path-only"),
		invalid("http://exa mple.com/"),
	}
}

// TestSSRFAddressBattery refuses every target before a connection is
// attempted: the dial hook fails the test if it is reached.
func TestSSRFAddressBattery(t *testing.T) {
	cases := addressBattery()
	if len(cases) < 100 {
		t.Fatalf("battery has %d address cases, want at least 100", len(cases))
	}
	res := batteryResolver()
	s := NewService(ServiceOptions{Resolver: res, Dial: testenv.FailDial(t)})
	runs := 0
	for _, c := range cases {
		policies := []struct {
			name string
			o    Options
		}{{"public", Options{Policy: PublicOnly, ProviderConfidence: policy.High}}}
		if c.both {
			policies = append(policies, struct {
				name string
				o    Options
			}{"allowlist-high", Options{Policy: AllowList, IsPrivateHostAllowed: allowAll, ProviderConfidence: policy.High}})
		}
		for _, p := range policies {
			runs++
			t.Run(p.name+"/"+c.url, func(t *testing.T) {
				page, err := s.Retrieve(context.Background(), c.url, p.o)
				if err == nil {
					t.Fatalf("retrieved %q, want refusal %v", page.FinalURL, c.want)
				}
				if !errors.Is(err, c.want) {
					t.Fatalf("error %q (%T), want %q", err, err, c.want)
				}
				assertNoEcho(t, err, c.url)
			})
		}
	}
	t.Logf("address battery: %d cases, %d runs", len(cases), runs)
}

// assertNoEcho checks that a refusal does not repeat the address.
func assertNoEcho(t *testing.T, err error, raw string) {
	t.Helper()
	msg := err.Error()
	u, perr := url.Parse(raw)
	if perr != nil || u.Host == "" {
		return
	}
	for _, part := range []string{u.Host, u.Hostname(), u.RawQuery, u.User.String()} {
		if len(part) > 3 && strings.Contains(msg, part) {
			t.Errorf("error message %q repeats %q of the refused address", msg, part)
		}
	}
}

// TestAllowListPolicy covers the private-host allowlist: an allow-listed
// private host is read only for HIGH providers and makes the page require
// HIGH; a host not on the list is refused however trusted the
// provider; never-allowed addresses stay refused even when allow-listed.
func TestAllowListPolicy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "wiki page")
	}))
	defer srv.Close()
	res := batteryResolver()
	rt := newRouter(t)
	rt.route("10.1.2.3", srv.URL)
	s := NewService(ServiceOptions{Resolver: res, Dial: rt.dial})
	wikiURL := hostURL(t, srv.URL, "wiki.corp.example", "/page")
	var blocked []string
	allow := allowOnly("wiki.corp.example", "wiki-loop.corp.example", "wiki-meta.corp.example")
	tests := []struct {
		name    string
		url     string
		o       Options
		want    error
		private bool
	}{
		{"high", wikiURL, Options{Policy: AllowList, IsPrivateHostAllowed: allow, ProviderConfidence: policy.High}, nil, true},
		{"medium", wikiURL, Options{Policy: AllowList, IsPrivateHostAllowed: allow, ProviderConfidence: policy.Medium}, ErrInsufficientConfidence, true},
		{"very-low", wikiURL, Options{Policy: AllowList, IsPrivateHostAllowed: allow, ProviderConfidence: policy.VeryLow}, ErrInsufficientConfidence, true},
		{"not-listed", wikiURL, Options{Policy: AllowList, IsPrivateHostAllowed: allowOnly("other.corp.example"), ProviderConfidence: policy.High}, ErrPrivateHostNotAllowed, true},
		{"nil-list", wikiURL, Options{Policy: AllowList, ProviderConfidence: policy.High}, ErrPrivateHostNotAllowed, true},
		{"public-only", wikiURL, Options{Policy: PublicOnly, IsPrivateHostAllowed: allow, ProviderConfidence: policy.High}, ErrPrivateHostNotAllowed, true},
		{"listed-loopback", hostURL(t, srv.URL, "wiki-loop.corp.example", "/"), Options{Policy: AllowList, IsPrivateHostAllowed: allow, ProviderConfidence: policy.High}, ErrNeverAllowedAddress, false},
		{"listed-metadata", hostURL(t, srv.URL, "wiki-meta.corp.example", "/"), Options{Policy: AllowList, IsPrivateHostAllowed: allow, ProviderConfidence: policy.High}, ErrNeverAllowedAddress, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.OnPrivateHostBlocked = func(h string) { blocked = append(blocked, h) }
			page, err := s.Retrieve(context.Background(), tc.url, tc.o)
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("error %v, want %v", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if page.Markdown != "wiki page" || page.RequiredConfidence != policy.High || !page.PrivateTarget {
				t.Fatalf("page %+v: want the wiki text, HIGH required, private target", page)
			}
		})
	}
	if len(blocked) != 2 || blocked[0] != "wiki.corp.example" {
		t.Errorf("OnPrivateHostBlocked saw %v, want the wiki host twice", blocked)
	}
	for _, d := range rt.dials() {
		if !strings.HasPrefix(d, "10.1.2.3:") {
			t.Errorf("dialed %s; only the checked wiki address may be dialed", d)
		}
	}
}

// serverCase is a battery case served by a loopback test server reached
// through a made-up public name.
type serverCase struct {
	name    string
	handler http.HandlerFunc
	path    string
	o       Options
	want    error
	setup   func(res *fakeResolver)
}

func gzipped(t testing.TB, n int, layers int) []byte {
	data := bytes.Repeat([]byte{'a'}, n)
	for i := 0; i < layers; i++ {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
		if _, err := zw.Write(data); err != nil {
			t.Fatal(err)
		}
		zw.Close()
		data = b.Bytes()
	}
	return data
}

func TestSSRFServerBattery(t *testing.T) {
	const start = "start.example"
	// Bombs inflate past the cap while their compressed size stays tiny:
	// 6 MiB against the default 5 MiB, or 2 MiB against a 1 MiB cap (kept
	// small so the battery stays fast under -race).
	bomb := gzipped(t, 6<<20, 1)
	doubleBomb := gzipped(t, 6<<20, 2)
	if len(bomb) > 64<<10 || len(doubleBomb) > 64<<10 {
		t.Fatalf("bombs of %d and %d bytes are not small", len(bomb), len(doubleBomb))
	}
	var brBomb, deflateBomb, zlibBomb bytes.Buffer
	bw := brotli.NewWriterLevel(&brBomb, brotli.BestSpeed)
	fw, _ := flate.NewWriter(&deflateBomb, flate.BestSpeed)
	zw, _ := zlib.NewWriterLevel(&zlibBomb, zlib.BestSpeed)
	chunk := make([]byte, 1<<20)
	for i := 0; i < 2; i++ {
		bw.Write(chunk)
		fw.Write(chunk)
		zw.Write(chunk)
	}
	bw.Close()
	fw.Close()
	zw.Close()

	redirect := func(loc string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", loc)
			w.WriteHeader(http.StatusFound)
		}
	}
	var srvURL string // set once the server runs; handlers read it
	self := func(host, path string) string { return hostURL(t, srvURL, host, path) }
	encoded := func(enc string, body []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Encoding", enc)
			w.Write(body)
		}
	}
	binaryHandler := func(ct string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ct)
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			// The body only ends when the client hangs up: a client that
			// read it would wait for its timeout instead of refusing.
			<-r.Context().Done()
		}
	}
	cases := []serverCase{
		{name: "redirect-to-loopback", handler: redirect("http://127.0.0.1/admin"), want: ErrNeverAllowedAddress},
		{name: "redirect-to-ipv6-loopback", handler: redirect("http://[::1]:8080/"), want: ErrNeverAllowedAddress},
		{name: "redirect-to-localhost", handler: redirect("http://localhost/"), want: ErrLocalHostName},
		{name: "redirect-to-decimal-ip", handler: redirect("http://2130706433/"), want: ErrNonStandardIP},
		{name: "redirect-to-metadata", handler: redirect("http://169.254.169.254/latest/meta-data/iam"), want: ErrNeverAllowedAddress},
		{name: "redirect-to-metadata-name", handler: redirect("http://metadata.google.internal/"), want: ErrMetadataHost},
		{name: "redirect-to-private-name", handler: redirect("http://intranet.example/"), want: ErrPrivateHostNotAllowed},
		{name: "redirect-to-file", handler: redirect("file:///etc/passwd"), want: ErrUnsupportedScheme},
		{name: "redirect-to-gopher", handler: redirect("gopher://127.0.0.1:6379/_FLUSHALL"), want: ErrUnsupportedScheme},
		{name: "redirect-to-mapped", handler: redirect("http://[::ffff:127.0.0.1]/"), want: ErrNeverAllowedAddress},
		{name: "redirect-to-userinfo-trick", handler: redirect("http://start.example@127.0.0.1/"), want: ErrNeverAllowedAddress},
		{name: "redirect-chain-ending-at-loopback", path: "/hop/0", handler: func(w http.ResponseWriter, r *http.Request) {
			var n int
			fmt.Sscanf(r.URL.Path, "/hop/%d", &n)
			loc := self(start, fmt.Sprintf("/hop/%d", n+1))
			if n == 3 {
				loc = "http://127.0.0.1:" + portOf(t, srvURL) + "/"
			}
			redirect(loc)(w, r)
		}, want: ErrNeverAllowedAddress},
		{name: "rebinding-across-hops", path: "/first", handler: func(w http.ResponseWriter, r *http.Request) {
			// start → rebind.example (answers public) → rebind.example
			// again, which now answers loopback.
			if r.URL.Path == "/first" {
				redirect(self("rebind.example", "/hop1"))(w, r)
				return
			}
			redirect(self("rebind.example", "/hop2"))(w, r)
		}, setup: func(res *fakeResolver) {
			res.sequence("rebind.example", []string{publicIP}, []string{"127.0.0.1"})
		}, want: ErrNeverAllowedAddress},
		{name: "redirect-loop", path: "/a", handler: func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/a" {
				redirect("/b")(w, r)
			} else {
				redirect("/a")(w, r)
			}
		}, want: ErrRedirectLoop},
		{name: "redirect-self-loop", handler: redirect("/"), want: ErrRedirectLoop},
		{name: "too-many-redirects", path: "/r/0", handler: func(w http.ResponseWriter, r *http.Request) {
			var n int
			fmt.Sscanf(r.URL.Path, "/r/%d", &n)
			redirect(fmt.Sprintf("/r/%d", n+1))(w, r)
		}, want: ErrTooManyRedirects},
		{name: "redirect-without-location", handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusMovedPermanently)
		}, want: ErrRedirectWithoutLocation},
		{name: "redirect-leaving-allowed-targets", handler: redirect("http://other.example/"),
			o:    Options{IsTargetAllowed: func(u *url.URL) bool { return u.Hostname() == start }},
			want: ErrTargetNotAllowed},
		{name: "oversized-declared", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("Content-Length", fmt.Sprint(DefaultMaxBytes+1))
			w.WriteHeader(http.StatusOK)
		}, want: ErrTooLarge},
		{name: "oversized-chunked", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			chunk := bytes.Repeat([]byte("x"), 64<<10)
			for i := 0; i < 200 && r.Context().Err() == nil; i++ {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}, want: ErrTooLarge},
		{name: "oversized-small-cap", o: Options{MaxBytes: 1000}, handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write(bytes.Repeat([]byte("<p>x</p>"), 200))
		}, want: ErrTooLarge},
		{name: "gzip-bomb", handler: encoded("gzip", bomb), want: ErrTooLarge},
		{name: "gzip-bomb-double", handler: encoded("gzip, gzip", doubleBomb), want: ErrTooLarge},
		{name: "brotli-bomb", o: Options{MaxBytes: 1 << 20}, handler: encoded("br", brBomb.Bytes()), want: ErrTooLarge},
		{name: "deflate-bomb", o: Options{MaxBytes: 1 << 20}, handler: encoded("deflate", deflateBomb.Bytes()), want: ErrTooLarge},
		{name: "endless-empty-gzip-members", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("Content-Encoding", "gzip")
			var empty bytes.Buffer
			zw := gzip.NewWriter(&empty)
			zw.Close()
			member := bytes.Repeat(empty.Bytes(), 4096)
			for i := 0; i < 400 && r.Context().Err() == nil; i++ {
				if _, err := w.Write(member); err != nil {
					return
				}
			}
		}, want: ErrTooLarge},
		{name: "zlib-bomb", o: Options{MaxBytes: 1 << 20}, handler: encoded("deflate", zlibBomb.Bytes()), want: ErrTooLarge},
		{name: "stalled-headers", o: Options{Timeout: 30 * time.Second}, handler: func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		}, want: ErrTimeout},
		{name: "stalled-body", o: Options{Timeout: 400 * time.Millisecond}, handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html><body><p>start"))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, want: ErrTimeout},
		{name: "binary-png", handler: binaryHandler("image/png"), want: ErrUnsupportedContentType},
		{name: "binary-pdf", handler: binaryHandler("application/pdf"), want: ErrUnsupportedContentType},
		{name: "binary-octet-stream", handler: binaryHandler("application/octet-stream"), want: ErrUnsupportedContentType},
		{name: "binary-zip", handler: binaryHandler("application/zip"), want: ErrUnsupportedContentType},
		{name: "binary-video", handler: binaryHandler("video/mp4; codecs=avc1"), want: ErrUnsupportedContentType},
		{name: "text-with-nul", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("MZ\x00\x00binary"))
		}, want: ErrNotText},
		{name: "http-404", handler: http.NotFound, want: &StatusError{}},
	}

	// One loopback server; the handler of the running case is chosen by
	// the Host header the client sent.
	var mu sync.Mutex
	mux := map[string]http.HandlerFunc{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h := mux[r.Host]
		mu.Unlock()
		if h == nil {
			http.Error(w, "no case", http.StatusInternalServerError)
			return
		}
		h(w, r)
	}))
	defer srv.Close()
	srvURL = srv.URL

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := batteryResolver()
			res.answers[start] = [][]string{{publicIP}}
			res.answers["rebind.example"] = [][]string{{publicIP}}
			if c.setup != nil {
				c.setup(res)
			}
			rt := newRouter(t)
			rt.route(publicIP, srv.URL)
			s := NewService(ServiceOptions{Resolver: res, Dial: rt.dial, HeaderTimeout: 300 * time.Millisecond})
			mu.Lock()
			mux[net4(start, srv.URL)] = c.handler
			mux[net4("rebind.example", srv.URL)] = c.handler
			mu.Unlock()
			path := c.path
			if path == "" {
				path = "/"
			}
			o := c.o
			o.Policy = PublicOnly
			page, err := s.Retrieve(context.Background(), hostURL(t, srv.URL, start, path), o)
			if err == nil {
				t.Fatalf("retrieved %q, want refusal %v", page.FinalURL, c.want)
			}
			if se, ok := c.want.(*StatusError); ok && se.Code == 0 {
				var got *StatusError
				if !errors.As(err, &got) || got.Code != http.StatusNotFound {
					t.Fatalf("error %v, want HTTP 404", err)
				}
			} else if !errors.Is(err, c.want) {
				t.Fatalf("error %q (%T), want %q", err, err, c.want)
			}
			for _, d := range rt.dials() {
				if !strings.HasPrefix(d, publicIP+":") {
					t.Errorf("dialed %s; only the checked public address may be dialed", d)
				}
			}
		})
	}
	t.Logf("server battery: %d cases", len(cases))
}

func net4(host, serverURL string) string {
	u, _ := url.Parse(serverURL)
	return host + ":" + u.Port()
}

// TestAllowListRefusesBelowHighBeforeDialing: "An allowed private host can
// only be read by a High-confidence provider." A provider below HIGH is
// refused whatever the trusted lists say, before anything is dialed, and
// the refusal does not repeat the address.
func TestAllowListRefusesBelowHighBeforeDialing(t *testing.T) {
	s := NewService(ServiceOptions{Resolver: batteryResolver(), Dial: testenv.FailDial(t)})
	const addr = "https://intranet.example/handbook?q=salaries"
	for _, c := range []policy.Confidence{policy.Medium, policy.Moderate, policy.Low, policy.Unknown, policy.None} {
		o := Options{Policy: AllowList, IsPrivateHostAllowed: allowOnly("intranet.example"), ProviderConfidence: c}
		_, err := s.Retrieve(context.Background(), addr, o)
		if !errors.Is(err, ErrInsufficientConfidence) || !IsBlocked(err) {
			t.Errorf("%s: %v, want %v", c, err, ErrInsufficientConfidence)
			continue
		}
		assertNoEcho(t, err, addr)
	}
}
