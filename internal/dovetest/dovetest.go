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
	// Port is the IMAP port (no TLS).
	Port int
	// Dir is the scratch directory holding configuration, state and mail.
	Dir string
	// LogPath is Dovecot's log file.
	LogPath string
	// Users are the accounts the server knows.
	Users []User

	cmd *exec.Cmd
}

// Addr returns host:port.
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

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
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login xoauth2
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
passdb {
  driver = passwd-file
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
    port = 0
  }
}
`

// Start runs a fresh Dovecot for the test with the given users (one user
// "testuser"/"testpass" when none are given) and stops it at cleanup.
func Start(t testing.TB, users ...User) *Server {
	t.Helper()
	bin := Binary(t)
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
		Port, UID, GID           int
		NonRoot                  bool
	}{Dir: dir, Port: freePort(t)}
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

	s := &Server{Host: "127.0.0.1", Port: data.Port, Dir: dir, LogPath: filepath.Join(dir, "dovecot.log"), Users: users}
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

	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", s.Addr(), 200*time.Millisecond)
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
			t.Fatalf("dovetest: dovecot did not listen on %s within 10s: %s", s.Addr(), stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s
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
