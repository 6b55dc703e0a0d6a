package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stewardhq/steward/datasource/eri"
	"github.com/stewardhq/steward/internal/eritest"
)

const eriToken = "eri-Tok3n-never-shown"

// ragHome is a home whose settings switch the data-source preview on.
func ragHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, "config")
	os.MkdirAll(dir, 0o700)
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(`{"version":2,"enabled_preview_features":["PRE_RAG_2024"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

func handbookServer(t *testing.T, security eri.ProviderType) *eritest.Server {
	return eritest.New(t, eritest.Options{Method: eri.AuthToken, Secret: eriToken,
		Info:     eri.DataSourceInfo{Name: "HR handbook", Description: "The HR handbook of the company, 2026 edition."},
		Security: eri.SecurityRequirements{AllowedProviderType: security},
		Documents: []eritest.Document{
			{Name: "handbook.pdf", Category: "policy document", Path: "https://hr.example.org/handbook#s4",
				Text: "Section 4: Leave\n\nParental leave lasts up to 14 months and may be split between both parents.\n\nSection 5: Travel"},
			{Name: "travel.md", Category: "guide", Path: "https://hr.example.org/travel", Text: "Travel expenses are refunded within 30 days."},
		}})
}

func addERI(t *testing.T, home string, id string, srv *eritest.Server, extra ...string) {
	t.Helper()
	args := append([]string{"sources", "add", "--id", id, "--name", "HR " + id, "--eri", srv.URL(), "--auth", "token", "--retrieval-id", "words"}, extra...)
	r := steward(t, home, eriToken, nil, args...)
	if r.code != 0 {
		t.Fatalf("sources add: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

// noTokenAnywhere fails when the ERI token is in the settings, the chat
// store, or any output.
func noTokenAnywhere(t *testing.T, home string, outputs ...result) {
	t.Helper()
	for _, r := range outputs {
		if strings.Contains(r.stdout+r.stderr, eriToken) {
			t.Fatalf("the ERI token was printed:\n%s\n%s", r.stdout, r.stderr)
		}
	}
	for _, f := range []string{filepath.Join(home, "config", "settings.json"), filepath.Join(home, "data", "steward.db"), filepath.Join(home, "data", "steward.db-wal")} {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), eriToken) {
			t.Fatalf("the ERI token is stored in %s", f)
		}
	}
}

func TestSourcesCommandsWithAnERIServer(t *testing.T) {
	home := ragHome(t)
	srv := handbookServer(t, eri.ProviderAny)
	addERI(t, home, "hr", srv)
	list := steward(t, home, "", nil, "sources", "list", "--json")
	var l struct {
		DataSources []map[string]any `json:"data_sources"`
	}
	if err := json.Unmarshal([]byte(list.stdout), &l); err != nil || len(l.DataSources) != 1 {
		t.Fatalf("list: %v %s", err, list.stdout)
	}
	d := l.DataSources[0]
	if d["id"] != "hr" || d["kind"] != "ERI_V1" || d["required_provider_confidence"] != "NONE" || d["data_security"] != "ALLOW_ANY" || d["max_matches"] != float64(10) || d["last_page"] != float64(9) {
		t.Fatalf("%v", d)
	}
	show := steward(t, home, "", nil, "sources", "show", "hr", "--json")
	var s struct {
		Server map[string]any `json:"server"`
	}
	if err := json.Unmarshal([]byte(show.stdout), &s); err != nil || s.Server["name"] != "HR handbook" || s.Server["allowed_provider_type"] != "ANY" {
		t.Fatalf("show: %v %s %s", err, show.stdout, show.stderr)
	}
	text := steward(t, home, "", nil, "sources", "show", "hr")
	if !strings.Contains(text.stdout, "retrieval process:   words: Word search") {
		t.Fatalf("%s", text.stdout)
	}
	search := steward(t, home, "", nil, "sources", "search", "--json", "parental leave")
	var res struct {
		DataSources []struct {
			ID          string `json:"id"`
			ResultCount int    `json:"result_count"`
		} `json:"data_sources"`
		TextContent string `json:"text_content"`
	}
	if err := json.Unmarshal([]byte(search.stdout), &res); err != nil || res.DataSources[0].ResultCount != 1 || !strings.Contains(res.TextContent, "14 months") {
		t.Fatalf("search: %v %s %s", err, search.stdout, search.stderr)
	}
	bad := steward(t, home, "", nil, "sources", "search", "--source", "nope", "x")
	if bad.code != 2 || !strings.Contains(bad.stderr, "the data sources are: hr") {
		t.Fatalf("unknown source: %d %s", bad.code, bad.stderr)
	}
	// Wrong values are refused with the flag and what is allowed.
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--id", "x", "--eri", "http://eri.example.org"}, "plain http would send the sign-in unencrypted"},
		{[]string{"--id", "x", "--eri", srv.URL(), "--max-matches", "0"}, "--max-matches 0: use 1 to 65535"},
		{[]string{"--id", "x", "--eri", srv.URL(), "--level", "SUPER"}, "required_provider_confidence"},
		{[]string{"--id", "x", "--eri", srv.URL(), "--auth", "kerberos"}, "not supported yet"},
		{[]string{"--id", "x", "--folder", "/nonexistent/folder"}, "--folder"},
		{[]string{"--id", "bad id", "--folder", home}, "--id"},
		{[]string{"--id", "x", "--folder", home, "--auth", "token"}, "--auth is only for an ERI server"},
	} {
		r := steward(t, home, "", nil, append([]string{"sources", "add"}, c.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.says) {
			t.Errorf("sources add %v: %d %q; want it to say %q", c.args, r.code, r.stderr, c.says)
		}
	}
	if r := steward(t, home, "", nil, "sources", "add", "--id", "hr", "--eri", srv.URL()); r.code != 1 || !strings.Contains(r.stderr, "exists already") {
		t.Fatalf("duplicate: %d %s", r.code, r.stderr)
	}
	rm := steward(t, home, "", nil, "sources", "remove", "hr")
	if rm.code != 0 {
		t.Fatalf("remove: %d %s", rm.code, rm.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(home, "config", "secrets.json")); strings.Contains(string(b), eriToken) {
		t.Fatal("removing the source leaves its token behind")
	}
	noTokenAnywhere(t, home, list, show, text, search, rm)
}

// The model calls semantic_search, the right passage comes back, and its
// source is listed with the answer.
func TestAskWithSemanticSearchOverAnERIServer(t *testing.T) {
	home := ragHome(t)
	srv := handbookServer(t, eri.ProviderAny)
	addERI(t, home, "hr", srv)
	p := newScripted(t, toolReply("call_1", "semantic_search", `{"query":"parental leave duration"}`), textReply("Parental leave lasts up to 14 months."))
	r := steward(t, home, "", nil, "ask", "--provider", "vllm", "--base-url", p.baseURL(), "How long is parental leave?")
	if r.code != 0 || !strings.Contains(r.stdout, "14 months") {
		t.Fatalf("ask: %d %s %s", r.code, r.stdout, r.stderr)
	}
	tools := fmt.Sprint(p.request(0)["tools"])
	if !strings.Contains(tools, "semantic_search") || !strings.Contains(tools, "id=hr, name='HR hr', type=external data source, results per page=10, last page=9, description='The HR handbook of the company, 2026 edition.'") {
		t.Fatalf("the tool description lists the source: %s", tools)
	}
	msgs := p.request(1)["messages"].([]any)
	result := fmt.Sprint(msgs[len(msgs)-1])
	if !strings.Contains(result, "Parental leave lasts up to 14 months") || !strings.Contains(result, `\"result_count\":1`) && !strings.Contains(result, `"result_count":1`) {
		t.Fatalf("the tool result carries the passage: %s", result)
	}
	if !strings.Contains(r.stderr, "Sources used by tools") || !strings.Contains(r.stderr, "https://hr.example.org/handbook#s4") {
		t.Fatalf("the passage's source is listed: %s", r.stderr)
	}
	req := srv.Retrievals()
	if len(req) != 1 || req[0].LatestUserPrompt != "parental leave duration" || req[0].RetrievalProcessID != "words" || req[0].MaxMatches != 11 {
		t.Fatalf("the retrieval: %+v", req)
	}
	noTokenAnywhere(t, home, r)
	// The stored chat keeps the source.
	chats := steward(t, home, "", nil, "chats", "show", lastChatID(t, home))
	if !strings.Contains(chats.stdout, "https://hr.example.org/handbook#s4") {
		t.Fatalf("the stored answer lists its source: %s", chats.stdout)
	}
}

