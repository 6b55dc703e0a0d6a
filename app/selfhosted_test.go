package app

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/web"
)

// fakeDNS answers made-up names and counts lookups; it never reaches a
// real resolver.
type fakeDNS struct {
	mu     sync.Mutex
	hosts  map[string]string
	looked []string
}

func (f *fakeDNS) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.looked = append(f.looked, host)
	ip, ok := f.hosts[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []net.IPAddr{{IP: net.ParseIP(ip)}}, nil
}

// TestSelfHostedOnlyWhenLocalOrListed: a server of a self-hosted kind
// counts as self-hosted (HIGH under the built-in schemes, and meeting a
// chat's SELF_HOSTED data security) only when every address of its host is
// loopback or private, or the organization lists the host; otherwise it is
// rated like a cloud provider and says why (issue 17, point 3).
func TestSelfHostedOnlyWhenLocalOrListed(t *testing.T) {
	dns := &fakeDNS{hosts: map[string]string{
		"llm.cloud.example":    "93.184.215.14",
		"gpu.corp.example":     "10.20.30.40",
		"listed.cloud.example": "93.184.215.15",
	}}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	os.MkdirAll(filepath.Join(cfg, "plugins", "org", "llm"), 0o755)
	plugin := `ID = "llm"
NAME = "LLM"
VERSION = "1"
TYPE = "CONFIGURATION"
CONFIG = {}
CONFIG["SETTINGS"] = {}
CONFIG["SETTINGS"]["DataConfidence.ConfidenceScheme"] = "TRUST_EUROPE"
CONFIG["LLM_PROVIDERS"] = {}
CONFIG["LLM_PROVIDERS"][#CONFIG["LLM_PROVIDERS"]+1] = {
  ["Id"] = "00000000-0000-0000-0000-000000000001",
  ["InstanceName"] = "Corporate vLLM",
  ["UsedLLMProvider"] = "SELF_HOSTED",
  ["Host"] = "VLLM",
  ["Hostname"] = "https://listed.cloud.example",
  ["Model"] = { ["Id"] = "m", ["DisplayName"] = "m" },
}
`
	if err := os.WriteFile(filepath.Join(cfg, "plugins", "org", "llm", "plugin.lua"), []byte(plugin), 0o644); err != nil {
		t.Fatal(err)
	}
	settings := `{"version":2,"providers":[{"id":"mine","kind":"ollama","base_url":"https://llm.cloud.example/"}]}`
	if err := os.WriteFile(filepath.Join(cfg, "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"STEWARD_NO_OLLAMA_PROBE": "1"}
	a, err := Open(context.Background(), Options{ConfigDir: cfg, DataDir: filepath.Join(dir, "data"), Getenv: func(k string) string { return env[k] },
		Web: web.ServiceOptions{Resolver: dns}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if len(a.Org.Problems) > 0 || len(a.Org.Providers) != 1 {
		t.Fatalf("plugin: %v, %d providers", a.Org.Problems, len(a.Org.Providers))
	}
	tests := []struct {
		name       string
		flags      ProviderFlags
		selfHosted bool
		confidence policy.Confidence
		why        string
	}{
		{"vllm on a public host", ProviderFlags{Provider: "vllm", BaseURL: "https://llm.cloud.example/v1/"}, false, policy.Low,
			"llm.cloud.example has the public address 93.184.215.14"},
		{"a base URL alone on a public host", ProviderFlags{BaseURL: "https://llm.cloud.example/v1/"}, false, policy.Low, "public address"},
		{"ollama in the user's settings on a public host", ProviderFlags{Provider: "mine"}, false, policy.Low, "public address"},
		{"vllm on a public IP", ProviderFlags{Provider: "llamacpp", BaseURL: "http://93.184.215.16:8080/v1/"}, false, policy.Low, "public address 93.184.215.16"},
		{"vllm on an unknown host", ProviderFlags{Provider: "vllm", BaseURL: "https://nowhere.example/v1/"}, false, policy.Low, "could not be resolved"},
		{"vllm in the private network", ProviderFlags{Provider: "vllm", BaseURL: "http://gpu.corp.example:8000/v1/"}, true, policy.High, ""},
		{"vllm on loopback", ProviderFlags{Provider: "vllm", BaseURL: "http://127.0.0.1:8000/v1/"}, true, policy.High, ""},
		{"ollama at its default address", ProviderFlags{Provider: "ollama"}, true, policy.High, ""},
		{"a host the organization lists", ProviderFlags{Provider: "vllm", BaseURL: "https://listed.cloud.example/v1/"}, true, policy.High, ""},
		{"the organization's own provider", ProviderFlags{Provider: "00000000-0000-0000-0000-000000000001"}, true, policy.High, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rp, err := a.ResolveProvider(context.Background(), tc.flags)
			if err != nil {
				t.Fatal(err)
			}
			if rp.Confidence != tc.confidence || rp.Trusted != tc.selfHosted || (rp.SchemeName == policy.ProviderSelfHosted) != tc.selfHosted {
				t.Errorf("confidence %s, trusted %v, scheme %s; want %s, %v", rp.Confidence, rp.Trusted, rp.SchemeName, tc.confidence, tc.selfHosted)
			}
			if !strings.Contains(rp.NotSelfHosted, tc.why) || (tc.selfHosted && rp.NotSelfHosted != "") {
				t.Errorf("reason %q, want %q", rp.NotSelfHosted, tc.why)
			}
			// A chat that holds data for self-hosted providers only refuses
			// a cloud host, whatever kind of server answers there.
			th := NewThread()
			th.RequireDataSecurity(policy.SelfHosted)
			if err := CheckProviderAllowed(th, rp); (err == nil) != tc.selfHosted {
				t.Errorf("a SELF_HOSTED chat: %v", err)
			}
		})
	}
	for _, h := range dns.looked {
		if h == "localhost" || h == "127.0.0.1" {
			t.Errorf("%s was looked up", h)
		}
	}
}
