package mailbox

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/dovetest"
	"github.com/stewardhq/steward/policy"
)

// introspector is a token introspection endpoint (RFC 7662 style) on
// loopback that knows one valid token per user and counts the requests.
type introspector struct {
	srv *httptest.Server

	mu    sync.Mutex
	valid map[string]string // token → user
	seen  map[string]int    // token → requests
}

func newIntrospector(t *testing.T, valid map[string]string) *introspector {
	in := &introspector{valid: valid, seen: map[string]int{}}
	in.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/introspect" {
			t.Errorf("introspection: unexpected %s %s", r.Method, r.URL.Path)
			http.Error(w, "not here", http.StatusNotFound)
			return
		}
		if err := r.ParseForm(); err != nil {
			t.Errorf("introspection: form: %v", err)
		}
		tok := r.PostForm.Get("token")
		in.mu.Lock()
		in.seen[tok]++
		user, ok := in.valid[tok]
		in.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		resp := map[string]any{"active": false}
		if ok {
			resp = map[string]any{"active": true, "username": user}
		}
		_ = json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(in.srv.Close)
	if host, _, _ := net.SplitHostPort(in.srv.Listener.Addr().String()); !IsLoopbackHost(host) {
		t.Fatalf("introspection server not on loopback: %s", host)
	}
	return in
}

func (in *introspector) requests(tok string) int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.seen[tok]
}

func TestDovecotXOAuth2(t *testing.T) {
	t.Parallel() // the test owns its Dovecot
	in := newIntrospector(t, map[string]string{"tok-valid-wendy": "wendy"})
	s := dovetest.StartWith(t, dovetest.Options{TLS: true, OAuth2IntrospectionURL: in.srv.URL + "/introspect",
		Users: []dovetest.User{{Name: "wendy", Password: "pw-wendy"}}})
	a := dialAdmin(t, s, "wendy", "pw-wendy")
	a.append("INBOX", readFixture(t, "alternative.eml"))
	a.append("INBOX", readFixture(t, "latin1.eml"))
	a.create("Projects")
	want := serverState(a, allFolders...)
	ctx := context.Background()

	t.Run("valid token over STARTTLS", func(t *testing.T) {
		x := openIndex(t)
		cfg := testConfig(s, "wendy")
		cfg.Security, cfg.Auth = SecurityStartTLS, AuthXOAuth2
		rep, err := newTLSIndexer(t, x, "tok-valid-wendy", s.CAPool(t)).Sync(ctx, cfg, SyncOptions{})
		if err != nil {
			t.Fatalf("sync: %v\n%s", err, s.Log(t))
		}
		if got := indexState(t, x, cfg.ID); rep.Added != 2 || got["INBOX"] == nil || len(got["INBOX"]) != len(want["INBOX"]) {
			t.Fatalf("added %d, index %v, server %v", rep.Added, got, want)
		}
		if n := in.requests("tok-valid-wendy"); n != 1 {
			t.Errorf("%d introspection requests for the valid token, want 1", n)
		}
		if n := s.WaitLog(t, 1, "imap-login: Info: Login: user=<wendy>", "method=XOAUTH2", ", TLS, "); n != 1 {
			t.Errorf("%d XOAUTH2 sign-ins over TLS logged, want 1: %v", n, loginLines(s.Log(t), "wendy"))
		}
	})

	t.Run("refused token tried exactly once", func(t *testing.T) {
		proxy := newCountingProxy(t, s.Addr())
		x := openIndex(t)
		cfg := testConfig(s, "wendy")
		cfg.ID = "mb-wendy-expired"
		cfg.Auth, cfg.Port = AuthXOAuth2, proxy.ln.Addr().(*net.TCPAddr).Port
		for i := 0; i < 3; i++ {
			_, err := newTLSIndexer(t, x, "tok-expired", nil).Sync(ctx, cfg, SyncOptions{})
			var refused *SignInRefusedError
			if !errors.As(err, &refused) || refused.At.IsZero() {
				t.Fatalf("run %d: err = %v, want a sign-in refusal", i+1, err)
			}
		}
		if c, n := proxy.conns.Load(), proxy.auth.Load(); c != 1 || n != 1 {
			t.Errorf("%d connections and %d AUTHENTICATE commands over three runs, want 1 and 1", c, n)
		}
		if n := in.requests("tok-expired"); n != 1 {
			t.Errorf("%d introspection requests for the refused token, want 1", n)
		}
		if n := logCount(t, s, 1, "auth: Info: oauth2(wendy,127.0.0.1", "oauth2 failed"); n != 1 {
			t.Errorf("Dovecot logged %d refused tokens, want 1:\n%s", n, s.Log(t))
		}
		if n := logCount(t, s, 1, "imap-login: Info: Disconnected", "auth failed, 1 attempts"); n != 1 {
			t.Errorf("Dovecot logged %d connections with one failed sign-in, want 1:\n%s", n, s.Log(t))
		}
	})
}

