package web

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		ip   string
		want addrClass
	}{
		{"8.8.8.8", classPublic}, {"1.1.1.1", classPublic}, {"2606:4700:4700::1111", classPublic},
		{"::ffff:8.8.8.8", classPublic},
		{"127.0.0.1", classNever}, {"0.1.2.3", classNever}, {"169.254.0.1", classNever}, {"224.0.0.1", classNever},
		{"240.1.2.3", classNever}, {"::", classNever}, {"::1", classNever}, {"fe80::abcd", classNever}, {"ff0e::1", classNever},
		{"fd00:ec2::254", classNever}, {"100.100.100.200", classNever},
		{"10.0.0.1", classPrivate}, {"100.64.0.1", classPrivate}, {"172.16.5.4", classPrivate}, {"192.168.1.1", classPrivate},
		{"192.0.0.9", classPrivate}, {"192.0.2.1", classPrivate}, {"198.18.5.5", classPrivate}, {"198.51.100.1", classPrivate},
		{"203.0.113.1", classPrivate}, {"192.88.99.1", classPrivate}, {"fc00::1", classPrivate}, {"fec0::1", classPrivate},
		{"2001:db8::1", classPrivate}, {"64:ff9b::808:808", classPrivate}, {"2002:808:808::1", classPrivate},
		{"64:ff9b::7f00:1", classNever}, {"2002:7f00:1::", classNever}, {"2002:a9fe:a9fe::", classNever},
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", classNever}, {"2001:0:7f00:1::", classNever},
		{"::7f00:1", classNever}, {"64:ff9b:1:7f00:0:100::", classNever},
	}
	for _, tc := range tests {
		if got := classify(netip.MustParseAddr(tc.ip)); got != tc.want {
			t.Errorf("classify(%s) = %d, want %d", tc.ip, got, tc.want)
		}
	}
}

func TestNormalizeHost(t *testing.T) {
	tests := []struct {
		in, want string
		err      error
	}{
		{"Example.COM", "example.com", nil},
		{"example.com.", "example.com", nil},
		{"bücher.example", "xn--bcher-kva.example", nil},
		{"ＥＸＡＭＰＬＥ.com", "example.com", nil},
		{"::ffff:10.0.0.1", "10.0.0.1", nil},
		{"2001:DB8::1", "2001:db8::1", nil},
		{"１２７.０.０.１", "127.0.0.1", nil},
		{"under_score.example", "under_score.example", nil},
		{"2130706433", "", ErrNonStandardIP},
		{"0x7f.1", "", ErrNonStandardIP},
		{"host.123", "", ErrNonStandardIP},
		{"", "", ErrInvalidAddress},
		{"a..b", "", ErrInvalidAddress},
		{"fe80::1%eth0", "", ErrInvalidAddress},
		{"bad!host", "", ErrInvalidAddress},
	}
	for _, tc := range tests {
		h, err := normalizeHost(tc.in)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("normalizeHost(%q) error %v, want %v", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || h.name != tc.want {
			t.Errorf("normalizeHost(%q) = %q, %v; want %q", tc.in, h.name, err, tc.want)
		}
	}
}

func TestRedactURL(t *testing.T) {
	u, _ := url.Parse("https://user:pw@Host.example:8443/a/b?token=abc&x=1&flag#frag")
	if got, want := RedactURL(u), "https://Host.example:8443/a/b?token=*****&x=*****&flag=*****"; got != want {
		t.Errorf("RedactURL = %q, want %q", got, want)
	}
	long, _ := url.Parse("https://h.example/" + strings.Repeat("ä", 3000))
	if got := RedactURL(long); len(got) > maxLoggedURL {
		t.Errorf("RedactURL kept %d bytes", len(got))
	}
}

// FuzzAddressChecks runs the URL and address checks on arbitrary input:
// they must never panic, and whatever they accept under PublicOnly must be
// an http(s) URL whose host is public or resolved by name.
func FuzzAddressChecks(f *testing.F) {
	for _, c := range addressBattery() {
		f.Add(c.url)
	}
	f.Add("http://[::ffff:1.2.3.4]:65536/")
	f.Add("https://xn--/")
	f.Add("http://a..b/")
	f.Add("http://\u00a0/")
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		h, err := normalizeHost(u.Hostname())
		if err != nil {
			return
		}
		if h.ip.IsValid() {
			_ = classify(h.ip)
			for _, e := range embeddedIPv4(h.ip) {
				_ = classify(e)
			}
		} else {
			if strings.Trim(h.name, "abcdefghijklmnopqrstuvwxyz0123456789-._") != "" {
				t.Fatalf("normalized name %q has characters outside [a-z0-9-._]", h.name)
			}
			if endsInNumber(h.name) {
				t.Fatalf("numeric host %q passed normalization", h.name)
			}
		}
		_ = RedactURL(u)
	})
}

func FuzzClassify(f *testing.F) {
	f.Add([]byte{127, 0, 0, 1})
	f.Add([]byte{0x20, 0x02, 0x7f, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Add([]byte{0x20, 0x01, 0, 0, 0x41, 0x36, 0xe3, 0x78, 0x80, 0, 0x63, 0xbf, 0x80, 0xff, 0xff, 0xfe})
	f.Fuzz(func(t *testing.T, b []byte) {
		ip, ok := addrFromBytes(b)
		if !ok {
			return
		}
		c := classify(ip)
		// Checked against the standard library's own predicates: nothing
		// public may be loopback, private, link-local, multicast or
		// unspecified, mapped or not.
		for _, x := range []netip.Addr{ip, ip.Unmap()} {
			if c == classPublic && (x.IsLoopback() || x.IsPrivate() || x.IsLinkLocalUnicast() ||
				x.IsLinkLocalMulticast() || x.IsMulticast() || x.IsUnspecified() || x.IsInterfaceLocalMulticast()) {
				t.Fatalf("%v classified public", ip)
			}
		}
		if c == classPublic && publicGuard.SafeAddr(ip.Unmap()) != nil {
			t.Fatalf("%v classified public but the ssrf guardian denies it (IPv4-mapped addresses are dialed as IPv4)", ip)
		}
		for _, e := range embeddedIPv4(ip) {
			if c == classPublic && (e.IsLoopback() || e.IsPrivate() || e.IsUnspecified()) {
				t.Fatalf("%v classified public but carries %v", ip, e)
			}
		}
	})
}

func addrFromBytes(b []byte) (netip.Addr, bool) {
	if len(b) != 4 && len(b) != 16 {
		return netip.Addr{}, false
	}
	return netip.AddrFromSlice(b)
}
