package app

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stewardhq/steward/config"
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
	env["ANTHROPIC_API_KEY"] = "sk-ant-env"
	rp, err = a.ResolveProvider(context.Background(), ProviderFlags{Provider: "anthropic"})
	if err != nil || rp.APIKey != "sk-ant-env" {
		t.Fatalf("the environment comes first: %+v %v", rp, err)
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
