package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stewardhq/steward/internal/confluencetest"
)

// testnetBinary is steward built with the tag steward_testnet: the same
// program, plus a made-up network read from STEWARD_TESTNET_* (see
// testnet_on.go), so that it can reach a fake wiki "on the intranet" that
// is really on loopback. Built once, on first use, next to the plain
// binary, in the directory TestMain removes when every test is done (so
// that no test removes it under another).
var testnetBinary = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(filepath.Dir(binary), "steward-testnet")
	if out, err := exec.Command("go", "build", "-tags", "steward_testnet", "-o", bin, ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("building steward with the test network: %v\n%s", err, out)
	}
	return bin, nil
})

// The wiki's made-up address on the intranet.
const (
	e2eWikiHost = "wiki.example.com"
	e2eWikiIP   = "10.20.30.40"
	e2ePAT      = "pat-e2e-0123456789-secret"
)

// TestConfluenceEndToEnd runs the built binary against a fake Confluence
// Data Center on loopback, which it believes on a private address of the
// intranet, with a scripted model: search_confluence finds the VPN page,
// read_web_page opens the hit, and afterwards the chat, which now requires
// HIGH, refuses a cloud provider. Once with the REST API and a personal
// access token, once with the search page.
func TestConfluenceEndToEnd(t *testing.T) {
	bin, err := testnetBinary()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"REST", "SEARCH_PAGE"} {
		t.Run(mode, func(t *testing.T) { confluenceEndToEnd(t, bin, mode) })
	}
}

