package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stewardhq/steward/chat"
	"github.com/stewardhq/steward/config"
	"github.com/stewardhq/steward/redact"
)

// Every configured secret the App reads is known to its redaction set:
// provider keys from the environment, the organization's keys, whatever
// the secret store gives; and the chat store never writes one.
func TestRedactionLearnsEverySecretAndGuardsTheStore(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "disabled:")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	plugin := filepath.Join(cfg, "plugins", "org", "it")
	if err := os.MkdirAll(plugin, 0o755); err != nil {
		t.Fatal(err)
	}
	enc, err := config.Encrypt("corp-plain-key-7788", "bkw1wA2amsn0En41WFGHj0i/3lBvXS7ar8Rum8/BvV4=", []byte("0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(plugin, "plugin.lua"), []byte(`ID = "it"
NAME = "IT"
VERSION = "1"
TYPE = "CONFIGURATION"
CONFIG = {}
CONFIG["LLM_PROVIDERS"] = {}
CONFIG["LLM_PROVIDERS"][#CONFIG["LLM_PROVIDERS"]+1] = { ["Id"] = "corp", ["InstanceName"] = "Corp", ["UsedLLMProvider"] = "OPEN_AI", ["Host"] = "NONE", ["Hostname"] = "https://llm.corp.example/v1/", ["Model"] = { ["Id"] = "gpt-4o" }, ["APIKey"] = "`+enc+`" }
`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ANTHROPIC_API_KEY": "sk-ant-env-key-123456", config.EncryptionSecretEnv: "bkw1wA2amsn0En41WFGHj0i/3lBvXS7ar8Rum8/BvV4="}
	set := &redact.Set{}
	a, err := Open(context.Background(), Options{ConfigDir: cfg, DataDir: filepath.Join(dir, "data"), Getenv: func(k string) string { return env[k] }, Secrets: set})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Secrets.Set("mailbox::work", "secret", "imap-password-42"); err != nil {
		t.Fatal(err)
	}
	// A fresh process knows the stored secret once it reads it.
	set2 := &redact.Set{}
	b, err := Open(context.Background(), Options{ConfigDir: cfg, DataDir: filepath.Join(dir, "data"), Getenv: func(k string) string { return env[k] }, Secrets: set2})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Secrets.Get("mailbox::work", "secret"); err != nil {
		t.Fatal(err)
	}
	text := "keys: sk-ant-env-key-123456 imap-password-42"
	if got := set2.String(text); got != "keys: [REDACTED] [REDACTED]" {
		t.Fatalf("redacted %q", got)
	}
	if len(a.Org.Providers) != 1 || a.Org.Providers[0].APIKey != "corp-plain-key-7788" {
		t.Fatalf("the organization's provider did not load: %+v %v", a.Org.Providers, a.Org.Problems)
	}
	if rp, err := a.ResolveProvider(context.Background(), ProviderFlags{Provider: "corp"}); err != nil || rp.KeyFrom != `from the organization plugin "IT"` {
		t.Fatalf("where the organization's key comes from: %v %+v", err, rp)
	}
	if got := set.String("corp-plain-key-7788 " + enc + " bkw1wA2amsn0En41WFGHj0i/3lBvXS7ar8Rum8/BvV4="); got != redact.Mask+" "+enc+" "+redact.Mask {
		t.Fatalf("the organization's provider key and secret are not redacted: %q", got)
	}
	th := NewThread()
	th.AddMessage(chat.Message{Role: chat.RoleUser, Text: "my key is sk-ant-env-key-123456"})
	st, err := b.OpenStore(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Save(context.Background(), ToStored(th, nil)); err != nil {
		t.Fatal(err)
	}
	c, err := st.Load(context.Background(), th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(c.Messages[0].Text, "env-key") || !strings.Contains(c.Messages[0].Text, redact.Mask) || strings.Contains(c.Title, "env-key") {
		t.Fatalf("stored %q (title %q)", c.Messages[0].Text, c.Title)
	}
}