func lastChatID(t *testing.T, home string) string {
	t.Helper()
	r := steward(t, home, "", nil, "chats", "--json")
	var list []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) == 0 {
		t.Fatalf("chats --json: %v %s", err, r.stdout)
	}
	for _, k := range []string{"id", "ID"} {
		if id, ok := list[0][k].(string); ok {
			return id
		}
	}
	t.Fatalf("no chat ID in %v", list[0])
	return ""
}

// The same question through the classic process when the provider may not
// be offered the tool: the organization demands HIGH for semantic_search,
// and its scheme gives the self-hosted provider MEDIUM.
func TestClassicProcessWhenTheToolCannotBeOffered(t *testing.T) {
	home := ragHome(t)
	writeOrgPlugin(t, home, "org", "it", `CONFIG["SETTINGS"]["DataConfidence.ConfidenceScheme"] = "CUSTOM"
CONFIG["SETTINGS"]["DataConfidence.CustomConfidenceScheme"] = { ["SELF_HOSTED"] = "MEDIUM" }
CONFIG["SETTINGS"]["DataTools.MinimumProviderConfidenceByToolId"] = { ["semantic_search"] = "HIGH" }
`)
	srv := handbookServer(t, eri.ProviderAny)
	addERI(t, home, "hr", srv)
	tools := steward(t, home, "", nil, "tools", "--provider", "vllm", "--base-url", "http://127.0.0.1:9/v1/")
	if !strings.Contains(tools.stdout, "semantic_search") || !strings.Contains(tools.stdout, "not offered to") || !strings.Contains(tools.stdout, "PROVIDER_CONFIDENCE_TOO_LOW") || !strings.Contains(tools.stdout, "every message searches instead: hr") {
		t.Fatalf("steward tools explains it:\n%s", tools.stdout)
	}
	p := newScripted(t, textReply("Up to 14 months."))
	r := steward(t, home, "", nil, "ask", "--provider", "vllm", "--base-url", p.baseURL(), "How long is parental leave?")
	if r.code != 0 {
		t.Fatalf("%d %s", r.code, r.stderr)
	}
	req := p.request(0)
	if strings.Contains(fmt.Sprint(req["tools"]), "semantic_search") {
		t.Fatal("the tool must not be offered")
	}
	system := fmt.Sprint(req["messages"].([]any)[0])
	if !strings.Contains(system, "The following useful information will help you in processing the user prompt:") || !strings.Contains(system, "Parental leave lasts up to 14 months") || !strings.Contains(system, "# Retrieval context 1") {
		t.Fatalf("the passages are in the system prompt: %s", system)
	}
	if got := srv.Retrievals(); len(got) != 1 || got[0].LatestUserPrompt != "How long is parental leave?" {
		t.Fatalf("the user's message is the query: %+v", got)
	}
	if !strings.Contains(r.stderr, "Sources from data sources") || !strings.Contains(r.stderr, "https://hr.example.org/handbook#s4") {
		t.Fatalf("the passages' sources are listed: %s", r.stderr)
	}
	// Chosen per chat, the classic process runs even where the tool could
	// be offered, and the choice is stored with the chat.
	home2 := ragHome(t)
	addERI(t, home2, "hr", srv)
	p2 := newScripted(t, textReply("Up to 14 months."), textReply("Again."))
	r = steward(t, home2, "", nil, "ask", "--retrieval", "classic", "--provider", "vllm", "--base-url", p2.baseURL(), "How long is parental leave?")
	if r.code != 0 || strings.Contains(fmt.Sprint(p2.request(0)["tools"]), "semantic_search") || !strings.Contains(fmt.Sprint(p2.request(0)["messages"]), "14 months") {
		t.Fatalf("--retrieval classic: %d %s %v", r.code, r.stderr, p2.request(0))
	}
	id := lastChatID(t, home2)
	r = steward(t, home2, "Once more: parental leave?\n", nil, "chat", "--resume", id[:8], "--provider", "vllm", "--base-url", p2.baseURL())
	if r.code != 0 || strings.Contains(fmt.Sprint(p2.request(1)["tools"]), "semantic_search") || !strings.Contains(fmt.Sprint(p2.request(1)["messages"].([]any)[0]), "# Retrieval context 1") {
		t.Fatalf("the resumed chat keeps its retrieval mode: %d %s", r.code, r.stderr)
	}
}

