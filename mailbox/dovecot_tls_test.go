package mailbox

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/dovetest"
	"github.com/stewardhq/steward/store/mailindex"
)

// newTLSIndexer is newTestIndexer with the given roots for TLS and
// STARTTLS (nil roots: the system pool, which does not hold the test CA).
func newTLSIndexer(t *testing.T, x *mailindex.Index, secret string, roots *x509.CertPool) *Indexer {
	var conf *tls.Config
	if roots != nil {
		conf = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	}
	return NewIndexer(IndexerOptions{
		Index:       x,
		Secrets:     SecretFunc(func(context.Context, string) (string, error) { return secret, nil }),
		DialContext: loopbackDial(t),
		TLSConfig:   conf,
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		BatchSize:   3,
	})
}

// loginLines returns Dovecot's successful sign-in lines for user.
func loginLines(log, user string) []string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "imap-login: Info: Login: user=<"+user+">") {
			out = append(out, l)
		}
	}
	return out
}

func TestDovecotSyncOverTLS(t *testing.T) {
	t.Parallel() // the test owns its Dovecot
	s := dovetest.StartWith(t, dovetest.Options{TLS: true, Users: []dovetest.User{{Name: "tess", Password: "pw-tess"}}})
	a := dialAdmin(t, s, "tess", "pw-tess")
	for _, f := range []string{"alternative.eml", "latin1.eml", "attachments.eml"} {
		a.append("INBOX", readFixture(t, f))
	}
	a.create("Projects")
	a.append("Projects", []byte("From: p@example.org\r\nSubject: Kickoff\r\nMessage-ID: <tls-proj@example.org>\r\n\r\nKickoff.\r\n"))
	want := serverState(a, allFolders...)

	tests := []struct {
		name     string
		security Security
		port     int
	}{
		{"implicit TLS on the imaps port", SecurityTLS, s.TLSPort},
		{"STARTTLS on the imap port", SecurityStartTLS, s.Port},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := openIndex(t)
			cfg := testConfig(s, "tess")
			cfg.Security, cfg.Port = tc.security, tc.port
			rep, err := newTLSIndexer(t, x, "pw-tess", s.CAPool(t)).Sync(context.Background(), cfg, SyncOptions{})
			if err != nil {
				t.Fatalf("sync: %v", err)
			}
			if rep.Added != 4 {
				t.Errorf("added %d mails, want 4: %+v", rep.Added, rep)
			}
			if got := indexState(t, x, cfg.ID); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("index %v\nserver %v", got, want)
			}
			// Dovecot marks a sign-in over TLS with "TLS"; the admin's plain
			// loopback sign-ins say "secured" instead. Dovecot logs
			// asynchronously: wait for the indexer's sign-in to arrive.
			if n := s.WaitLog(t, i+1, "imap-login: Info: Login: user=<tess>", ", TLS, "); n != i+1 {
				t.Fatalf("%d sign-ins over TLS logged, want %d:\n%s", n, i+1, strings.Join(loginLines(s.Log(t), "tess"), "\n"))
			}
		})
	}
}

// logCount waits until Dovecot logged want lines holding all of the given
// parts (it logs asynchronously) and returns how many it logged.
func logCount(t *testing.T, s *dovetest.Server, want int, parts ...string) int {
	t.Helper()
	return s.WaitLog(t, want, parts...)
}

// noSignIn fails the test when Dovecot logged any sign-in or sign-in
// attempt for user.
func noSignIn(t *testing.T, s *dovetest.Server, user string) {
	t.Helper()
	log := s.Log(t)
	if l := loginLines(log, user); len(l) != 0 {
		t.Errorf("Dovecot logged a sign-in: %v", l)
	}
	for _, bad := range []string{"auth failed", "Password mismatch", "user=<" + user + ">", "method="} {
		if strings.Contains(log, bad) {
			t.Errorf("Dovecot logged a sign-in attempt (%q):\n%s", bad, log)
		}
	}
}

