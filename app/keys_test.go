package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stewardhq/steward/config"
	"github.com/stewardhq/steward/policy"
)

// TestStoredKeyIsUsedAfterTheEnvironment: a key stored with `steward keys
// set` finds a provider when no flag, setting or organization names one,
// and the environment's key still comes first.
func TestStoredKeyIsUsedAfterTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"STEWARD_NO_OLLAMA_PROBE": "1"}
	a, err := Open(context.Background(), Options{ConfigDir: filepath.Join(dir, "config"), DataDir: filepath.Join(dir, "data"), Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	a.Secrets = &config.FileSecrets{Path: filepath.Join(dir, "secrets.json")}
	if _, err := a.ResolveProvider(context.Background(), ProviderFlags{}); !errors.Is(err, ErrNoProvider) {
		t.Fatalf("without any key: %v", err)
	}
	tgt, err := a.ProviderKeyTarget("anthropic")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.SetProviderKey(tgt, "sk-ant-stored"); err != nil {
		t.Fatal(err)
	}
	rp, err := a.ResolveProvider(context.Background(), ProviderFlags{})
	if err != nil || rp.Kind != "anthropic" || rp.APIKey != "sk-ant-stored" || rp.From != "keys" {
		t.Fatalf("the stored key must be found: %+v %v", rp, err)
	}
	rp, err = a.ResolveProvider(context.Background(), ProviderFlags{Provider: "anthropic"})
	if err != nil || rp.APIKey != "sk-ant-stored" {
		t.Fatalf("--provider anthropic must use the stored key: %+v %v", rp, err)
	}
	if want := "stored with steward keys set in " + filepath.Join(dir, "secrets.json"); !strings.HasPrefix(rp.KeyFrom, want) || a.KindKeyFrom("anthropic") != rp.KeyFrom {
		t.Errorf("where the key comes from: %q (kind %q), want %q", rp.KeyFrom, a.KindKeyFrom("anthropic"), want)
	}
	env["ANTHROPIC_API_KEY"] = "sk-ant-env"
	rp, err = a.ResolveProvider(context.Background(), ProviderFlags{Provider: "anthropic"})
	if err != nil || rp.APIKey != "sk-ant-env" || rp.KeyFrom != "in $ANTHROPIC_API_KEY" {
		t.Fatalf("the environment comes first: %+v %v", rp, err)
	}
	if from := a.KindKeyFrom("groq"); from != "" {
		t.Errorf("a kind without a key: %q", from)
	}
	if _, err := a.ProviderKeyTarget("nosuch"); err == nil {
		t.Fatal("an unknown provider must be refused")
	}
	keys, err := a.ProviderKeys()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k.Name == "anthropic" && (k.Where == "" || k.EnvSet != "ANTHROPIC_API_KEY") {
			t.Fatalf("keys list entry: %+v", k)
		}
	}
}

// TestUnreadableUserSecuritySettingsCountAsStrictest: a misspelt level in
// settings.json counts as HIGH, and every command names file and line.
func TestUnreadableUserSecuritySettingsCountAsStrictest(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	os.MkdirAll(cfg, 0o700)
	os.WriteFile(filepath.Join(cfg, "settings.json"), []byte("{\n  \"version\": 2,\n  \"minimum_confidence\": {\n    \"read_web_page\": \"HIHG\"\n  }\n}\n"), 0o600)
	a, err := Open(context.Background(), Options{ConfigDir: cfg, DataDir: filepath.Join(dir, "data"), Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if m := a.Policy.MinimumConfidence([]string{"read_web_page"}, policy.Low); m.Level != policy.High {
		t.Fatalf("an unreadable user level must count as HIGH, got %v", m.Level)
	}
	notices := strings.Join(a.Notices(), "\n")
	if !strings.Contains(notices, filepath.Join(cfg, "settings.json")+":4: minimum_confidence[\"read_web_page\"]") {
		t.Fatalf("notices: %q", notices)
	}
}
