package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// configFiles returns every file under the configuration directory with
// its content, to show what a command wrote.
func configFiles(t *testing.T, home string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.Walk(filepath.Join(home, "config"), func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			b, _ := os.ReadFile(p)
			out[p] = string(b)
		}
		return nil
	})
	return out
}

// TestSettingsSetValidatesLikeConfigCheck: a value the tool's checks refuse
// is not saved, exits 2 and names the field and what is allowed (issue 15).
func TestSettingsSetValidatesLikeConfigCheck(t *testing.T) {
	home := t.TempDir()
	if r := steward(t, home, "", nil, "settings", "set", "web_search.searxng.baseUrl", "https://search.example.org"); r.code != 0 {
		t.Fatalf("a valid value: %d %s", r.code, r.stderr)
	}
	before := configFiles(t, home)
	for _, c := range []struct{ key, value, want string }{
		{"web_search.maxResults", "abc", "whole number from 1 to 20"},
		{"web_search.searxng.baseUrl", "ht!tp://x y", "absolute http or https address"},
		{"web_search.searxng.baseUrl", "ftp://example.org", "absolute http or https address"},
		{"read_web_page.maxContentCharacters", "lots", "whole number"},
	} {
		r := steward(t, home, "", nil, "settings", "set", c.key, c.value)
		if r.code != 2 || !strings.Contains(r.stderr, c.key) || !strings.Contains(r.stderr, c.want) || !strings.Contains(r.stderr, "nothing was saved") {
			t.Errorf("settings set %s %q: exit %d, stderr %q", c.key, c.value, r.code, r.stderr)
		}
	}
	if after := configFiles(t, home); len(after) != len(before) || after[filepath.Join(home, "config", "settings.json")] != before[filepath.Join(home, "config", "settings.json")] {
		t.Fatalf("a refused value changed the files:\nbefore %v\nafter %v", before, after)
	}
	if r := steward(t, home, "", nil, "config", "check"); r.code != 0 {
		t.Fatalf("config check after the refusals: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

// TestSecretsAreNeverArguments: a secret on the command line is refused
// before anything is stored; from stdin it is stored, and `settings get`
// names the store without printing it (issue 18).
func TestSecretsAreNeverArguments(t *testing.T) {
	home := t.TempDir()
	const secret = "brave-secret-0123456789"
	for _, args := range [][]string{
		{"settings", "set", "web_search.brave.apiKey", secret},
		{"keys", "set", "openai", secret},
	} {
		r := steward(t, home, "", nil, args...)
		if r.code != 2 || !strings.Contains(r.stderr, "shell history") {
			t.Errorf("%v: exit %d stderr %q", args[:3], r.code, r.stderr)
		}
	}
	for p, content := range configFiles(t, home) {
		if strings.Contains(content, secret) {
			t.Fatalf("a refused secret was written to %s", p)
		}
	}
	if r := steward(t, home, secret+"\n", nil, "settings", "set", "web_search.brave.apiKey", "-"); r.code != 0 || strings.Contains(r.stderr, secret) {
		t.Fatalf("from stdin: %d %q", r.code, r.stderr)
	}
	r := steward(t, home, "", nil, "settings", "get", "web_search.brave.apiKey")
	if r.code != 0 || strings.Contains(r.stdout, secret) || !strings.Contains(r.stdout, "secret set, stored in "+filepath.Join(home, "config", "secrets.json")) {
		t.Fatalf("get must name the store the secret is in: %q", r.stdout)
	}
	if r := steward(t, home, "", nil, "settings", "get", "web_search.tavily.apiKey"); !strings.Contains(r.stdout, "secret not set") {
		t.Fatalf("get of an unset secret: %q", r.stdout)
	}
	fi, err := os.Stat(filepath.Join(home, "config", "secrets.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("secrets file: %v %v", fi, err)
	}
}

// recordingProvider is a Chat Completions server that records the
// Authorization header of each request.
type recordingProvider struct {
	*httptest.Server
	mu    sync.Mutex
	auth  []string
	tools []string
}

func newRecordingProvider(t *testing.T) *recordingProvider {
	rp := &recordingProvider{}
	rp.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req map[string]any
		json.Unmarshal(body, &req)
		tools, _ := json.Marshal(req["tools"])
		rp.mu.Lock()
		rp.auth = append(rp.auth, r.Header.Get("Authorization"))
		rp.tools = append(rp.tools, string(tools))
		rp.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, textReply("answered"))
	}))
	t.Cleanup(rp.Close)
	return rp
}