func TestDovecotWrongCARefused(t *testing.T) {
	t.Parallel() // the test owns its Dovecot
	s := dovetest.StartWith(t, dovetest.Options{TLS: true, Users: []dovetest.User{{Name: "uma", Password: "pw-uma"}}})
	tests := []struct {
		name     string
		security Security
		port     int
		roots    *x509.CertPool
	}{
		{"implicit TLS, unrelated CA", SecurityTLS, s.TLSPort, dovetest.UnrelatedCAPool(t)},
		{"STARTTLS, unrelated CA", SecurityStartTLS, s.Port, dovetest.UnrelatedCAPool(t)},
		{"implicit TLS, system roots", SecurityTLS, s.TLSPort, nil},
		{"STARTTLS, system roots", SecurityStartTLS, s.Port, nil},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			target := s.Addr()
			if tc.security == SecurityTLS {
				target = s.TLSAddr()
			}
			proxy := newCountingProxy(t, target)
			x := openIndex(t)
			cfg := testConfig(s, "uma")
			cfg.Security, cfg.Port = tc.security, proxy.ln.Addr().(*net.TCPAddr).Port
			_, err := newTLSIndexer(t, x, "pw-uma", tc.roots).Sync(context.Background(), cfg, SyncOptions{})
			var unknown x509.UnknownAuthorityError
			if !errors.As(err, &unknown) {
				t.Fatalf("err = %v, want a certificate from an unknown authority", err)
			}
			var refused *SignInRefusedError
			if errors.As(err, &refused) {
				t.Errorf("a certificate failure was recorded as a refused sign-in: %v", err)
			}
			if _, _, rec, _ := x.SignInRefused(context.Background(), cfg.ID); rec {
				t.Error("a refused sign-in was recorded although none was tried")
			}
			if c, n := proxy.conns.Load(), proxy.auth.Load(); c != 1 || n != 0 {
				t.Errorf("%d connections and %d plain-text sign-in commands, want 1 and 0", c, n)
			}
			// Dovecot logs the closed connection once the proxy has gone.
			proxy.ln.Close()
			proxy.wg.Wait()
			// Dovecot saw the client reject its certificate and no sign-in
			// ("no auth attempts", or "before auth was ready" on a fresh
			// server: either way no user).
			if n := logCount(t, s, i+1, "imap-login: Info: Disconnected", "alert bad certificate", "user=<>"); n != i+1 {
				t.Errorf("%d connections ended by a rejected certificate without a sign-in attempt, want %d:\n%s", n, i+1, s.Log(t))
			}
			noSignIn(t, s, "uma")
		})
	}
}

func TestDovecotStartTLSMissing(t *testing.T) {
	t.Parallel() // the test owns its Dovecot
	// A server with ssl = no offers no STARTTLS capability.
	s := dovetest.Start(t, dovetest.User{Name: "vic", Password: "pw-vic"})
	proxy := newCountingProxy(t, s.Addr())
	x := openIndex(t)
	cfg := testConfig(s, "vic")
	cfg.Security, cfg.Port = SecurityStartTLS, proxy.ln.Addr().(*net.TCPAddr).Port
	ix := newTLSIndexer(t, x, "pw-vic", x509.NewCertPool())
	_, err := ix.Sync(context.Background(), cfg, SyncOptions{})
	if err == nil || !strings.Contains(err.Error(), "STARTTLS") {
		t.Fatalf("err = %v, want a failure that names STARTTLS", err)
	}
	var refused *SignInRefusedError
	if errors.As(err, &refused) {
		t.Errorf("a missing STARTTLS was recorded as a refused sign-in: %v", err)
	}
	if c, n := proxy.conns.Load(), proxy.auth.Load(); c != 1 || n != 0 {
		t.Errorf("%d connections and %d plain-text sign-in commands, want 1 and 0", c, n)
	}
	proxy.ln.Close()
	proxy.wg.Wait()
	// The indexer's connection ended without a user.
	if n := logCount(t, s, 1, "imap-login: Info: Disconnected", "user=<>"); n != 1 {
		t.Errorf("%d connections ended without a sign-in, want 1:\n%s", n, s.Log(t))
	}
	noSignIn(t, s, "vic")
}
