package kerberos

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jcmturner/goidentity/v6"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/service"
	"github.com/jcmturner/gokrb5/v8/spnego"

	"github.com/stewardhq/steward/internal/webtest"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/web"
)

const testRealm = "STEWARD.TEST"

// kdcTools are the MIT Kerberos programs the real-KDC test runs (Debian
// packages krb5-kdc, krb5-admin-server and krb5-user).
var kdcTools = []string{"krb5kdc", "kdb5_util", "kadmin.local", "kinit"}

// realm is a Kerberos realm of its own on a loopback port, with its files
// in a temporary directory.
type realm struct {
	dir, conf, kdcConf, ccache string
	port                       string
}

func lookTool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	p := filepath.Join("/usr/sbin", name)
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s not found", name)
}

// needKDC skips the test when MIT Kerberos is not installed, unless CI is
// set, where its absence is a failure.
func needKDC(t *testing.T) map[string]string {
	t.Helper()
	paths := map[string]string{}
	for _, name := range kdcTools {
		p, err := lookTool(name)
		if err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%v: install the Debian packages krb5-kdc, krb5-admin-server and krb5-user", err)
			}
			t.Skipf("%v: install krb5-kdc, krb5-admin-server and krb5-user to run the real-KDC test", err)
		}
		paths[name] = p
	}
	return paths
}

// freeLoopbackPort returns a TCP port on 127.0.0.1 that was free a moment
// ago.
func freeLoopbackPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// startRealm creates the realm's database and principals, starts krb5kdc on
// a loopback port (stopped by its PID when the test ends) and signs alice
// in to a FILE ticket cache with kinit. The first principal in services
// goes into the web server's keytab.
func startRealm(t *testing.T, tools map[string]string, services ...string) *realm {
	t.Helper()
	dir := t.TempDir()
	r := &realm{dir: dir, conf: filepath.Join(dir, "krb5.conf"), kdcConf: filepath.Join(dir, "kdc.conf"), ccache: filepath.Join(dir, "ccache")}
	run := func(name string, args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, tools[name], args...)
		cmd.Env = r.env()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	// A port that was free a moment ago may be taken by the time the KDC
	// binds it; then the KDC exits and the next port is tried.
	for attempt := 1; ; attempt++ {
		r.port = freeLoopbackPort(t)
		r.writeConfig(t)
		if attempt == 1 {
			run("kdb5_util", "-r", testRealm, "create", "-s", "-W", "-P", "master-password-of-the-test-realm")
			for _, p := range append([]string{"alice"}, services...) {
				run("kadmin.local", "-r", testRealm, "-q", "addprinc -randkey "+p)
			}
			run("kadmin.local", "-r", testRealm, "-q", "ktadd -k "+filepath.Join(dir, "alice.keytab")+" alice")
			run("kadmin.local", "-r", testRealm, "-q", "ktadd -k "+filepath.Join(dir, "http.keytab")+" "+services[0])
		}
		err := r.startKDC(t, tools["krb5kdc"])
		if err == nil {
			break
		}
		if attempt == 3 {
			t.Fatalf("krb5kdc: %v", err)
		}
	}
	run("kinit", "-k", "-t", filepath.Join(dir, "alice.keytab"), "alice")
	return r
}

