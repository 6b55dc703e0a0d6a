package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestToolsAgreesWithTheRequest: for many combinations of provider
// confidence, mailbox levels, embedding providers, organization minimums,
// switched-off tools and preview features, `steward tools --provider P`
// says a tool is offered exactly when `steward ask` with the same provider
// and every tool selected offers it, and a tool it calls not offered is
// absent from that request (seed: the offer-block answer uses the same
// checks in the same order as the request).
func TestToolsAgreesWithTheRequest(t *testing.T) {
	type provider struct {
		name   string
		scheme string // organization confidence scheme, Lua
		level  string // the provider's level under it
	}
	providers := []provider{
		{"medium", `CONFIG["SETTINGS"]["DataConfidence.ConfidenceScheme"] = "TRUST_ALL"`, "MEDIUM"},
		{"very low", `CONFIG["SETTINGS"]["DataConfidence.ConfidenceScheme"] = "LOCAL_TRUST_ONLY"`, "VERY_LOW"},
		{"high", `CONFIG["SETTINGS"]["DataConfidence.ConfidenceScheme"] = "CUSTOM"
CONFIG["SETTINGS"]["DataConfidence.CustomConfidenceScheme"] = { ["OPEN_AI"] = "HIGH" }`, "HIGH"},
	}
	type mailboxes struct {
		name  string
		boxes string // settings.json "mailboxes" value
	}
	box := func(id, level, embedding string) string {
		return fmt.Sprintf(`{"id":%q,"name":"Box %s","host":"imap.example.org","port":993,"security":"tls","auth":"password","username":"u",
"required_provider_confidence":%q,"outbound_data_restriction":"ONLY_CONFIGURED_SERVICES","embedding_provider":%q}`, id, id, level, embedding)
	}
	mails := []mailboxes{
		{"no mailbox", `[]`},
		{"high mailbox", "[" + box("team", "HIGH", "") + "]"},
		{"low mailbox", "[" + box("office", "LOW", "") + "]"},
		{"high and closed", "[" + box("team", "HIGH", "") + "," + box("shut", "NONE", "") + "]"},
		{"medium with a cloud embedder", "[" + box("sales", "MEDIUM", "openai:text-embedding-3-small") + "]"},
	}
	orgs := []struct{ name, lua string }{
		{"no rules", ""},
		{"read_web_page HIGH", `CONFIG["SETTINGS"]["DataTools.MinimumProviderConfidenceByToolId"] = { ["read_web_page"] = "HIGH" }`},
		{"mailboxes MEDIUM, web_search off", `CONFIG["SETTINGS"]["DataTools.MinimumProviderConfidenceByToolId"] = { ["search_mails"] = "MEDIUM" }
CONFIG["SETTINGS"]["DataTools.DisabledToolIds"] = { "web_search" }`},
	}
	previews := [][]string{{"PRE_RAG_2024", "PRE_MAILBOXES_2026"}, nil}

	// One home for every combination: the configuration is written anew
	// each time, and the databases are made once (SQLite is slow under
	// the race detector).
	home := t.TempDir()
	cfg := filepath.Join(home, "config")
	os.MkdirAll(cfg, 0o700)
	combos := 0
	for pi, pv := range providers {
		for mi, mb := range mails {
			for oi, org := range orgs {
				for vi, preview := range previews {
					// A fixed share of the full product keeps the test
					// quick while every value of every dimension meets
					// every value of the others at least once.
					if (pi+mi+oi+vi)%2 == 1 && !(mi == 1 && pi == 0) {
						continue
					}
					combos++
					name := strings.Join([]string{pv.name, mb.name, org.name, fmt.Sprint(preview != nil)}, "/")
					t.Run(name, func(t *testing.T) {
						pre, _ := json.Marshal(preview)
						settings := fmt.Sprintf(`{"version":2,"enabled_preview_features":%s,"mailboxes":%s,
"tools":{"web_search":{"searxng.baseUrl":"http://127.0.0.1:9/","defaultLanguage":"en"}}}`, pre, mb.boxes)
						if err := os.WriteFile(filepath.Join(cfg, "settings.json"), []byte(settings), 0o600); err != nil {
							t.Fatal(err)
						}
						writeOrgPlugin(t, home, "org", "it", pv.scheme+"\n"+org.lua+"\n")
						p := newScripted(t, textReply("Hello."))
						keys := map[string]string{"OPENAI_API_KEY": "sk-test"}
						out, errOut, code := runInProcess(t, home, nil, keys, "tools", "--json", "--provider", "openai", "--base-url", p.baseURL())
						if code != 0 {
							t.Fatalf("tools: exit %d\n%s", code, errOut)
						}
						var cat struct {
							Tools []struct {
								ID           string   `json:"id"`
								Tools        []string `json:"tools"`
								Offered      *bool    `json:"offered"`
								OfferedTools []string `json:"offered_tools"`
								Because      string   `json:"not_offered_because"`
							} `json:"tools"`
							Provider struct {
								Confidence string `json:"confidence"`
							} `json:"provider"`
						}
						if err := json.Unmarshal([]byte(out), &cat); err != nil {
							t.Fatalf("tools --json: %v\n%s", err, out)
						}
						if cat.Provider.Confidence != pv.level {
							t.Fatalf("provider confidence %s, want %s", cat.Provider.Confidence, pv.level)
						}
						var said, ids []string
						for _, row := range cat.Tools {
							ids = append(ids, row.ID)
							if row.Offered == nil {
								t.Fatalf("%s: no offer answer: %s", row.ID, out)
							}
							offered := row.OfferedTools
							if offered == nil && *row.Offered {
								offered = row.Tools
							}
							if *row.Offered != (len(offered) == len(row.Tools)) {
								t.Errorf("%s: offered %v but offered tools %v of %v", row.ID, *row.Offered, offered, row.Tools)
							}
							if !*row.Offered && row.Because == "" {
								t.Errorf("%s: not offered without a reason", row.ID)
							}
							said = append(said, offered...)
						}
						out, errOut, code = runInProcess(t, home, nil, keys, "ask", "--provider", "openai", "--base-url", p.baseURL(), "--tools", strings.Join(ids, ","), "Hi")
						if code != 0 {
							t.Fatalf("ask: exit %d\n%s\n%s", code, out, errOut)
						}
						var sent []string
						tools, _ := p.request(0)["tools"].([]any)
						for _, tl := range tools {
							fn, _ := tl.(map[string]any)["function"].(map[string]any)
							sent = append(sent, fmt.Sprint(fn["name"]))
						}
						slices.Sort(said)
						slices.Sort(sent)
						if !slices.Equal(said, sent) {
							t.Fatalf("steward tools says %v are offered, the request offers %v\n%s", said, sent, out)
						}
						// The mailbox which keeps the mail tools out is named
						// with both levels.
						if mb.name == "high mailbox" && org.lua == "" && pv.level != "HIGH" && preview != nil && !slices.Contains(sent, "search_mails") {
							for _, row := range cat.Tools {
								if row.ID == "mailboxes" && (!strings.Contains(row.Because, "mailbox 'Box team' (team)") ||
									!strings.Contains(row.Because, "HIGH") || !strings.Contains(row.Because, pv.level)) {
									t.Errorf("the reason must name the mailbox and both levels: %q", row.Because)
								}
							}
						}
					})
				}
			}
		}
	}
	if combos < 30 {
		t.Fatalf("only %d combinations", combos)
	}
}
