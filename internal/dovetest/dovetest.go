package dovetest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"text/template"
	"time"
)

// User is a test account with a plain-text password.
type User struct {
	Name     string
	Password string
}

// Server is a running Dovecot owned by one test.
type Server struct {
	// Host is the loopback address the server listens on.
	Host string
	// Port is the IMAP port: plain text, with STARTTLS when TLS is on.
	Port int
	// TLSPort is the implicit-TLS (imaps) port, 0 without TLS.
	TLSPort int
	// CAPEM is the CA certificate (PEM) that signed the server's
	// certificate for 127.0.0.1, empty without TLS.
	CAPEM []byte
	// Dir is the scratch directory holding configuration, state and mail.
	Dir string
	// LogPath is Dovecot's log file.
	LogPath string
	// Users are the accounts the server knows.
	Users []User

	cmd *exec.Cmd
}

// Addr returns host:port of the IMAP port.
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// TLSAddr returns host:port of the implicit-TLS port.
func (s *Server) TLSAddr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.TLSPort)) }

// Options shape the server a test starts.
type Options struct {
	// Users are the password accounts; one "testuser"/"testpass" when empty.
	Users []User
	// TLS gives the server a certificate for 127.0.0.1 signed by a fresh
	// CA (Server.CAPEM): STARTTLS on the IMAP port and an imaps listener on
	// Server.TLSPort. Without it the server offers no TLS at all (and no
	// STARTTLS capability). ssl = required would add nothing here: Dovecot
	// counts a connection from 127.0.0.1 to 127.0.0.1 as secured and
	// allows plain-text sign-in on it anyway.
	TLS bool
	// OAuth2IntrospectionURL, when set, adds an oauth2 passdb for the
	// XOAUTH2 and OAUTHBEARER mechanisms that checks bearer tokens by
	// POSTing them to this URL (RFC 7662 style). The answer must be a JSON
	// object with "active": true and "username" equal to the signing-in
	// user. Password users keep PLAIN and LOGIN.
	OAuth2IntrospectionURL string
}

// Log returns the current content of Dovecot's log.
func (s *Server) Log(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(s.LogPath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("dovetest: read log: %v", err)
	}
	return string(b)
}

// Binary returns the path of the dovecot binary, skipping the test when it
// is absent, or failing it when CI=true.
func Binary(t testing.TB) string {
	t.Helper()
	for _, p := range []string{"dovecot", "/usr/sbin/dovecot"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("dovetest: dovecot binary not found but CI=true: install dovecot-imapd (scripts/dovecot-test.sh)")
	}
	t.Skip("dovetest: dovecot binary not found; install dovecot-imapd to run the IMAP integration tests")
	return ""
}

const confTemplate = `base_dir = {{.Dir}}/run
state_dir = {{.Dir}}/state
instance_name = dovetest-{{.Port}}
log_path = {{.Dir}}/dovecot.log
info_log_path = {{.Dir}}/dovecot.log
protocols = imap
listen = 127.0.0.1
{{- if .TLS}}
ssl = yes
ssl_cert = <{{.CertPath}}
ssl_key = <{{.KeyPath}}
{{- else}}
ssl = no
{{- end}}
disable_plaintext_auth = no
auth_mechanisms = plain login xoauth2 oauthbearer
auth_verbose = yes
auth_failure_delay = 0
mail_location = maildir:{{.Dir}}/mail/%u/Maildir
first_valid_uid = 1
{{- if .NonRoot}}
default_login_user = {{.UserName}}
default_internal_user = {{.UserName}}
default_internal_group = {{.GroupName}}
{{- end}}
namespace inbox {
  inbox = yes
  separator = /
  mailbox Drafts {
    special_use = \Drafts
    auto = create
  }
  mailbox Sent {
    special_use = \Sent
    auto = create
  }
}
{{- if .OAuth2}}
passdb {
  driver = oauth2
  mechanisms = xoauth2 oauthbearer
  args = {{.Dir}}/dovecot-oauth2.conf.ext
}
{{- end}}
passdb {
  driver = passwd-file
  mechanisms = plain login
  args = scheme=PLAIN username_format=%u {{.Dir}}/users
}
userdb {
  driver = static
  args = uid={{.UID}} gid={{.GID}} home={{.Dir}}/mail/%u
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = {{.Port}}
  }
  inet_listener imaps {
{{- if .TLS}}
    address = 127.0.0.1
    port = {{.TLSPort}}
    ssl = yes
{{- else}}
    port = 0
{{- end}}
  }
}
`

const oauth2Template = `introspection_mode = post
introspection_url = {{.URL}}
username_attribute = username
active_attribute = active
active_value = true
timeout_msecs = 5000
`

// Start runs a fresh plain-text Dovecot for the test with the given users
// (one user "testuser"/"testpass" when none are given) and stops it at
// cleanup.
func Start(t testing.TB, users ...User) *Server {
	t.Helper()
	return StartWith(t, Options{Users: users})
}