// TestKeysSetListRemove stores a provider key from stdin, lists where it
// is without showing it, uses it after the environment, and removes it
// (issue 15).
func TestKeysSetListRemove(t *testing.T) {
	home := t.TempDir()
	p := newRecordingProvider(t)
	const key = "sk-stored-4242"
	if r := steward(t, home, key+"\n", nil, "keys", "set", "openai", "-"); r.code != 0 || strings.Contains(r.stderr, key) {
		t.Fatalf("keys set: %d %q", r.code, r.stderr)
	}
	r := steward(t, home, "", nil, "keys", "list")
	if r.code != 0 || strings.Contains(r.stdout, key) || !strings.Contains(r.stdout, "openai") || !strings.Contains(r.stdout, "secrets.json") {
		t.Fatalf("keys list: %d %q", r.code, r.stdout)
	}
	if r := steward(t, home, "", nil, "ask", "--provider", "openai", "--base-url", p.URL+"/v1/", "hi"); r.code != 0 {
		t.Fatalf("ask with the stored key: %d %s", r.code, r.stderr)
	}
	if r := steward(t, home, "", []string{"OPENAI_API_KEY=sk-env"}, "ask", "--provider", "openai", "--base-url", p.URL+"/v1/", "hi"); r.code != 0 {
		t.Fatalf("ask with the environment's key: %d %s", r.code, r.stderr)
	}
	if r := steward(t, home, "", nil, "keys", "remove", "openai"); r.code != 0 {
		t.Fatalf("keys remove: %d %s", r.code, r.stderr)
	}
	if r := steward(t, home, "", nil, "keys", "list"); strings.Contains(r.stdout, "openai") {
		t.Fatalf("the removed key is still listed: %q", r.stdout)
	}
	if r := steward(t, home, "", nil, "keys", "set", "nosuchprovider", "-"); r.code != 2 {
		t.Fatalf("an unknown provider: %d %s", r.code, r.stderr)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.auth) != 2 || p.auth[0] != "Bearer "+key || p.auth[1] != "Bearer sk-env" {
		t.Fatalf("the stored key must be used after the environment's: %q", p.auth)
	}
}

// TestSettingsDefaultProviderSelectionAndPreviews: the settings users
// expect, used by ask when no flag says otherwise (issue 15).
func TestSettingsDefaultProviderSelectionAndPreviews(t *testing.T) {
	home := t.TempDir()
	p := newRecordingProvider(t)
	os.MkdirAll(filepath.Join(home, "config"), 0o700)
	os.WriteFile(filepath.Join(home, "config", "settings.json"), []byte(`{"version":2,"providers":[{"id":"local","kind":"vllm","base_url":"`+p.URL+`/v1/"}]}`), 0o600)
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"settings", "set", "default_provider", "nosuch"}, 2},
		{[]string{"settings", "set", "default_provider", "local"}, 0},
		{[]string{"settings", "set", "selected_tools", "web_serch"}, 2},
		{[]string{"settings", "set", "selected_tools", "read_web_page"}, 0},
		{[]string{"settings", "set", "enabled_preview_features", "PRE_NOTHING"}, 2},
		{[]string{"settings", "set", "enabled_preview_features", "PRE_RAG_2024,PRE_MAILBOXES_2026"}, 0},
	} {
		if r := steward(t, home, "", nil, c.args...); r.code != c.code {
			t.Errorf("%v: exit %d, want %d (%s)", c.args, r.code, c.code, r.stderr)
		}
	}
	if r := steward(t, home, "", nil, "settings", "get", "default_provider"); strings.TrimSpace(r.stdout) != "default_provider = local" {
		t.Fatalf("get: %q", r.stdout)
	}
	if r := steward(t, home, "", nil, "ask", "hi"); r.code != 0 || !strings.Contains(r.stdout, "answered") {
		t.Fatalf("ask with the default provider: %d %s %s", r.code, r.stdout, r.stderr)
	}
	p.mu.Lock()
	tools := p.tools[0]
	p.mu.Unlock()
	if !strings.Contains(tools, `"read_web_page"`) || strings.Contains(tools, `"web_search"`) {
		t.Fatalf("ask without --tools must offer the saved selection: %s", tools)
	}
	// The previews make the mail tools present once a mailbox exists.
	if r := steward(t, home, "pw", nil, "mail", "add", "--id", "work", "--host", "127.0.0.1", "--username", "me", "--level", "HIGH"); r.code != 0 {
		t.Fatalf("mail add: %d %s", r.code, r.stderr)
	}
	if r := steward(t, home, "", nil, "tools", "--json"); !strings.Contains(r.stdout, `"search_mails"`) {
		t.Fatalf("with the previews on, the mail tools are present: %s", r.stdout)
	}
}