// A mixed chat where one source fails: it is reported as not searched.
func TestMixedChatReportsTheFailingSourceAsNotSearched(t *testing.T) {
	home := ragHome(t)
	good := handbookServer(t, eri.ProviderAny)
	broken := handbookServer(t, eri.ProviderAny)
	addERI(t, home, "hr", good)
	addERI(t, home, "wiki", broken)
	broken.Override("POST /retrieval", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		w.Write([]byte("<html>upstream down</html>"))
	})
	p := newScripted(t, toolReply("call_1", "semantic_search", `{"query":"parental leave"}`), textReply("14 months, but the wiki could not be searched."))
	r := steward(t, home, "", nil, "ask", "--provider", "vllm", "--base-url", p.baseURL(), "How long is parental leave?")
	if r.code != 0 {
		t.Fatalf("%d %s", r.code, r.stderr)
	}
	msgs := p.request(1)["messages"].([]any)
	var out struct {
		DataSources []struct {
			ID          string   `json:"id"`
			ResultCount int      `json:"result_count"`
			Issues      []string `json:"issues"`
		} `json:"data_sources"`
	}
	last := msgs[len(msgs)-1].(map[string]any)
	if err := json.Unmarshal([]byte(last["content"].(string)), &out); err != nil {
		t.Fatalf("%v %v", err, last)
	}
	if len(out.DataSources) != 2 || out.DataSources[0].ResultCount != 1 || out.DataSources[1].ResultCount != 0 || len(out.DataSources[1].Issues) == 0 || !strings.Contains(out.DataSources[1].Issues[0], "missing rather than empty") {
		t.Fatalf("%+v", out)
	}
	if strings.Contains(last["content"].(string), "upstream down") {
		t.Fatal("the failing server's answer reached the model")
	}
	// The classic process names it too, in the block and to the user; the
	// diagnostics name no token.
	p2 := newScripted(t, textReply("14 months."))
	r = steward(t, home, "", nil, "--debug", "ask", "--retrieval", "classic", "--provider", "vllm", "--base-url", p2.baseURL(), "How long is parental leave?")
	noTokenAnywhere(t, home, r)
	if !strings.Contains(r.stderr, "a data source could not be searched") {
		t.Fatalf("the log says which source failed: %s", r.stderr)
	}
	if !strings.Contains(fmt.Sprint(p2.request(0)["messages"]), `could not be searched right now, so its results are missing rather than empty`) || !strings.Contains(r.stderr, "[data source] HR wiki could not be searched") {
		t.Fatalf("%s\n%v", r.stderr, p2.request(0))
	}
}

