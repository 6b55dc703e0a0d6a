package config

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/policy"
)

const header = `ID = "%s"
NAME = "%s"
VERSION = "1.0.0"
TYPE = "CONFIGURATION"
CONFIG = {}
CONFIG["SETTINGS"] = {}
`

func writePlugin(t *testing.T, root, group, id, body string) string {
	t.Helper()
	dir := filepath.Join(root, "plugins", group, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "plugin.lua")
	src := strings.Replace(strings.Replace(header, "%s", id, 1), "%s", "Plugin "+id, 1) + body
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func problemsFor(eff *Effective, file string) []Problem {
	var out []Problem
	for _, p := range eff.Problems {
		if p.File == file {
			out = append(out, p)
		}
	}
	return out
}

func TestBrokenPluginsAreReportedAndOthersStillLoad(t *testing.T) {
	root := t.TempDir()
	good := writePlugin(t, root, "org", "good", `CONFIG["SETTINGS"]["DataConfidence.ConfidenceScheme"] = "TRUST_EUROPE"`+"\n")
	cases := []struct {
		id, body, want string
		line           int
	}{
		{"syntax", "x = = 1\n", "plugin.lua", 7},
		{"unknownfield", `CONFIG["SETTINGS"]["DataTools.NoSuchThing"] = true` + "\n", `unknown setting "DataTools.NoSuchThing"`, 7},
		{"wrongtype", `CONFIG["SETTINGS"]["DataTools.EnableTools"] = "yes"` + "\n", "DataTools.EnableTools must be true or false, but is a string", 7},
		{"loop", "while true do end\n", "time limit", 0},
		{"membomb", "local t = {}\nfor i = 1, 1e9 do t[i] = string.rep('x', 4096) .. i end\n", "limit", 0},
		{"concatbomb", "local s = 'xxxxxxxxxxxxxxxx'\nfor i = 1, 40 do s = s .. s end\n", "limit", 0},
		{"repbomb", "local s = string.rep('x', 2^31)\n", "string.rep would build", 0},
		{"escape", `require("../../etc/passwd")` + "\n", "only files next to plugin.lua", 0},
		{"noio", `io.open("/etc/passwd")` + "\n", "io", 0},
		{"noos", `os.execute("true")` + "\n", "os", 0},
		{"badlevel", `CONFIG["SETTINGS"]["DataTools.MinimumProviderConfidenceByToolId"] = { ["web_search"] = "SUPER" }` + "\n", "SUPER", 7},
	}
	files := map[string]string{}
	for _, c := range cases {
		files[c.id] = writePlugin(t, root, "local", c.id, c.body)
	}
	start := time.Now()
	eff, err := Load(context.Background(), root, Options{Limits: Limits{Time: 2 * time.Second, Memory: 64 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded %d plugins with %d problems in %v", len(eff.Plugins), len(eff.Problems), time.Since(start))
	if eff.Scheme().Scheme != policy.TrustEurope {
		t.Fatalf("the good plugin must still apply, got scheme %v; problems: %v", eff.Scheme().Scheme, eff.Problems)
	}
	if len(problemsFor(eff, good)) != 0 {
		t.Fatalf("the good plugin has problems: %v", problemsFor(eff, good))
	}
	for _, c := range cases {
		probs := problemsFor(eff, files[c.id])
		if len(probs) == 0 {
			t.Errorf("%s: no problem reported", c.id)
			continue
		}
		joined := ""
		for _, p := range probs {
			joined += p.String() + "\n"
		}
		if c.want != "" && !strings.Contains(joined, c.want) {
			t.Errorf("%s: problems %q do not mention %q", c.id, joined, c.want)
		}
		if c.line > 0 && probs[0].Line != c.line {
			t.Errorf("%s: line %d, want %d (%s)", c.id, probs[0].Line, c.line, joined)
		}
	}
}

func TestOrganizationRanksAboveLocalAndPriorityDecides(t *testing.T) {
	root := t.TempDir()
	writePlugin(t, root, "org", "org-a", `PRIORITY = 5
CONFIG["SETTINGS"]["web_search.maxResults"] = "7"
CONFIG["SETTINGS"]["DataApp.EnabledPreviewFeatures"] = { "PRE_RAG_2024" }
`)
	writePlugin(t, root, "org", "org-b", `PRIORITY = 1
CONFIG["SETTINGS"]["web_search.maxResults"] = "3"
CONFIG["SETTINGS"]["read_web_page.timeoutSeconds"] = "30"
CONFIG["SETTINGS"]["read_web_page.timeoutSeconds.AllowUserOverride"] = true
CONFIG["SETTINGS"]["DataApp.EnabledPreviewFeatures"] = { "PRE_MAILBOXES_2026" }
`)
	local := writePlugin(t, root, "local", "mine", `PRIORITY = 100
CONFIG["SETTINGS"]["web_search.maxResults"] = "20"
CONFIG["SETTINGS"]["web_search.defaultLanguage"] = "de"
`)
	eff, err := Load(context.Background(), root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := eff.ToolSetting("web_search", "maxResults")
	if m.Value != "7" || m.Plugin != "Plugin org-a" || !m.Locked {
		t.Fatalf("higher PRIORITY org plugin must win and lock: %+v", m)
	}
	m, _ = eff.ToolSetting("read_web_page", "timeoutSeconds")
	if m.Locked || m.Value != "30" {
		t.Fatalf("AllowUserOverride makes an editable default: %+v", m)
	}
	m, _ = eff.ToolSetting("web_search", "defaultLanguage")
	if m.Value != "de" || m.Org {
		t.Fatalf("a local plugin may set what no org plugin manages: %+v", m)
	}
	found := false
	for _, p := range problemsFor(eff, local) {
		if strings.Contains(p.Message, "managed by the organization plugin") {
			found = true
		}
	}
	if !found {
		t.Fatalf("the ignored local value must be reported: %v", eff.Problems)
	}
	if got := eff.StringList("DataApp.EnabledPreviewFeatures"); len(got) != 2 {
		t.Fatalf("preview features add up across plugins: %v", got)
	}
}

func TestRequireLoadsSiblingFilesOnly(t *testing.T) {
	root := t.TempDir()
	p := writePlugin(t, root, "org", "icon", `require("icon")
CONFIG["SETTINGS"]["DataConfidence.ConfidenceScheme"] = SCHEME
`)
	if err := os.WriteFile(filepath.Join(filepath.Dir(p), "icon.lua"), []byte(`ICON_SVG = "<svg/>"
SCHEME = "LOCAL_TRUST_ONLY"`), 0o644); err != nil {
		t.Fatal(err)
	}
	eff, err := Load(context.Background(), root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if eff.Scheme().Scheme != policy.LocalTrustOnly {
		t.Fatalf("require of a sibling file: %v", eff.Problems)
	}
}

func TestProvidersAndEncryptedKeys(t *testing.T) {
	secretBytes := make([]byte, 32)
	rand.Read(secretBytes)
	secret := base64.StdEncoding.EncodeToString(secretBytes)
	salt := make([]byte, 16)
	rand.Read(salt)
	enc, err := Encrypt("sk-test-123", secret, salt)
	if err != nil {
		t.Fatal(err)
	}
	if plain, err := Decrypt(enc, secret); err != nil || plain != "sk-test-123" {
		t.Fatalf("round trip: %q %v", plain, err)
	}
	root := t.TempDir()
	file := writePlugin(t, root, "org", "prov", `CONFIG["LLM_PROVIDERS"] = {}
CONFIG["LLM_PROVIDERS"][#CONFIG["LLM_PROVIDERS"]+1] = {
  ["Id"] = "p1", ["InstanceName"] = "Company GPT", ["UsedLLMProvider"] = "OPEN_AI", ["Host"] = "NONE",
  ["Hostname"] = "", ["APIKey"] = "`+enc+`", ["Model"] = { ["Id"] = "gpt-4o", ["DisplayName"] = "GPT-4o" } }
CONFIG["LLM_PROVIDERS"][#CONFIG["LLM_PROVIDERS"]+1] = {
  ["Id"] = "p2", ["InstanceName"] = "Plain", ["UsedLLMProvider"] = "OPEN_AI", ["Host"] = "NONE",
  ["APIKey"] = "sk-plaintext", ["Model"] = { ["Id"] = "gpt-4o" } }
CONFIG["LLM_PROVIDERS"][#CONFIG["LLM_PROVIDERS"]+1] = { ["Id"] = "p3", ["InstanceName"] = "No host" , ["UsedLLMProvider"] = "OPEN_AI", ["Model"] = { ["Id"] = "x" } }
`)
	eff, err := Load(context.Background(), root, Options{Getenv: func(k string) string {
		if k == EncryptionSecretEnv {
			return secret
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(eff.Providers) != 2 || eff.Providers[0].APIKey != "sk-test-123" {
		t.Fatalf("providers: %+v", eff.Providers)
	}
	if eff.Providers[1].APIKey != "" {
		t.Fatal("a plaintext key from a plugin must be ignored")
	}
	all := ""
	for _, p := range problemsFor(eff, file) {
		all += p.String() + "\n"
	}
	if !strings.Contains(all, "plaintext") || !strings.Contains(all, "Host") {
		t.Fatalf("problems must name the plaintext key and the missing Host: %s", all)
	}
	if strings.Contains(all, "sk-plaintext") || strings.Contains(all, "sk-test") {
		t.Fatal("a problem must never contain a secret")
	}
}

func TestDecryptRefusals(t *testing.T) {
	for _, c := range []struct{ v, secret string }{
		{"plain", "x"},
		{EncPrefix + "!!!", base64.StdEncoding.EncodeToString(make([]byte, 32))},
		{EncPrefix + base64.StdEncoding.EncodeToString(make([]byte, 48)), base64.StdEncoding.EncodeToString(make([]byte, 32))},
		{EncPrefix + "AAAA", ""},
		{EncPrefix + "AAAA", "short"},
	} {
		if _, err := Decrypt(c.v, c.secret); err == nil {
			t.Errorf("Decrypt(%q) must fail", c.v)
		}
	}
}

func FuzzLoadPlugin(f *testing.F) {
	f.Add(`CONFIG["SETTINGS"]["DataTools.EnableTools"] = false`)
	f.Add(`CONFIG["LLM_PROVIDERS"] = { { Id = "a" } }`)
	f.Add(`x = {` + strings.Repeat("{", 50))
	f.Add(`CONFIG["SETTINGS"]["a.b"] = { 1, 2, { c = 3 } }`)
	f.Add(`PRIORITY = "high"`)
	f.Fuzz(func(t *testing.T, body string) {
		dir := t.TempDir()
		p := filepath.Join(dir, "plugin.lua")
		if err := os.WriteFile(p, []byte(strings.Replace(strings.Replace(header, "%s", "fz", 1), "%s", "fz", 1)+body), 0o644); err != nil {
			t.Fatal(err)
		}
		pl, probs, err := LoadPlugin(context.Background(), p, false, Options{Limits: Limits{Time: 200 * time.Millisecond, Memory: 32 << 20}})
		if err == nil && pl == nil {
			t.Fatal("no plugin and no error")
		}
		if err != nil && errors.Is(err, context.Canceled) {
			t.Fatal("unexpected cancellation")
		}
		for _, pr := range probs {
			if pr.File != p || pr.Message == "" {
				t.Fatalf("problem without file or message: %+v", pr)
			}
		}
	})
}

// TestMemoryLimitEndsBombs gives the time limit room, so that only the
// memory watchdog can end the plugins: which of the two limits fires first
// in the test above depends on how busy the machine is.
func TestMemoryLimitEndsBombs(t *testing.T) {
	for name, body := range map[string]string{
		"table":  "local t = {}\nfor i = 1, 1e9 do t[i] = string.rep('x', 4096) .. i end\n",
		"concat": "local s = 'xxxxxxxxxxxxxxxx'\nfor i = 1, 40 do s = s .. s end\n",
	} {
		p := filepath.Join(t.TempDir(), "plugin.lua")
		os.WriteFile(p, []byte(body), 0o644)
		_, err := runLua(context.Background(), p, Limits{Time: 60 * time.Second, Memory: 16 << 20})
		if !errors.Is(err, ErrMemoryLimit) {
			t.Errorf("%s: got %v, want the memory limit", name, err)
		}
	}
}
