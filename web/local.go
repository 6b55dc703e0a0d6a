package web

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// HostLocality is what LocalHost found out about a host.
type HostLocality struct {
	// Local is true when every address of the host is loopback or on a
	// private network: data sent there stays on this machine or in the
	// organization's own network.
	Local bool
	// Addrs are the host's addresses, in answer order; empty for a local
	// host name (localhost and its subdomains), which is loopback by
	// definition and not looked up.
	Addrs []netip.Addr
	// Reason says in words why the host is not local; empty when it is.
	Reason string
}

// LocalHost decides whether host (a name or an IP literal, without port)
// stays on this machine or in a private network: a local host name, or a
// name whose every address is loopback or private (link-local and metadata
// addresses do not count). A name is resolved with r (nil: the system
// resolver); nothing is ever connected. A name that cannot be resolved is
// not local, and its error is returned with the reason filled in.
func LocalHost(ctx context.Context, r Resolver, host string) (HostLocality, error) {
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	h, err := normalizeHost(host)
	if err != nil {
		return HostLocality{Reason: fmt.Sprintf("%q is not a valid host name", host)}, err
	}
	if !h.ip.IsValid() && isLocalHostName(h.name) {
		return HostLocality{Local: true}, nil
	}
	ips := []netip.Addr{h.ip}
	if !h.ip.IsValid() {
		if r == nil {
			r = net.DefaultResolver
		}
		answers, err := r.LookupIPAddr(ctx, h.name)
		if err != nil {
			return HostLocality{Reason: fmt.Sprintf("%s could not be resolved", h.name)}, &ResolveError{Err: err}
		}
		ips = ips[:0]
		seen := map[netip.Addr]bool{}
		for _, a := range answers {
			ip, ok := netip.AddrFromSlice(a.IP)
			if !ok || seen[ip.Unmap()] {
				continue
			}
			seen[ip.Unmap()] = true
			ips = append(ips, ip.Unmap())
		}
		if len(ips) == 0 {
			return HostLocality{Reason: fmt.Sprintf("%s has no addresses", h.name)}, ErrNoAddresses
		}
	}
	loc := HostLocality{Local: true, Addrs: ips}
	for _, ip := range ips {
		switch {
		case localAddr(ip):
		case classify(ip) == classPublic:
			loc.Local, loc.Reason = false, fmt.Sprintf("%s has the public address %s", h.name, ip)
			return loc, nil
		default:
			loc.Local, loc.Reason = false, fmt.Sprintf("%s has the address %s, which is neither loopback nor private", h.name, ip)
			return loc, nil
		}
	}
	return loc, nil
}