// TestXOAuth2ErrorChallengeIsRefusal checks that an XOAUTH2 error
// challenge counts as a refused sign-in however the server ends the
// exchange, so a refused token is never sent again.
func TestXOAuth2ErrorChallengeIsRefusal(t *testing.T) {
	tests := []struct {
		name string
		end  string // the server's last line after the client's answer; "" closes
	}{
		{"NO", "NO [AUTHENTICATIONFAILED] Authentication failed"},
		{"BAD", "BAD Invalid base64 data in continued response"},
		{"connection closed", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			var conns, auths, answers atomic.Int32
			var wg sync.WaitGroup
			t.Cleanup(func() { ln.Close(); wg.Wait() })
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					conns.Add(1)
					fakeXOAuth2Server(c, tc.end, &auths, &answers)
				}
			}()
			x := openIndex(t)
			cfg := Config{ID: "m", Name: "M", Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port,
				Security: SecurityPlainLoopback, Auth: AuthXOAuth2, Username: "u@example.org", SecretRef: "r", RequiredConfidence: policy.Low}
			for i := 0; i < 2; i++ {
				_, err := newTLSIndexer(t, x, "tok-expired", nil).Sync(context.Background(), cfg, SyncOptions{})
				var refused *SignInRefusedError
				if !errors.As(err, &refused) {
					t.Fatalf("run %d: err = %v, want a sign-in refusal", i+1, err)
				}
			}
			if c, a, n := conns.Load(), auths.Load(), answers.Load(); c != 1 || a != 1 || n != 1 {
				t.Errorf("%d connections, %d AUTHENTICATE, %d answers to the challenge; want 1, 1, 1", c, a, n)
			}
		})
	}
}

// fakeXOAuth2Server plays an IMAP server that refuses every XOAUTH2 token
// with an error challenge and then ends with end (or closes when empty).
func fakeXOAuth2Server(c net.Conn, end string, auths, answers *atomic.Int32) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	fmt.Fprint(c, "* OK [CAPABILITY IMAP4rev1 SASL-IR AUTH=XOAUTH2] ready\r\n")
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			return
		}
		switch strings.ToUpper(f[1]) {
		case "CAPABILITY":
			fmt.Fprintf(c, "* CAPABILITY IMAP4rev1 SASL-IR AUTH=XOAUTH2\r\n%s OK done\r\n", f[0])
		case "AUTHENTICATE":
			auths.Add(1)
			fmt.Fprintf(c, "+ %s\r\n", base64.StdEncoding.EncodeToString([]byte(`{"status":"401","schemes":"bearer"}`)))
			if _, err := r.ReadString('\n'); err != nil {
				return
			}
			answers.Add(1)
			if end == "" {
				return
			}
			fmt.Fprintf(c, "%s %s\r\n", f[0], end)
		case "LOGOUT":
			fmt.Fprintf(c, "* BYE\r\n%s OK bye\r\n", f[0])
			return
		default:
			fmt.Fprintf(c, "%s BAD unexpected\r\n", f[0])
		}
	}
}
