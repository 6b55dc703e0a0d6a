package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stewardhq/steward/app"
	"github.com/stewardhq/steward/internal/webtest"
)

// TestProvidersSaysWhyAServerIsNoSelfHostedOne: a user's Ollama on a
// public host is listed with a cloud provider's confidence and the reason
// (issue 17, point 3); one in the private network keeps HIGH. Names are
// answered by a made-up resolver; nothing is looked up or connected.
func TestProvidersSaysWhyAServerIsNoSelfHostedOne(t *testing.T) {
	n := webtest.NewNet(t, nil)
	n.Host("llm.cloud.example", "93.184.215.14")
	n.Host("gpu.corp.example", "10.20.30.40")
	tweak := func(o *app.Options) { o.Web.Resolver, o.Web.Dial = n, n.Dial }
	home := t.TempDir()
	cfg := filepath.Join(home, "config")
	os.MkdirAll(cfg, 0o700)
	os.WriteFile(filepath.Join(cfg, "settings.json"), []byte(`{"version":2,"providers":[
{"id":"rented","kind":"ollama","base_url":"https://llm.cloud.example/"},
{"id":"office","kind":"vllm","base_url":"http://gpu.corp.example:8000/v1/"}]}`), 0o600)
	out, errOut, code := runInProcess(t, home, tweak, nil, "providers")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rented, office string
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "rented ") {
			rented = l
			if i+1 < len(lines) {
				rented += "\n" + lines[i+1]
			}
		}
		if strings.HasPrefix(l, "office ") {
			office = l
			if i+1 < len(lines) {
				office += "\n" + lines[i+1]
			}
		}
	}
	if !strings.Contains(rented, "MEDIUM") || !strings.Contains(rented, "counted as a cloud provider, not self-hosted: llm.cloud.example has the public address 93.184.215.14") {
		t.Errorf("the rented Ollama:\n%s\n%s", rented, out)
	}
	if !strings.Contains(office, "HIGH") || strings.Contains(office, "counted as a cloud provider") {
		t.Errorf("the office vLLM:\n%s", office)
	}
	out, _, _ = runInProcess(t, home, tweak, nil, "providers", "--json")
	var got struct {
		Providers []struct {
			ID         string `json:"id"`
			Confidence string `json:"confidence"`
			Why        string `json:"not_self_hosted_because"`
		} `json:"providers"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, p := range got.Providers {
		if p.ID == "rented" && (p.Confidence != "MEDIUM" || !strings.Contains(p.Why, "public address")) {
			t.Errorf("--json: %+v", p)
		}
	}
	if n.Dials() != 0 {
		t.Errorf("%d connections were made", n.Dials())
	}
}