// writeConfig writes krb5.conf and kdc.conf for r.port. The KDC listens on
// 127.0.0.1 only; clients use TCP.
func (r *realm) writeConfig(t *testing.T) {
	t.Helper()
	conf := fmt.Sprintf(`[libdefaults]
  default_realm = %[1]s
  dns_lookup_kdc = false
  dns_lookup_realm = false
  rdns = false
  udp_preference_limit = 1
  default_tkt_enctypes = aes256-cts-hmac-sha1-96
  default_tgs_enctypes = aes256-cts-hmac-sha1-96
  permitted_enctypes = aes256-cts-hmac-sha1-96
[realms]
  %[1]s = {
    kdc = 127.0.0.1:%[2]s
  }
[domain_realm]
  .example.com = %[1]s
`, testRealm, r.port)
	kdcConf := fmt.Sprintf(`[kdcdefaults]
  kdc_listen = 127.0.0.1:%[2]s
  kdc_tcp_listen = 127.0.0.1:%[2]s
[realms]
  %[1]s = {
    database_name = %[3]s/principal
    key_stash_file = %[3]s/stash
    acl_file = %[3]s/kadm5.acl
    supported_enctypes = aes256-cts-hmac-sha1-96:normal
    max_life = 1h
  }
[logging]
  kdc = STDERR
`, testRealm, r.port, r.dir)
	for path, text := range map[string]string{r.conf: conf, r.kdcConf: kdcConf, filepath.Join(r.dir, "kadm5.acl"): ""} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// kdcStartLimit bounds how long startKDC waits for the KDC. It is a limit
// for a KDC that fails to come up, not a wait: the KDC's own announcement
// ends it at once.
const kdcStartLimit = 60 * time.Second

// startKDC starts krb5kdc in the foreground and waits for the event that
// it serves: the KDC logs "commencing operation" (to standard error, a
// pipe read here) once its sockets are bound. The process is stopped by
// its PID when the test ends, or at once when it did not come up; an
// error carries what it logged.
func (r *realm) startKDC(t *testing.T, path string) error {
	t.Helper()
	kdc := exec.Command(path, "-n", "-r", testRealm)
	kdc.Env = r.env()
	stderr, err := kdc.StderrPipe()
	if err != nil {
		return err
	}
	if err := kdc.Start(); err != nil {
		return err
	}
	pid := kdc.Process.Pid
	var mu sync.Mutex
	var logged strings.Builder
	ready := make(chan struct{})
	eof := make(chan struct{})
	go func() {
		defer close(eof)
		sc := bufio.NewScanner(stderr)
		signalled := false
		for sc.Scan() {
			mu.Lock()
			logged.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if !signalled && strings.Contains(sc.Text(), "commencing operation") {
				signalled = true
				close(ready)
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { <-eof; exited <- kdc.Wait() }()
	stop := func() {
		select {
		case <-exited:
			return
		default:
		}
		if p, err := os.FindProcess(pid); err == nil {
			_ = p.Kill()
		}
		<-exited
	}
	log := func() string {
		mu.Lock()
		defer mu.Unlock()
		return logged.String()
	}
	select {
	case <-ready:
		t.Cleanup(stop)
		return nil
	case werr := <-exited:
		exited <- werr
		return fmt.Errorf("krb5kdc exited before it served on 127.0.0.1:%s: %v\n%s", r.port, werr, log())
	case <-time.After(kdcStartLimit):
		stop()
		return fmt.Errorf("krb5kdc did not announce that it serves on 127.0.0.1:%s within %s\n%s", r.port, kdcStartLimit, log())
	}
}

// env is the environment of the realm's commands: nothing of the user's
// own Kerberos setup is read or changed.
func (r *realm) env() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "KRB5_CONFIG=" + r.conf, "KRB5_KDC_PROFILE=" + r.kdcConf, "KRB5CCNAME=FILE:" + r.ccache}
}

// TestRealKDC signs in to an HTTPS server protected by gokrb5's SPNEGO
// handler with a ticket that MIT kinit got from a real krb5kdc on loopback,
// through web.Service and its allowlist policy.
func TestRealKDC(t *testing.T) {
	tools := needKDC(t)
	r := startRealm(t, tools, "HTTP/intranet.example.com", "HTTP/wrong.example.com")

	kt, err := keytab.Load(filepath.Join(r.dir, "http.keytab"))
	if err != nil {
		t.Fatal(err)
	}
	inner := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		id := goidentity.FromHTTPRequestContext(req)
		if id == nil {
			http.Error(w, "no identity", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "Hello %s@%s, this is the staff handbook.", id.UserName(), id.Domain())
	})
	netw := webtest.NewTLSNet(t, spnego.SPNEGOKRB5Authenticate(inner, kt, service.DecodePAC(false)))
	netw.Host("intranet.example.com", "10.20.30.40")
	netw.Host("wrong.example.com", "10.20.30.41")
	netw.Host("unknown.example.com", "10.20.30.42")
	svc := netw.Service()

	signIn, err := New(Options{ConfigPath: r.conf, CCache: "FILE:" + r.ccache})
	if err != nil {
		t.Fatal(err)
	}
	expired, err := New(Options{ConfigPath: r.conf, CCache: "FILE:" + r.ccache, Now: func() time.Time { return time.Now().Add(48 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	opts := func(s web.SignIn, conf policy.Confidence) web.Options {
		return web.Options{Policy: web.AllowList, ProviderConfidence: conf, SignIn: s,
			IsPrivateHostAllowed: func(h string) bool { return strings.HasSuffix(h, ".example.com") }}
	}
	at := func(host string) string { return netw.URL(host, "/handbook") }

	tests := []struct {
		name     string
		url      string
		opts     web.Options
		want     string // page text, or
		wantErr  error  // an error it matches, with
		contains string // this in its message
	}{
		{name: "signed in with the ticket from kinit", url: at("intranet.example.com"), opts: opts(signIn, policy.High),
			want: "Hello alice@" + testRealm + ", this is the staff handbook."},
		{name: "service ticket the server cannot decrypt", url: at("wrong.example.com"), opts: opts(signIn, policy.High),
			wantErr: web.ErrSignInRefused, contains: "refused the operating-system sign-in"},
		{name: "no service principal for the host", url: at("unknown.example.com"), opts: opts(signIn, policy.High),
			wantErr: &web.SignInError{}, contains: "no Kerberos service ticket"},
		{name: "expired ticket", url: at("intranet.example.com"), opts: opts(expired, policy.High),
			wantErr: &web.SignInError{}, contains: "expired"},
		{name: "no sign-in configured", url: at("intranet.example.com"), opts: opts(nil, policy.High),
			wantErr: &web.StatusError{}, contains: "HTTP 401"},
		{name: "a provider below HIGH neither reads nor signs in", url: at("intranet.example.com"), opts: opts(signIn, policy.Medium),
			wantErr: web.ErrInsufficientConfidence, contains: "HIGH confidence"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page, err := svc.Retrieve(context.Background(), tc.url, tc.opts)
			if tc.want != "" {
				if err != nil {
					log, _ := os.ReadFile(filepath.Join(r.dir, "kdc.log"))
					t.Fatalf("Retrieve: %v\nKDC log:\n%s", err, log)
				}
				if page.Markdown != tc.want || !page.SignedIn {
					t.Errorf("page %q (signed in %v), want %q", page.Markdown, page.SignedIn, tc.want)
				}
				return
			}
			var sie *web.SignInError
			var se *web.StatusError
			switch want := tc.wantErr.(type) {
			case *web.SignInError:
				if !errors.As(err, &sie) {
					t.Fatalf("error %v, want a sign-in error", err)
				}
			case *web.StatusError:
				if !errors.As(err, &se) || se.Code != http.StatusUnauthorized {
					t.Fatalf("error %v, want HTTP 401", err)
				}
			default:
				if !errors.Is(err, want) {
					t.Fatalf("error %v, want %v", err, want)
				}
			}
			t.Logf("error: %v", err)
			if !strings.Contains(err.Error(), tc.contains) {
				t.Errorf("error %q does not contain %q", err, tc.contains)
			}
			if strings.Contains(err.Error(), "Negotiate ") || strings.Contains(err.Error(), ".example.com") {
				t.Errorf("error %q carries a token or the host", err)
			}
		})
	}
}