// TestMailSetSecret replaces a mailbox's secret from stdin and refuses it
// as an argument (issue 15).
func TestMailSetSecret(t *testing.T) {
	home := t.TempDir()
	if r := steward(t, home, "old-pass", nil, "mail", "add", "--id", "work", "--host", "127.0.0.1", "--username", "me"); r.code != 0 {
		t.Fatalf("mail add: %d %s", r.code, r.stderr)
	}
	if r := steward(t, home, "", nil, "mail", "set-secret", "work", "new-pass"); r.code != 2 || !strings.Contains(r.stderr, "shell history") {
		t.Fatalf("as an argument: %d %q", r.code, r.stderr)
	}
	if r := steward(t, home, "new-pass\n", nil, "mail", "set-secret", "nosuch", "-"); r.code != 2 || !strings.Contains(r.stderr, "work") {
		t.Fatalf("an unknown mailbox must name the known ones: %d %q", r.code, r.stderr)
	}
	if r := steward(t, home, "new-pass\n", nil, "mail", "set-secret", "work", "-"); r.code != 0 || strings.Contains(r.stderr, "new-pass") {
		t.Fatalf("set-secret: %d %q", r.code, r.stderr)
	}
	b, _ := os.ReadFile(filepath.Join(home, "config", "secrets.json"))
	if !strings.Contains(string(b), `"new-pass"`) || strings.Contains(string(b), "old-pass") {
		t.Fatalf("the secret was not replaced")
	}
}

// TestProvidersSaysWhereTheKeyComesFrom: `steward providers` names where
// each provider's key comes from (an environment variable, a key stored
// with `steward keys set`, the organization), never the key, and asks for
// the variable only where no key is found at all.
func TestProvidersSaysWhereTheKeyComesFrom(t *testing.T) {
	home := t.TempDir()
	const anthropicKey, mineKey = "sk-ant-stored-7731", "sk-mine-stored-5520"
	os.MkdirAll(filepath.Join(home, "config"), 0o700)
	os.WriteFile(filepath.Join(home, "config", "settings.json"), []byte(`{"version":2,"providers":[{"id":"mine","kind":"groq"}]}`), 0o600)
	if r := steward(t, home, anthropicKey+"\n", nil, "keys", "set", "anthropic", "-"); r.code != 0 {
		t.Fatalf("keys set anthropic: %d %s", r.code, r.stderr)
	}
	if r := steward(t, home, mineKey+"\n", nil, "keys", "set", "mine", "-"); r.code != 0 {
		t.Fatalf("keys set mine: %d %s", r.code, r.stderr)
	}
	env := []string{"OPENAI_API_KEY=sk-env-9090"}
	r := steward(t, home, "", env, "providers")
	if r.code != 0 {
		t.Fatalf("providers: %d %s", r.code, r.stderr)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(r.stdout, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			lines[f[0]] = l
		}
	}
	secrets := filepath.Join(home, "config", "secrets.json")
	for id, want := range map[string]string{
		"anthropic": "key stored with steward keys set in " + secrets,
		"mine":      "key stored with steward keys set in " + secrets,
		"openai":    "key in $OPENAI_API_KEY",
		"groq":      "no key: set $GROQ_API_KEY or store one with steward keys set groq",
		"ollama":    "self-hosted, no key needed",
	} {
		if !strings.Contains(lines[id], want) {
			t.Errorf("%s: %q, want %q", id, lines[id], want)
		}
	}
	for _, k := range []string{anthropicKey, mineKey, "sk-env-9090"} {
		if strings.Contains(r.stdout+r.stderr, k) {
			t.Errorf("providers printed a key: %s", r.stdout)
		}
	}
	r = steward(t, home, "", env, "providers", "--json")
	var out struct {
		Providers []struct{ ID, Key string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("providers --json: %v: %s", err, r.stdout)
	}
	for _, p := range out.Providers {
		if p.ID == "anthropic" && !strings.Contains(p.Key, "stored with steward keys set") {
			t.Errorf("providers --json: anthropic's key %q", p.Key)
		}
	}
}
