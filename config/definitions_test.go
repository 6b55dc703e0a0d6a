package config

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestOrganizationDefinitionsCannotBeRedefinedLocally: every kind of
// definition an organization plugin makes keeps the organization's
// version; the local one is refused with one problem naming both plugins.
// Two organization plugins still replace each other by priority.
func TestOrganizationDefinitionsCannotBeRedefinedLocally(t *testing.T) {
	defs := map[string]func(name string) string{
		"provider": func(n string) string {
			return `CONFIG["LLM_PROVIDERS"] = { { ["Id"] = "company", ["InstanceName"] = "` + n + `", ["UsedLLMProvider"] = "SELF_HOSTED", ["Host"] = "VLLM", ["Hostname"] = "http://127.0.0.1:8000", ["Model"] = { ["Id"] = "m" } } }` + "\n"
		},
		"embedding provider": func(n string) string {
			return `CONFIG["EMBEDDING_PROVIDERS"] = { { ["Id"] = "emb", ["Name"] = "` + n + `", ["UsedLLMProvider"] = "SELF_HOSTED", ["Host"] = "OLLAMA", ["Model"] = { ["Id"] = "m" } } }` + "\n"
		},
		"data source": func(n string) string {
			return `CONFIG["DATA_SOURCES"] = { { ["Id"] = "wiki", ["Name"] = "` + n + `", ["Type"] = "ERI_V1", ["Hostname"] = "https://eri.example.org", ["AuthMethod"] = "NONE", ["SecurityPolicy"] = "SELF_HOSTED", ["SelectedRetrievalId"] = "r" } }` + "\n"
		},
		"MCP server": func(n string) string {
			return `CONFIG["MCP_SERVERS"] = { { ["Id"] = "wiki", ["Name"] = "` + n + `", ["Command"] = "wiki-server" } }` + "\n"
		},
		"mailbox": func(n string) string {
			return `CONFIG["MAILBOXES"] = { { ["Id"] = "team", ["Name"] = "` + n + `", ["Host"] = "imap.example.org", ["Username"] = "u" } }` + "\n"
		},
	}
	names := func(e *Effective, kind string) string {
		switch kind {
		case "provider":
			return e.Providers[0].InstanceName
		case "embedding provider":
			return e.EmbeddingProviders[0].Name
		case "data source":
			return e.DataSources[0].Name
		case "MCP server":
			return e.MCPServers[0].Name
		}
		return e.Mailboxes[0].Name
	}
	for kind, def := range defs {
		root := t.TempDir()
		writePlugin(t, root, "org", "it", def("org"))
		local := writePlugin(t, root, "local", "mine", def("local"))
		eff, err := Load(context.Background(), root, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := names(eff, kind); got != "org" {
			t.Errorf("%s: the local plugin's definition won (%s)", kind, got)
		}
		probs := problemsFor(eff, local)
		if len(probs) != 1 || probs[0].Kind != ProblemConflict || !strings.Contains(probs[0].Message, `"Plugin it"`) || !strings.Contains(probs[0].Message, `"Plugin mine"`) || probs[0].Line != 7 {
			t.Errorf("%s: want one conflict naming both plugins at line 7, got %v", kind, probs)
		}
		// Between organization plugins, PRIORITY decides as before.
		root = t.TempDir()
		writePlugin(t, root, "org", "a", "PRIORITY = 1\n"+def("first"))
		writePlugin(t, root, "org", "b", "PRIORITY = 2\n"+def("second"))
		if eff, _ = Load(context.Background(), root, Options{}); names(eff, kind) != "second" || len(eff.Problems) != 0 {
			t.Errorf("%s: between organization plugins the later wins: %s %v", kind, names(eff, kind), eff.Problems)
		}
	}
	// Linked settings: the organization chose CUSTOM without a map; a
	// local map cannot raise a provider under it.
	root := t.TempDir()
	writePlugin(t, root, "org", "it", `CONFIG["SETTINGS"]["DataConfidence.ConfidenceScheme"] = "CUSTOM"`+"\n")
	writePlugin(t, root, "local", "mine", `CONFIG["SETTINGS"]["DataConfidence.CustomConfidenceScheme"] = { ["OPEN_AI"] = "HIGH" }`+"\n")
	eff, _ := Load(context.Background(), root, Options{})
	if c := eff.Scheme().ProviderConfidence("OPEN_AI"); c.String() != "UNKNOWN" {
		t.Fatalf("a local custom scheme raised OPEN_AI to %v under the organization's CUSTOM scheme", c)
	}
}

// TestLayeredSecrets: with a keyring, a secret stored in the file before
// is still read, moves to the keyring when set again, and Locate names
// where it is.
func TestLayeredSecrets(t *testing.T) {
	dir := t.TempDir()
	primary := &FileSecrets{Path: filepath.Join(dir, "keyring.json")}
	file := &FileSecrets{Path: filepath.Join(dir, "secrets.json")}
	l := &layeredSecrets{primary: primary, fallback: file}
	file.Set("tool::web_search", "brave.apiKey", "old")
	if v, ok, _ := l.Get("tool::web_search", "brave.apiKey"); !ok || v != "old" {
		t.Fatalf("the file's secret must still be read: %q %v", v, ok)
	}
	if where, _ := LocateSecret(l, "tool::web_search", "brave.apiKey"); where != file.Where() {
		t.Fatalf("locate: %q", where)
	}
	l.Set("tool::web_search", "brave.apiKey", "new")
	if _, ok, _ := file.Get("tool::web_search", "brave.apiKey"); ok {
		t.Fatal("the file's copy must go once the keyring has it")
	}
	if where, _ := LocateSecret(l, "tool::web_search", "brave.apiKey"); where != primary.Where() {
		t.Fatalf("locate after set: %q", where)
	}
	l.Delete("tool::web_search", "brave.apiKey")
	if where, _ := LocateSecret(l, "tool::web_search", "brave.apiKey"); where != "" {
		t.Fatalf("locate after delete: %q", where)
	}
}

// TestMisspeltDataSourcePolicyNeverAllowsAny: a data source's security
// policy that cannot be read never leaves a source open to any provider:
// the source is refused, with a problem at its line.
func TestMisspeltDataSourcePolicyNeverAllowsAny(t *testing.T) {
	root := t.TempDir()
	file := writePlugin(t, root, "org", "it", `CONFIG["DATA_SOURCES"] = { { ["Id"] = "wiki", ["Name"] = "Wiki", ["Type"] = "ERI_V1", ["Hostname"] = "https://eri.example.org", ["AuthMethod"] = "NONE", ["SecurityPolicy"] = "SELF_HOST", ["SelectedRetrievalId"] = "r" } }`+"\n")
	eff, err := Load(context.Background(), root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ds := range eff.DataSources {
		if ds.SecurityPolicy != "SELF_HOSTED" {
			t.Fatalf("a misspelt policy left the source %s as %q", ds.ID, ds.SecurityPolicy)
		}
	}
	if probs := problemsFor(eff, file); len(probs) != 1 || probs[0].Line != 7 || !strings.Contains(probs[0].Message, "SecurityPolicy") {
		t.Fatalf("%v", probs)
	}
}
