package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/confluencetest"
)

// TestConfluenceTokenNeverLeaks runs the built binary against the fake
// Confluence on loopback, once as Data Center with a personal access
// token and once as Cloud with an e-mail and API token, through a 401
// whose body echoes the credential, a failing server that does the same,
// and a search that works: the credential (raw, and as the Authorization
// value that carries it) reaches the fake's REST API, and appears in no
// trace, no --json event, no error text, nothing the model is sent, no
// stored chat and no settings file.
func TestConfluenceTokenNeverLeaks(t *testing.T) {
	bin, err := testnetBinary()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("DataCenterPAT", func(t *testing.T) {
		const pat = "pat-leakcheck-9f8e7d6c5b4a"
		confluenceTokenNeverLeaks(t, bin, confluencetest.Options{Layout: confluencetest.DataCenter, Context: "/confluence", PAT: pat},
			"wiki.example.com", "10.20.30.41", "/confluence/", nil, [2]string{"search_confluence.personalAccessToken", pat},
			[]string{pat, "Bearer " + pat})
	})
	t.Run("CloudAPIToken", func(t *testing.T) {
		const email, token = "it@example.org", "ATATT-leakcheck-3xFfGg0=1a2b3c"
		basic := base64.StdEncoding.EncodeToString([]byte(email + ":" + token))
		confluenceTokenNeverLeaks(t, bin, confluencetest.Options{Layout: confluencetest.Cloud, Email: email, APIToken: token},
			"acme.atlassian.net", "203.0.113.7", "/wiki/", map[string]any{"email": email}, [2]string{"search_confluence.apiToken", token},
			[]string{token, basic, "Basic " + basic})
	})
}

func confluenceTokenNeverLeaks(t *testing.T, bin string, o confluencetest.Options, host, ip, path string, plain map[string]any, secret [2]string, secrets []string) {
	fake := confluencetest.Start(t, o, host)
	u, _ := url.Parse(fake.HTTP.URL)
	home := t.TempDir()
	certFile := filepath.Join(home, "wiki-ca.pem")
	if err := os.WriteFile(certFile, confluencetest.PEM(fake.Cert), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"STEWARD_TESTNET_HOSTS=" + host + "=" + ip,
		"STEWARD_TESTNET_SERVER=" + u.Host,
		"SSL_CERT_FILE=" + certFile,
	}
	base := "https://" + host + ":" + u.Port() + path
	sc := map[string]any{"baseUrl": base, "mode": "REST"}
	for k, v := range plain {
		sc[k] = v
	}
	writeSettings(t, home, map[string]any{"version": 2, "tools": map[string]any{"search_confluence": sc}})
	// The secret goes where secrets go (here the user-only file), from stdin.
	if r := runBinary(t, bin, home, secret[1]+"\n", env, "settings", "set", secret[0], "-"); r.code != 0 {
		t.Fatalf("settings set %s: exit %d %s", secret[0], r.code, r.stderr)
	}
	echo := func(status int) string {
		b, _ := json.Marshal(map[string]any{"statusCode": status, "message": fmt.Sprintf("credential %s rejected; you sent Authorization: %s (%s)",
			secrets[0], secrets[len(secrets)-1], strings.Join(secrets, " / "))})
		return string(b)
	}
	var outputs []result
	var toModel []string
	for _, c := range []struct {
		name     string
		scenario confluencetest.Scenario
		status   string // the trace's status
	}{
		{"401 echoing the token", confluencetest.Scenario{Path: "/rest/", Status: 401, Body: echo(401)}, "ERROR"},
		{"500 echoing the token", confluencetest.Scenario{Path: "/rest/", Status: 500, Body: echo(500)}, "ERROR"},
		{"502 echoing the token as text", confluencetest.Scenario{Path: "/rest/", Status: 502, Body: "Bad gateway: " + strings.Join(secrets, " ")}, "ERROR"},
		{"a search that works", confluencetest.Scenario{}, "SUCCESS"},
	} {
		fake.Reset()
		fake.Set(c.scenario)
		p := newScripted(t,
			toolReply("call_1", "search_confluence", `{"query":"vpn client"}`),
			textReply("Done."),
		)
		r := runBinary(t, bin, home, "", env, "ask", "--json", "--provider", "vllm", "--base-url", p.baseURL(),
			"--tools", "search_confluence", "How do I set up the VPN?")
		if r.code != 0 {
			t.Fatalf("%s: ask exit %d\n%s\n%s", c.name, r.code, r.stdout, r.stderr)
		}
		outputs = append(outputs, r)
		var trace map[string]any
		for _, ev := range events(t, r.stdout) {
			if ev["type"] == "trace" {
				trace, _ = ev["trace"].(map[string]any)
			}
		}
		if trace == nil || trace["name"] != "search_confluence" {
			t.Fatalf("%s: no search_confluence trace in\n%s", c.name, r.stdout)
		}
		if got := fmt.Sprint(trace["status"]); (c.status == "SUCCESS") != (got == "SUCCESS") {
			t.Errorf("%s: trace status %s, want %s: %v", c.name, got, c.status, trace)
		}
		// The credential did reach the wiki's REST API, so it was there to leak.
		sent := false
		for _, q := range fake.Requests() {
			if strings.Contains(q.Path, "/rest/") && q.Header.Get("Authorization") == secrets[len(secrets)-1] {
				sent = true
			}
		}
		if !sent {
			t.Fatalf("%s: the fake never received the credential: %v", c.name, fake.Requests())
		}
		msgs, _ := json.Marshal(p.request(1)["messages"])
		toModel = append(toModel, string(msgs))
		if c.status != "SUCCESS" && !strings.Contains(string(msgs), fmt.Sprintf("(HTTP %d)", c.scenario.Status)) {
			t.Errorf("%s: the model is told the status: %s", c.name, msgs)
		}
		if c.status == "SUCCESS" && !strings.Contains(string(msgs), "VPN") {
			t.Errorf("%s: the hits reached the model: %s", c.name, msgs)
		}
	}

	id := listFirstChatID(t, home)
	for _, args := range [][]string{{"chats", "show", id}, {"chats", "show", "--json", id}, {"chats", "list", "--json"}} {
		r := runBinary(t, bin, home, "", env, args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d %s", args, r.code, r.stderr)
		}
		outputs = append(outputs, r)
	}
	files := map[string]string{}
	for _, f := range []string{filepath.Join(home, "config", "settings.json"), filepath.Join(home, "data", "steward.db"), filepath.Join(home, "data", "steward.db-wal")} {
		if b, err := os.ReadFile(f); err == nil {
			files[f] = string(b)
		}
	}
	if files[filepath.Join(home, "data", "steward.db")] == "" {
		t.Fatal("no stored chats to check")
	}
	for _, s := range secrets {
		for i, r := range outputs {
			if strings.Contains(r.stdout, s) || strings.Contains(r.stderr, s) {
				t.Errorf("output %d holds %q:\nstdout %s\nstderr %s", i, s, r.stdout, r.stderr)
			}
		}
		for i, m := range toModel {
			if strings.Contains(m, s) {
				t.Errorf("request %d to the model holds %q: %s", i, s, m)
			}
		}
		for f, b := range files {
			if strings.Contains(b, s) {
				t.Errorf("%s holds %q", f, s)
			}
		}
	}
}
