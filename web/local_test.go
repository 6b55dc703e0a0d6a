package web

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
)

// countingResolver answers from a table and counts the lookups.
type countingResolver struct {
	hosts map[string][]string
	n     int
}

func (r *countingResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	r.n++
	ips, ok := r.hosts[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []net.IPAddr
	for _, s := range ips {
		out = append(out, net.IPAddr{IP: net.ParseIP(s)})
	}
	return out, nil
}

// TestLocalHost: a host is local only when every address is loopback or
// private; it is decided from the resolver's answer, never by connecting.
func TestLocalHost(t *testing.T) {
	res := &countingResolver{hosts: map[string][]string{
		"gpu.corp.example":   {"10.1.2.3"},
		"two.corp.example":   {"10.1.2.3", "fd12:3456::1"},
		"cloud.example":      {"203.0.114.7"},
		"split.corp.example": {"10.1.2.3", "93.184.215.14"},
		"imds.example":       {"169.254.169.254"},
		"lo.example":         {"127.0.0.1", "::1"},
	}}
	tests := []struct {
		host   string
		local  bool
		reason string
		err    bool
	}{
		{"127.0.0.1", true, "", false},
		{"[::1]", true, "", false},
		{"192.168.1.20", true, "", false},
		{"localhost", true, "", false},
		{"ollama.localhost", true, "", false},
		{"gpu.corp.example", true, "", false},
		{"two.corp.example", true, "", false},
		{"lo.example", true, "", false},
		{"93.184.215.14", false, "public address 93.184.215.14", false},
		{"cloud.example", false, "cloud.example has the public address 203.0.114.7", false},
		{"split.corp.example", false, "public address 93.184.215.14", false},
		{"imds.example", false, "neither loopback nor private", false},
		{"missing.example", false, "could not be resolved", true},
	}
	for _, tc := range tests {
		t.Run(tc.host, func(t *testing.T) {
			loc, err := LocalHost(context.Background(), res, tc.host)
			if (err != nil) != tc.err {
				t.Fatalf("err = %v", err)
			}
			if loc.Local != tc.local || !strings.Contains(loc.Reason, tc.reason) || (tc.local && loc.Reason != "") {
				t.Errorf("local %v reason %q, want %v %q", loc.Local, loc.Reason, tc.local, tc.reason)
			}
			var re *ResolveError
			if tc.err && !errors.As(err, &re) {
				t.Errorf("a failed lookup is no ResolveError: %v", err)
			}
		})
	}
	before := res.n
	if _, err := LocalHost(context.Background(), res, "localhost"); err != nil || res.n != before {
		t.Errorf("localhost was looked up (%d lookups)", res.n-before)
	}
}