// StartWith runs a fresh Dovecot shaped by o and stops it at cleanup.
func StartWith(t testing.TB, o Options) *Server {
	t.Helper()
	bin := Binary(t)
	users := o.Users
	if len(users) == 0 {
		users = []User{{Name: "testuser", Password: "testpass"}}
	}
	// Mail processes run as nobody, which must be able to reach the Maildir,
	// so the scratch directory cannot be t.TempDir (mode 0700 parents).
	dir, err := os.MkdirTemp("", "dovetest-")
	if err != nil {
		t.Fatalf("dovetest: scratch dir: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatalf("dovetest: chmod: %v", err)
	}
	for _, d := range []string{"run", "state", "mail"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatalf("dovetest: mkdir: %v", err)
		}
	}

	data := struct {
		Dir, UserName, GroupName string
		Port, TLSPort, UID, GID  int
		NonRoot                  bool
		TLS, OAuth2              bool
		CertPath, KeyPath        string
	}{Dir: dir, Port: freePort(t), TLS: o.TLS, OAuth2: o.OAuth2IntrospectionURL != ""}
	var caPEM []byte
	if data.TLS {
		data.TLSPort = freePort(t)
		for data.TLSPort == data.Port {
			data.TLSPort = freePort(t)
		}
		data.CertPath, data.KeyPath, caPEM, err = writeTLSFiles(dir)
		if err != nil {
			t.Fatalf("dovetest: TLS files: %v", err)
		}
	}
	if data.OAuth2 {
		u := o.OAuth2IntrospectionURL
		if strings.ContainsAny(u, "\n\r") {
			t.Fatalf("dovetest: introspection URL %q must be one line", u)
		}
		var oc bytes.Buffer
		if err := template.Must(template.New("oauth2").Parse(oauth2Template)).Execute(&oc, struct{ URL string }{u}); err != nil {
			t.Fatalf("dovetest: oauth2 template: %v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, "dovecot-oauth2.conf.ext"), oc.Bytes(), 0o644); err != nil {
			t.Fatalf("dovetest: write oauth2 config: %v", err)
		}
	}
	if os.Geteuid() == 0 {
		nobody, err := user.Lookup("nobody")
		if err != nil {
			t.Fatalf("dovetest: look up user nobody: %v", err)
		}
		data.UID, _ = strconv.Atoi(nobody.Uid)
		data.GID, _ = strconv.Atoi(nobody.Gid)
		if err := os.Chown(filepath.Join(dir, "mail"), data.UID, data.GID); err != nil {
			t.Fatalf("dovetest: chown mail dir: %v", err)
		}
	} else {
		cur, err := user.Current()
		if err != nil {
			t.Fatalf("dovetest: current user: %v", err)
		}
		grp, err := user.LookupGroupId(cur.Gid)
		if err != nil {
			t.Fatalf("dovetest: current group: %v", err)
		}
		data.NonRoot, data.UserName, data.GroupName = true, cur.Username, grp.Name
		data.UID, data.GID = os.Geteuid(), os.Getegid()
	}

	var conf bytes.Buffer
	if err := template.Must(template.New("conf").Parse(confTemplate)).Execute(&conf, data); err != nil {
		t.Fatalf("dovetest: config template: %v", err)
	}
	confPath := filepath.Join(dir, "dovecot.conf")
	if err := os.WriteFile(confPath, conf.Bytes(), 0o644); err != nil {
		t.Fatalf("dovetest: write config: %v", err)
	}
	var pw strings.Builder
	for _, u := range users {
		if strings.ContainsAny(u.Name+u.Password, ":\n") {
			t.Fatalf("dovetest: user %q: name and password must not contain ':' or newlines", u.Name)
		}
		fmt.Fprintf(&pw, "%s:{PLAIN}%s\n", u.Name, u.Password)
	}
	if err := os.WriteFile(filepath.Join(dir, "users"), []byte(pw.String()), 0o644); err != nil {
		t.Fatalf("dovetest: write users: %v", err)
	}

	s := &Server{Host: "127.0.0.1", Port: data.Port, TLSPort: data.TLSPort, CAPEM: caPEM, Dir: dir,
		LogPath: filepath.Join(dir, "dovecot.log"), Users: users}
	cmd := exec.Command(bin, "-F", "-c", confPath)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("dovetest: start dovecot: %v", err)
	}
	s.cmd = cmd
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { s.stop(t, exited) })

	addrs := []string{s.Addr()}
	if s.TLSPort != 0 {
		addrs = append(addrs, s.TLSAddr())
	}
	for _, addr := range addrs {
		waitListening(t, addr, exited, &stderr, s)
	}
	return s
}

// waitListening waits up to 10 s until addr accepts connections.
func waitListening(t testing.TB, addr string, exited <-chan struct{}, stderr *bytes.Buffer, s *Server) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			_ = c.Close()
			break
		}
		select {
		case <-exited:
			t.Fatalf("dovetest: dovecot exited before listening: %s\nlog: %s", stderr.String(), s.Log(t))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("dovetest: dovecot did not listen on %s within 10s: %s", addr, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends the master process by PID (SIGTERM, which ends its children),
// and kills the process group it started only if it does not exit in time.
func (s *Server) stop(t testing.TB, exited <-chan struct{}) {
	pid := s.cmd.Process.Pid
	_ = syscall.Kill(pid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(8 * time.Second):
		t.Logf("dovetest: dovecot (pid %d) did not stop after SIGTERM; killing its process group", pid)
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-exited
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("dovetest: free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