// "The chat refuses every other provider from then on": a SELF_HOSTED
// source's passages make the chat SELF_HOSTED, also after chat --resume.
func TestSelfHostedSourceMakesTheChatRefuseCloudProviders(t *testing.T) {
	home := ragHome(t)
	srv := handbookServer(t, eri.ProviderSelfHosted)
	addERI(t, home, "hr", srv)
	// A cloud provider is not even offered the source.
	tools := steward(t, home, "", []string{"OPENAI_API_KEY=sk-test"}, "tools", "--provider", "openai", "--json")
	var tj struct {
		ContextTools []struct {
			ID                string   `json:"id"`
			Offered           *bool    `json:"offered"`
			NotOfferedBecause string   `json:"not_offered_because"`
			NotUsable         []string `json:"not_usable"`
		} `json:"context_tools"`
	}
	if err := json.Unmarshal([]byte(tools.stdout), &tj); err != nil || len(tj.ContextTools) != 1 || *tj.ContextTools[0].Offered || tj.ContextTools[0].NotOfferedBecause != "NO_USABLE_DATA_SOURCE" || !strings.Contains(fmt.Sprint(tj.ContextTools[0].NotUsable), "only self-hosted") {
		t.Fatalf("%v %s", err, tools.stdout)
	}
	p := newScripted(t, toolReply("c1", "semantic_search", `{"query":"parental leave"}`), textReply("14 months."))
	r := steward(t, home, "", nil, "ask", "--provider", "vllm", "--base-url", p.baseURL(), "How long is parental leave?")
	if r.code != 0 || !strings.Contains(r.stdout, "14 months") {
		t.Fatalf("%d %s", r.code, r.stderr)
	}
	id := lastChatID(t, home)
	show := steward(t, home, "", nil, "chats", "show", id)
	if !strings.Contains(show.stdout, "SELF_HOSTED") {
		t.Fatalf("the chat demands SELF_HOSTED: %s", show.stdout)
	}
	cloud := newScripted(t)
	r = steward(t, home, "and travel?\n", []string{"OPENAI_API_KEY=sk-test"}, "chat", "--resume", id[:8], "--provider", "openai", "--base-url", cloud.baseURL())
	if r.code != 1 || !strings.Contains(r.stderr, "may only go to self-hosted providers") || cloud.request(0) != nil {
		t.Fatalf("a resumed SELF_HOSTED chat refuses a cloud provider: %d %s", r.code, r.stderr)
	}
	// A self-hosted provider may continue it.
	p2 := newScripted(t, textReply("Within 30 days."))
	r = steward(t, home, "and travel?\n", nil, "chat", "--resume", id[:8], "--provider", "vllm", "--base-url", p2.baseURL())
	if r.code != 0 || !strings.Contains(r.stdout, "30 days") {
		t.Fatalf("%d %s", r.code, r.stderr)
	}
	noTokenAnywhere(t, home, tools, r, show)
}

