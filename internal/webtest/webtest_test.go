package webtest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stewardhq/steward/guard"
	"github.com/stewardhq/steward/web"
)

// recorder stands in for the test a Net fails, so that a refused dial can
// be seen without failing this test.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) failures() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.errors)
}

func TestNetRoutesMadeUpHostsOnly(t *testing.T) {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "host %s", r.Host) })
	tests := []struct {
		name          string
		tls           bool
		refusePrivate bool
		addr          string // dialed directly; "" reads Host's URL through Service
		wantRefused   bool
	}{
		{name: "public made-up host", addr: ""},
		{name: "public made-up host over TLS", tls: true, addr: ""},
		{name: "private made-up host allowed", addr: "10.1.2.3"},
		{name: "private made-up host refused", refusePrivate: true, addr: "10.1.2.3", wantRefused: true},
		{name: "unknown address", addr: "93.184.215.99", wantRefused: true},
		{name: "loopback", addr: "127.0.0.1", wantRefused: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{TB: t}
			newNet := NewNet
			if tt.tls {
				newNet = NewTLSNet
			}
			n := newNet(rec, handler)
			if tt.refusePrivate {
				n.RefusePrivateDials()
			}
			n.Host("news.example.com", "93.184.215.14")
			n.Host("intranet.example.com", "10.1.2.3")
			if tt.addr == "" {
				page, err := n.Service().Retrieve(context.Background(), n.URL("news.example.com", "/a"), web.Options{})
				if err != nil {
					t.Fatalf("reading a made-up public page: %v", err)
				}
				if !strings.Contains(page.Markdown, "host news.example.com") {
					t.Errorf("page %q was not served for the made-up host", page.Markdown)
				}
				if n.Lookups("news.example.com") == 0 || n.Dials() == 0 {
					t.Errorf("%d lookups, %d dials; want both", n.Lookups("news.example.com"), n.Dials())
				}
			} else {
				conn, err := n.Dial(context.Background(), "tcp", net.JoinHostPort(tt.addr, n.Port()))
				if conn != nil {
					conn.Close()
				}
				if refused := err != nil; refused != tt.wantRefused {
					t.Errorf("dial refused: %v (%v), want %v", refused, err, tt.wantRefused)
				}
				if got := rec.failures(); (got > 0) != tt.wantRefused {
					t.Errorf("%d test failures for the dial, want them: %v", got, tt.wantRefused)
				}
			}
			if _, err := n.LookupIPAddr(context.Background(), "unknown.example.com"); err == nil {
				t.Error("an unknown name resolved")
			}
		})
	}
}

func TestFixtures(t *testing.T) {
	for _, n := range []int{0, 10, 500} {
		if got := LongText(n); len(got) != n {
			t.Errorf("LongText(%d) has %d characters", n, len(got))
		}
	}
	var r Reports
	r.Report(guard.Report{})
	r.Report(guard.Report{})
	if r.Count() != 2 {
		t.Errorf("Count = %d after two reports", r.Count())
	}
}
