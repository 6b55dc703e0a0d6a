package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServePrintsTheAddressWithAToken starts `steward serve` on a free
// loopback port, reads the address it prints, uses the API with the token
// and without, and stops it with SIGINT by its PID.
func TestServePrintsTheAddressWithAToken(t *testing.T) {
	home := t.TempDir()
	p := newScripted(t, textReply("Hello", " from serve."))
	cfg := filepath.Join(home, "config")
	if err := os.MkdirAll(cfg, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(cfg, "settings.json"), []byte(`{"version":2,"default_provider":"local","providers":[{"id":"local","kind":"vllm","model":"m","base_url":"`+p.baseURL()+`"}]}`), 0o600)
	cmd := exec.Command(binary, "serve")
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "STEWARD_CONFIG_DIR=" + cfg, "STEWARD_DATA_DIR=" + filepath.Join(home, "data"),
		"STEWARD_NO_OLLAMA_PROBE=1", "DBUS_SESSION_BUS_ADDRESS=disabled:"}
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			cmd.Process.Kill()
			<-done
		}
	})
	addr := regexp.MustCompile(`http://127\.0\.0\.1:\d+/\?token=([A-Za-z0-9_-]{43})`)
	sc := bufio.NewScanner(stdout)
	var url, token string
	deadline := time.After(30 * time.Second)
	found := make(chan []string, 1)
	go func() {
		for sc.Scan() {
			if m := addr.FindStringSubmatch(sc.Text()); m != nil {
				found <- m
				break
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	select {
	case m := <-found:
		url, token = m[0], m[1]
	case <-deadline:
		t.Fatalf("serve printed no address; stderr: %s", stderr.String())
	}
	base := strings.SplitN(url, "/?", 2)[0]
	get := func(path, tok string) int {
		req, _ := http.NewRequest("GET", base+path, nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if st := get("/api/chats", ""); st != 401 {
		t.Fatalf("without the token: %d", st)
	}
	if st := get("/api/chats", token); st != 200 {
		t.Fatalf("with the token: %d", st)
	}
	req, _ := http.NewRequest("POST", base+"/api/chats", strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 201 {
		t.Fatalf("create a chat: %v %v", err, res)
	}
	res.Body.Close()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		stopped = true
		if err != nil {
			t.Fatalf("serve ended with %v; stderr: %s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop on SIGINT")
	}
	if !strings.Contains(stderr.String(), "every chat is stored") {
		t.Errorf("stderr: %s", stderr.String())
	}
	// The chat is stored for steward chats.
	r := steward(t, home, "", nil, "chats", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"ID"`) && !strings.Contains(r.stdout, `"id"`) {
		t.Fatalf("chats after serve: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

// TestServeRefusesOtherAddressesWithoutAChosenToken never binds: the
// checks come before the listener.
func TestServeRefusesOtherAddressesWithoutAChosenToken(t *testing.T) {
	home := t.TempDir()
	for _, c := range []struct {
		args []string
		env  []string
		want string
	}{
		{[]string{"serve", "--listen", "192.0.2.10:8765"}, nil, "token you chose"},
		{[]string{"serve", "--listen", "0.0.0.0:8765"}, []string{"STEWARD_SERVE_TOKEN=" + strings.Repeat("a", 40)}, "binds every address"},
		{[]string{"serve", "--listen", ":8765"}, []string{"STEWARD_SERVE_TOKEN=" + strings.Repeat("a", 40)}, "binds every address"},
		{[]string{"serve", "--listen", "192.0.2.10:8765"}, []string{"STEWARD_SERVE_TOKEN=short"}, "at least 32"},
		{[]string{"serve", "--port", "70000"}, nil, "not a port"},
		{[]string{"serve", "--listen", "127.0.0.1"}, nil, "HOST:PORT"},
	} {
		r := steward(t, home, "", c.env, c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
}