// A search that found nothing brought nothing into the chat: the chat
// demands nothing afterwards.
func TestASearchThatFoundNothingDemandsNothing(t *testing.T) {
	home := ragHome(t)
	srv := handbookServer(t, eri.ProviderSelfHosted)
	addERI(t, home, "hr", srv, "--level", "HIGH")
	p := newScripted(t, toolReply("c1", "semantic_search", `{"query":"quantum chromodynamics"}`), textReply("Nothing about that."))
	r := steward(t, home, "", nil, "ask", "--provider", "vllm", "--base-url", p.baseURL(), "What about quantum chromodynamics?")
	if r.code != 0 {
		t.Fatalf("%d %s", r.code, r.stderr)
	}
	show := steward(t, home, "", nil, "chats", "show", lastChatID(t, home))
	if !strings.Contains(show.stdout, "requires provider confidence NONE, data security NOT_SPECIFIED") {
		t.Fatalf("a search that found nothing raised the chat: %s", show.stdout)
	}
	cloud := newScripted(t, textReply("ok"))
	r = steward(t, home, "hello\n", []string{"OPENAI_API_KEY=sk-test"}, "chat", "--resume", lastChatID(t, home)[:8], "--provider", "openai", "--base-url", cloud.baseURL())
	if r.code != 0 {
		t.Fatalf("a chat that brought nothing in may go to a cloud provider: %d %s", r.code, r.stderr)
	}
}

