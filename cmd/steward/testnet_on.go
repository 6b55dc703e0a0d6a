//go:build steward_testnet

package main

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"

	"github.com/stewardhq/steward/app"
)

// testNetwork gives a binary built with the tag steward_testnet, and only
// such a binary, the made-up network of internal/webtest: the names in
// STEWARD_TESTNET_HOSTS ("wiki.example.com=10.20.30.40,…") resolve to their
// made-up addresses, and a connection to one of those goes to the loopback
// server STEWARD_TESTNET_SERVER ("127.0.0.1:port") instead. Every other
// name is unknown and every other address refused, so the binary under
// test reaches nothing but that server through the page retrieval service
// and the configured services, while it believes it talks to a private or
// public host. The end-to-end tests build the binary this way to read a
// wiki "on the intranet" that is really a fake on loopback.
func testNetwork(getenv func(string) string) func(*app.Options) {
	hostsVar, server := getenv("STEWARD_TESTNET_HOSTS"), getenv("STEWARD_TESTNET_SERVER")
	if hostsVar == "" && server == "" {
		return nil
	}
	ap, err := netip.ParseAddrPort(server)
	if err != nil || !ap.Addr().IsLoopback() {
		fmt.Fprintf(os.Stderr, "steward: STEWARD_TESTNET_SERVER must be a loopback address with a port, not %q\n", server)
		os.Exit(exitUsage)
	}
	hosts := map[string]netip.Addr{}
	for _, e := range strings.Split(hostsVar, ",") {
		name, ip, ok := strings.Cut(strings.TrimSpace(e), "=")
		addr, err := netip.ParseAddr(ip)
		if !ok || err != nil || name == "" {
			fmt.Fprintf(os.Stderr, "steward: STEWARD_TESTNET_HOSTS entry %q is not name=ip\n", e)
			os.Exit(exitUsage)
		}
		hosts[strings.ToLower(name)] = addr
	}
	n := testNet{hosts: hosts, server: ap.String()}
	return func(o *app.Options) {
		o.Web.Resolver = n
		o.Web.Dial = n.dial
	}
}

type testNet struct {
	hosts  map[string]netip.Addr
	server string
}

func (n testNet) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	ip, ok := n.hosts[strings.ToLower(strings.TrimSuffix(host, "."))]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []net.IPAddr{{IP: ip.AsSlice()}}, nil
}

func (n testNet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err == nil {
		for _, ip := range n.hosts {
			if ip == ap.Addr().Unmap() {
				var d net.Dialer
				return d.DialContext(ctx, network, n.server)
			}
		}
	}
	return nil, fmt.Errorf("the test network refuses a connection to %s", addr)
}
