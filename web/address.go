package web

import (
	"net/netip"
	"strings"
	"unicode/utf8"

	"code.dny.dev/ssrf"
	"golang.org/x/net/idna"
)

// addrClass is how the network policy sees one IP address.
type addrClass int

const (
	classPublic addrClass = iota
	// classPrivate may be read only from an allow-listed host by a HIGH
	// confidence provider.
	classPrivate
	// classNever is loopback, link-local, multicast, unspecified, reserved
	// or a cloud metadata endpoint: never read unless the user typed it.
	classNever
)

func mustPrefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// Never-allowed ranges (§3 step 6).
var (
	neverV4 = mustPrefixes("0.0.0.0/8", "127.0.0.0/8", "169.254.0.0/16", "224.0.0.0/4", "240.0.0.0/4")
	neverV6 = mustPrefixes("::/128", "::1/128", "fe80::/10", "ff00::/8")
	// Private ranges named by §3 step 8. Everything the ssrf guardian
	// denies is private as well, which adds the rest of the IANA
	// special-purpose registries.
	privateV4 = mustPrefixes("10.0.0.0/8", "100.64.0.0/10", "172.16.0.0/12", "192.168.0.0/16",
		"192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24")
	privateV6 = mustPrefixes("fc00::/7", "fec0::/10")

	// Metadata endpoints of cloud providers that are not already in a
	// never-allowed range (169.254.169.254 is link-local).
	metadataAddrs = []netip.Addr{
		netip.MustParseAddr("fd00:ec2::254"),   // AWS IMDS over IPv6
		netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
	}

	nat64WellKnown = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local     = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour      = netip.MustParsePrefix("2002::/16")
	teredo         = netip.MustParsePrefix("2001::/32")
	ipv4Compatible = netip.MustParsePrefix("::/96")
)

// publicGuard decides public-ness with the IANA special-purpose lists of
// code.dny.dev/ssrf; it also guards the dialer of public targets.
var publicGuard = ssrf.New(ssrf.WithAnyPort())

func inAny(a netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// classify returns how the policy sees ip. IPv4 carried inside IPv6
// (IPv4-mapped, IPv4-compatible, NAT64, 6to4 and both Teredo addresses) is
// judged as well, and the stricter class wins.
func classify(ip netip.Addr) addrClass {
	ip = ip.Unmap()
	if !ip.IsValid() {
		return classNever
	}
	for _, m := range metadataAddrs {
		if ip == m {
			return classNever
		}
	}
	if ip.Is4() {
		switch {
		case inAny(ip, neverV4):
			return classNever
		case inAny(ip, privateV4), publicGuard.SafeAddr(ip) != nil:
			return classPrivate
		}
		return classPublic
	}
	if ip.Zone() != "" {
		return classNever
	}
	if inAny(ip, neverV6) {
		return classNever
	}
	c := classPublic
	if inAny(ip, privateV6) || publicGuard.SafeAddr(ip) != nil {
		c = classPrivate
	}
	for _, e := range embeddedIPv4(ip) {
		if ec := classify(e); ec > c {
			c = ec
		}
	}
	return c
}

// embeddedIPv4 returns the IPv4 addresses an IPv6 address carries.
func embeddedIPv4(ip netip.Addr) []netip.Addr {
	b := ip.As16()
	v4 := func(x [4]byte) netip.Addr { return netip.AddrFrom4(x) }
	switch {
	case nat64WellKnown.Contains(ip), ipv4Compatible.Contains(ip):
		return []netip.Addr{v4([4]byte{b[12], b[13], b[14], b[15]})}
	case nat64Local.Contains(ip):
		// RFC 6052 /48 layout: bits 48-63 and 72-87, skipping the u octet.
		return []netip.Addr{v4([4]byte{b[6], b[7], b[9], b[10]})}
	case sixToFour.Contains(ip):
		return []netip.Addr{v4([4]byte{b[2], b[3], b[4], b[5]})}
	case teredo.Contains(ip):
		server := v4([4]byte{b[4], b[5], b[6], b[7]})
		client := v4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
		return []netip.Addr{server, client}
	}
	return nil
}

// metadataHostNames are names of cloud metadata services that resolve to
// addresses which may look ordinary from inside a cloud network.
var metadataHostNames = map[string]bool{
	"metadata.google.internal":   true,
	"metadata.goog":              true,
	"metadata":                   true,
	"instance-data":              true,
	"instance-data.ec2.internal": true,
	"metadata.azure.com":         true,
	"metadata.tencentyun.com":    true,
}

// host is a hop's host after normalization.
type host struct {
	name string     // lower-case ASCII (punycode) name or the IP's text
	ip   netip.Addr // valid when the host is an IP literal
}

// normalizeHost turns the host part of a URL into the form that is checked
// and dialed: IP literals parsed (IPv4-mapped unmapped), names mapped with
// UTS-46 (full-width letters and digits, ideographic full stops) to
// lower-case ASCII, the trailing dot removed. Hosts that a browser would read
// as an IPv4 address in a non-standard notation are refused: Go does not
// parse them as IPs, so they would go to DNS, where some resolvers turn them
// into the very address they spell.
func normalizeHost(raw string) (host, error) {
	if raw == "" || strings.ContainsAny(raw, "%\\ \t\r\n") {
		return host{}, ErrInvalidAddress
	}
	if ip, err := netip.ParseAddr(raw); err == nil {
		ip = ip.Unmap()
		return host{name: ip.String(), ip: ip}, nil
	}
	name := raw
	if !isASCII(name) {
		a, err := idna.Lookup.ToASCII(name)
		if err != nil || a == "" {
			return host{}, ErrInvalidAddress
		}
		name = a
	}
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	if name == "" || strings.Contains(name, "..") || strings.HasPrefix(name, ".") {
		return host{}, ErrInvalidAddress
	}
	if ip, err := netip.ParseAddr(name); err == nil {
		// A full-width or otherwise mapped spelling of an IP address.
		ip = ip.Unmap()
		return host{name: ip.String(), ip: ip}, nil
	}
	if endsInNumber(name) {
		return host{}, ErrNonStandardIP
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return host{}, ErrInvalidAddress
		}
	}
	return host{name: name}, nil
}

// endsInNumber reports whether the WHATWG URL standard would parse name as
// an IPv4 address: its last label is decimal digits or 0x followed by hex
// digits (so 2130706433, 0x7f000001, 0177.0.0.1 and 127.1 all qualify).
func endsInNumber(name string) bool {
	labels := strings.Split(name, ".")
	last := labels[len(labels)-1]
	if last == "" {
		return false
	}
	if strings.HasPrefix(last, "0x") {
		for _, r := range last[2:] {
			if !strings.ContainsRune("0123456789abcdef", r) {
				return false
			}
		}
		return true
	}
	for _, r := range last {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// isLocalHostName reports localhost and its subdomains.
func isLocalHostName(name string) bool {
	return name == "localhost" || strings.HasSuffix(name, ".localhost") ||
		name == "localhost.localdomain" || name == "ip6-localhost" || name == "ip6-loopback"
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