func TestSourcesHelpHasExamples(t *testing.T) {
	home := t.TempDir()
	for _, c := range []string{"sources", "sources add", "sources list", "sources show", "sources index", "sources search", "sources remove"} {
		if r := steward(t, home, "", nil, append(strings.Fields(c), "--help")...); r.code != 0 || !strings.Contains(r.stdout, "Example") {
			t.Errorf("%s --help: exit %d, no examples in %q", c, r.code, r.stdout)
		}
	}
	for _, args := range [][]string{{"sources", "show"}, {"sources", "remove"}, {"sources", "search"}, {"sources", "add"}, {"ask", "--sources", ",", "x"}, {"ask", "--retrieval", "sometimes", "x"}} {
		if r := steward(t, home, "", nil, args...); r.code != 2 {
			t.Errorf("steward %v: exit %d, want 2 (%s)", args, r.code, r.stderr)
		}
	}
}

// An organization's data source with a wrong value is reported by config
// check at its line, with the field as the plugin writes it; the user
// cannot remove or shadow an organization's source.
func TestConfigCheckReportsDataSourceFields(t *testing.T) {
	home := ragHome(t)
	writeOrgPlugin(t, home, "org", "it", `CONFIG["DATA_SOURCES"] = {}
CONFIG["DATA_SOURCES"][#CONFIG["DATA_SOURCES"]+1] = { ["Id"] = "share", ["Name"] = "Team share", ["Type"] = "LOCAL_DIRECTORY", ["Path"] = "/srv/share", ["MaxMatches"] = 0.5 }
CONFIG["DATA_SOURCES"][#CONFIG["DATA_SOURCES"]+1] = { ["Id"] = "wiki", ["Name"] = "Wiki", ["Type"] = "ERI_V1", ["Hostname"] = "http://wiki.example.org",
  ["AuthMethod"] = "NONE", ["SecurityPolicy"] = "ALLOW_ANY", ["SelectedRetrievalId"] = "a" }
CONFIG["DATA_SOURCES"][#CONFIG["DATA_SOURCES"]+1] = { ["Id"] = "team", ["Name"] = "Team", ["Type"] = "LOCAL_DIRECTORY", ["Path"] = "/srv/team" }
`)
	r := steward(t, home, "", nil, "config", "check")
	if r.code != 1 || !strings.Contains(r.stdout, "it/plugin.lua:8: DATA_SOURCES[1] (share): MaxMatches must be a whole number, but is 0.5") ||
		!strings.Contains(r.stdout, "it/plugin.lua:9: DATA_SOURCES: data source wiki: Hostname \"http://wiki.example.org\": plain http would send the sign-in unencrypted") {
		t.Fatalf("%d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := steward(t, home, "", nil, "sources", "remove", "team"); r.code != 1 || !strings.Contains(r.stderr, "defined by an organization plugin") {
		t.Fatalf("%d %s", r.code, r.stderr)
	}
	if r := steward(t, home, "", nil, "sources", "add", "--id", "team", "--folder", home); r.code != 1 || !strings.Contains(r.stderr, "organization plugin") {
		t.Fatalf("%d %s", r.code, r.stderr)
	}
	l := steward(t, home, "", nil, "sources", "list")
	if !strings.Contains(l.stdout, "organization (Plugin it)") {
		t.Fatalf("%s", l.stdout)
	}
}
