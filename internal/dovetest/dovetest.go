package dovetest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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
	// LogPath is a copy of Dovecot's log, written as the lines arrive.
	LogPath string
	// Users are the accounts the server knows.
	Users []User

	cmd *exec.Cmd
	log *logTail
}

// logTail collects Dovecot's log as Dovecot writes it (through a pipe on
// its standard error), so that a test can wait for a line to arrive
// instead of guessing how long Dovecot takes to write it.
type logTail struct {
	mu    sync.Mutex
	cond  *sync.Cond
	buf   strings.Builder
	file  *os.File
	ended bool
}

func newLogTail(file *os.File) *logTail {
	l := &logTail{file: file}
	l.cond = sync.NewCond(&l.mu)
	return l
}

// read copies r into the tail line by line until r ends.
func (l *logTail) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text() + "\n"
		l.mu.Lock()
		l.buf.WriteString(line)
		if l.file != nil {
			_, _ = l.file.WriteString(line)
		}
		l.cond.Broadcast()
		l.mu.Unlock()
	}
	l.mu.Lock()
	l.ended = true
	if l.file != nil {
		_ = l.file.Close()
	}
	l.cond.Broadcast()
	l.mu.Unlock()
}

func (l *logTail) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// LogWaitLimit bounds how long WaitLog waits for lines that never come.
// It is a limit for a failing test, not a wait: a line that arrives ends
// the wait at once.
const LogWaitLimit = 60 * time.Second

// WaitLog waits until Dovecot's log holds at least want lines that each
// contain every one of parts, and returns how many do. It fails the test
// when they have not arrived within LogWaitLimit or Dovecot stopped
// writing. Dovecot writes its log asynchronously (a separate process), so
// a test that checks what the server logged about an event waits for that
// event here rather than reading the log at once.
func (s *Server) WaitLog(t testing.TB, want int, parts ...string) int {
	t.Helper()
	l := s.log
	timer := time.AfterFunc(LogWaitLimit, func() {
		l.mu.Lock()
		l.cond.Broadcast()
		l.mu.Unlock()
	})
	defer timer.Stop()
	deadline := time.Now().Add(LogWaitLimit)
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		n := CountLines(l.buf.String(), parts...)
		if n >= want {
			return n
		}
		if l.ended || !time.Now().Before(deadline) {
			t.Fatalf("dovetest: %d log lines with %q, want %d (waited for them up to %s):\n%s", n, parts, want, LogWaitLimit, l.buf.String())
			return n
		}
		l.cond.Wait()
	}
}

// CountLines counts the lines of log that each contain every one of parts.
func CountLines(log string, parts ...string) int {
	n := 0
	for _, line := range strings.Split(log, "\n") {
		all := line != ""
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			n++
		}
	}
	return n
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

// Log returns what Dovecot has logged so far. Dovecot writes its log
// asynchronously: to check that it logged an event, use WaitLog.
func (s *Server) Log(t testing.TB) string {
	t.Helper()
	return s.log.text()
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
log_path = /dev/stderr
info_log_path = /dev/stderr
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
# No statistics: a login process that cannot reach the stats writer while
# the server stops waits 5 s for it, which is all a test would wait for.
stats_writer_socket_path =
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
# No authentication penalty: after a refused sign-in, anvil delays the next
# sign-in from the same address by seconds, which tests of refusals would
# only wait for (Authentication.Penalty in Dovecot's documentation).
service anvil {
  unix_listener anvil-auth-penalty {
    mode = 0
  }
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
	logFile, err := os.Create(s.LogPath)
	if err != nil {
		t.Fatalf("dovetest: create the log copy: %v", err)
	}
	s.log = newLogTail(logFile)
	// Dovecot and its log process write their log (and any start-up
	// error) to standard error, which is this pipe.
	logR, logW, err := os.Pipe()
	if err != nil {
		t.Fatalf("dovetest: log pipe: %v", err)
	}
	cmd := exec.Command(bin, "-F", "-c", confPath)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdout, cmd.Stderr = logW, logW
	if err := cmd.Start(); err != nil {
		logR.Close()
		logW.Close()
		t.Fatalf("dovetest: start dovecot: %v", err)
	}
	logW.Close()
	tailDone := make(chan struct{})
	go func() { s.log.read(logR); logR.Close(); close(tailDone) }()
	s.cmd = cmd
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { s.stop(t, exited); <-tailDone })

	// Dovecot binds its listeners before it announces itself in the log,
	// so the announcement is the event to wait for. A probe connection
	// would leave a login process behind that holds up the shutdown for
	// five seconds.
	waitStarted(t, s, exited)
	return s
}

// StartLimit bounds how long Start waits for Dovecot to come up. It is a
// limit for a failing start, not a wait: the announcement ends it at once.
const StartLimit = 60 * time.Second

// waitStarted waits until Dovecot logged that it is starting up, and fails
// the test when Dovecot exits or stays silent for StartLimit.
func waitStarted(t testing.TB, s *Server, exited <-chan struct{}) {
	t.Helper()
	l := s.log
	stopWaking := make(chan struct{})
	defer close(stopWaking)
	go func() {
		select {
		case <-exited:
		case <-time.After(StartLimit):
		case <-stopWaking:
			return
		}
		l.mu.Lock()
		l.cond.Broadcast()
		l.mu.Unlock()
	}()
	deadline := time.Now().Add(StartLimit)
	l.mu.Lock()
	defer l.mu.Unlock()
	for CountLines(l.buf.String(), "master: Info: Dovecot v", " starting up for imap") == 0 {
		select {
		case <-exited:
			t.Fatalf("dovetest: dovecot exited before it started:\n%s", l.buf.String())
		default:
		}
		if !time.Now().Before(deadline) {
			t.Fatalf("dovetest: dovecot did not start within %s:\n%s", StartLimit, l.buf.String())
		}
		l.cond.Wait()
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
