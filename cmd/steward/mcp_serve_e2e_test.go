package main

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stewardEnv is the clean environment the end-to-end tests run steward in.
func stewardEnv(home string) []string {
	return []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"STEWARD_CONFIG_DIR=" + filepath.Join(home, "config"),
		"STEWARD_DATA_DIR=" + filepath.Join(home, "data"),
		"STEWARD_NO_OLLAMA_PROBE=1",
		"DBUS_SESSION_BUS_ADDRESS=disabled:",
	}
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range res.Tools {
		out = append(out, x.Name)
	}
	slices.Sort(out)
	return out
}

// TestMCPServeOverStdio drives the built binary's `mcp serve` with the
// SDK's client, the way Claude Code or Crush start it.
func TestMCPServeOverStdio(t *testing.T) {
	home := t.TempDir()
	connect := func(args ...string) *mcp.ClientSession {
		cmd := exec.Command(binary, append([]string{"mcp", "serve"}, args...)...)
		cmd.Env = stewardEnv(home)
		c := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
		if err != nil {
			t.Fatalf("connecting to steward mcp serve: %v", err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	// An MCP client counts as UNKNOWN by default, below what web_search
	// and read_web_page ask for: nothing is listed.
	if got := toolNames(t, connect()); len(got) != 0 {
		t.Fatalf("an UNKNOWN client is offered %v", got)
	}
	cs := connect("--confidence", "LOW")
	got := toolNames(t, cs)
	if !slices.Contains(got, "read_web_page") {
		t.Fatalf("a LOW client is offered read_web_page: %v", got)
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range res.Tools {
		if x.Annotations == nil || !x.Annotations.ReadOnlyHint || x.Annotations.OpenWorldHint == nil || !*x.Annotations.OpenWorldHint {
			t.Errorf("%s: annotations %+v", x.Name, x.Annotations)
		}
	}
	// The registry's rules hold: an address nobody gave is refused before
	// anything is fetched.
	out, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_web_page", Arguments: map[string]any{"url": "https://example.org/invented"}})
	if err != nil {
		t.Fatal(err)
	}
	if !out.IsError || !strings.Contains(out.Content[0].(*mcp.TextContent).Text, "given") {
		t.Fatalf("read_web_page of an invented address: %+v", out.Content[0])
	}
	// An organization that locks a lower level wins over the flag.
	writePluginFile(t, home, `CONFIG["SETTINGS"]["DataMCP.ClientConfidence"] = "UNKNOWN"`)
	cmd := exec.Command(binary, "mcp", "serve", "--confidence", "HIGH")
	cmd.Env = stewardEnv(home)
	b, _ := cmd.CombinedOutput()
	if !strings.Contains(string(b), "organization plugin") {
		t.Fatalf("a flag above the organization's level is refused: %s", b)
	}
}

func writePluginFile(t *testing.T, home, body string) {
	t.Helper()
	dir := filepath.Join(home, "config", "plugins", "org", "acme")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	src := "ID = \"4c2b8f0e-acme\"\nNAME = \"Acme\"\nVERSION = \"1.0.0\"\nTYPE = \"CONFIGURATION\"\nCONFIG = {}\nCONFIG[\"SETTINGS\"] = {}\n" + body + "\n"
	if err := os.WriteFile(filepath.Join(dir, "plugin.lua"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestMCPServeOverHTTP starts `mcp serve --http` on a loopback port and
// drives it with the SDK's streamable HTTP client and the token it wrote.
func TestMCPServeOverHTTP(t *testing.T) {
	home := t.TempDir()
	tokenFile := filepath.Join(home, "mcp-token")
	cmd := exec.Command(binary, "mcp", "serve", "--http", "127.0.0.1:0", "--token-file", tokenFile, "--confidence", "LOW")
	cmd.Env = stewardEnv(home)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
	})
	lines := bufio.NewScanner(stderr)
	var url string
	deadline := time.After(30 * time.Second)
	found := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`serving MCP at (http://127\.0\.0\.1:\d+/mcp)`)
		for lines.Scan() {
			if m := re.FindStringSubmatch(lines.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case url = <-found:
	case <-deadline:
		t.Fatal("steward mcp serve --http did not say where it listens")
	}
	token, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(tokenFile); fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v", fi.Mode().Perm())
	}
	// Without the token: 401.
	resp, err := http.Post(url, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the token: %d", resp.StatusCode)
	}
	hc := &http.Client{Transport: bearerTransport{strings.TrimSpace(string(token))}}
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := toolNames(t, cs); !slices.Contains(got, "read_web_page") {
		t.Fatalf("tools over HTTP: %v", got)
	}
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}