func confluenceEndToEnd(t *testing.T, bin, mode string) {
	fake := confluencetest.Start(t, confluencetest.Options{Layout: confluencetest.DataCenter, Context: "/confluence", PAT: e2ePAT}, e2eWikiHost)
	u, _ := url.Parse(fake.HTTP.URL)
	port := u.Port()
	home := t.TempDir()
	certFile := filepath.Join(home, "wiki-ca.pem")
	if err := os.WriteFile(certFile, confluencetest.PEM(fake.Cert), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"STEWARD_TESTNET_HOSTS=" + e2eWikiHost + "=" + e2eWikiIP,
		"STEWARD_TESTNET_SERVER=" + u.Host,
		"SSL_CERT_FILE=" + certFile,
		"OPENAI_API_KEY=sk-e2e-cloud-provider",
	}
	base := "https://" + e2eWikiHost + ":" + port + "/confluence/"
	cfg := filepath.Join(home, "config")
	os.MkdirAll(cfg, 0o700)
	settings := fmt.Sprintf(`{"version":2,"tools":{"search_confluence":{"baseUrl":%q,"mode":%q},"read_web_page":{"allowedPrivateHosts":%q}}}`,
		base, mode, e2eWikiHost)
	if err := os.WriteFile(filepath.Join(cfg, "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	if mode == "REST" {
		// The token goes where secrets go (here the user-only file), read
		// from stdin, never from a flag.
		if r := runBinary(t, bin, home, e2ePAT+"\n", env, "settings", "set", "search_confluence.personalAccessToken", "-"); r.code != 0 {
			t.Fatalf("settings set: %d %s", r.code, r.stderr)
		}
		if r := runBinary(t, bin, home, "", env, "settings", "get", "search_confluence.personalAccessToken"); !strings.Contains(r.stdout, "(secret set, stored in ") || strings.Contains(r.stdout, e2ePAT) {
			t.Fatalf("settings get: %q", r.stdout)
		}
	}

	hit := base + "display/IT/VPN+setup"
	const phrase = "vpn client software centre"
	p := newScripted(t,
		toolReply("call_1", "search_confluence", fmt.Sprintf(`{"query":%q}`, phrase)),
		toolReply("call_2", "read_web_page", fmt.Sprintf(`{"url":%q}`, hit)),
		textReply("Install the VPN client from the software centre."),
	)
	r := runBinary(t, bin, home, "", env, "ask", "--json", "--provider", "vllm", "--base-url", p.baseURL(),
		"--tools", "search_confluence", "How do I set up the VPN at home?")
	if r.code != 0 {
		t.Fatalf("ask: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var statuses []string
	var traces []string
	var sources string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		switch ev["type"] {
		case "trace":
			tr := ev["trace"].(map[string]any)
			statuses = append(statuses, fmt.Sprintf("%s:%s", tr["name"], tr["status"]))
			b, _ := json.Marshal(tr)
			traces = append(traces, string(b))
			if tr["status"] != "SUCCESS" {
				t.Errorf("trace %v", tr)
			}
		case "sources":
			b, _ := json.Marshal(ev["sources"])
			sources = string(b)
		}
	}
	if got := strings.Join(statuses, " "); got != "search_confluence:SUCCESS read_web_page:SUCCESS" {
		t.Fatalf("traces %s\nstderr %s", got, r.stderr)
	}
	// Selecting search_confluence offered read_web_page too.
	tools, _ := json.Marshal(p.request(0)["tools"])
	if !strings.Contains(string(tools), `"search_confluence"`) || !strings.Contains(string(tools), `"read_web_page"`) {
		t.Fatalf("offered tools %s", tools)
	}
	// The model got the hit from the search, then the page, filtered.
	second, _ := json.Marshal(p.request(1)["messages"])
	if !strings.Contains(string(second), hit) {
		t.Fatalf("the hit's address did not reach the model: %s", second)
	}
	third, _ := json.Marshal(p.request(2)["messages"])
	if !strings.Contains(string(third), "accepts connections from managed devices only") {
		t.Fatalf("the wiki page did not reach the model: %s", third)
	}
	if !strings.Contains(sources, hit) {
		t.Fatalf("sources %s", sources)
	}
	// The phrase is masked in the traces.
	if strings.Contains(traces[0], phrase) {
		t.Fatalf("the trace shows the query: %s", traces[0])
	}
	// What reached the fake: the wiki's host, and in REST mode the token.
	for _, q := range fake.Requests() {
		if q.Host != e2eWikiHost+":"+port {
			t.Errorf("a request reached the fake for %s", q.Host)
		}
		if auth := q.Header.Get("Authorization"); mode == "REST" && strings.Contains(q.Path, "/rest/") && auth != "Bearer "+e2ePAT {
			t.Errorf("REST request with Authorization %q", auth)
		} else if !strings.Contains(q.Path, "/rest/") && auth != "" {
			t.Errorf("a page request carried Authorization %q", auth)
		}
	}

	// The chat now requires HIGH: resumed with a cloud provider (MEDIUM),
	// it is refused before anything is sent.
	id := listFirstChatID(t, home)
	cloud := newScripted(t, textReply("never sent"))
	r2 := runBinary(t, bin, home, "And on my phone?\n", env, "chat", "--resume", id, "--provider", "openai", "--base-url", cloud.baseURL())
	if r2.code == 0 || !strings.Contains(r2.stderr, "HIGH") || !strings.Contains(r2.stderr, "confidence") {
		t.Fatalf("resume with a cloud provider: exit %d\n%s\n%s", r2.code, r2.stdout, r2.stderr)
	}
	if cloud.request(0) != nil {
		t.Fatal("the cloud provider received the chat")
	}
	// The token is in no output, no stored chat and no settings file.
	for name, text := range map[string]string{"stdout": r.stdout + r2.stdout, "stderr": r.stderr + r2.stderr} {
		if strings.Contains(text, e2ePAT) {
			t.Errorf("%s holds the token", name)
		}
	}
	for _, f := range []string{filepath.Join(home, "data", "steward.db"), filepath.Join(cfg, "settings.json")} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), e2ePAT) {
			t.Errorf("%s holds the token", f)
		}
		// The search page is the source of SEARCH_PAGE (as the seed says),
		// and its address holds the phrase; REST's sources are the hits.
		if mode == "REST" && strings.HasSuffix(f, ".db") && strings.Contains(string(b), phrase) {
			t.Errorf("the stored chat holds the masked query")
		}
	}
	show := runBinary(t, bin, home, "", env, "chats", "show", "--json", id)
	if !strings.Contains(show.stdout, "search_confluence") || !strings.Contains(show.stdout, "*****") {
		t.Fatalf("the stored trace: %s", show.stdout)
	}
}

// The binary users get never reads a made-up network from its
// environment: only the tag steward_testnet builds it in.
func TestProductionBuildHasNoTestNetwork(t *testing.T) {
	env := map[string]string{"STEWARD_TESTNET_HOSTS": e2eWikiHost + "=" + e2eWikiIP, "STEWARD_TESTNET_SERVER": "127.0.0.1:1"}
	if testNetwork(func(k string) string { return env[k] }) != nil {
		t.Fatal("this build reads STEWARD_TESTNET_*; it must be built with the tag steward_testnet only")
	}
}
