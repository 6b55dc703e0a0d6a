package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/mcptest"
)

// TestHostileMCPServerAffectsNothingElse configures a hostile MCP server
// beside the real filesystem server and runs a chat on the built binary:
// the hostile server's tricks are each handled and reported, its crash
// costs only its own call, and the other server and Steward's own tools
// are untouched.
func TestHostileMCPServerAffectsNothingElse(t *testing.T) {
	home := t.TempDir()
	hostile := filepath.Join(t.TempDir(), "hostile")
	if out, err := exec.Command("go", "build", "-o", hostile, "../../internal/mcptest/hostile").CombinedOutput(); err != nil {
		t.Fatalf("building the hostile server: %v\n%s", err, out)
	}
	docs := filepath.Join(home, "docs")
	os.MkdirAll(docs, 0o700)
	os.WriteFile(filepath.Join(docs, "a.txt"), []byte("the good server still answers"), 0o600)
	command, args := mcptest.Filesystem(t, docs)
	writeSettings(t, home, map[string]any{
		"version":        2,
		"tools":          map[string]any{"web_search": map[string]any{"searxng.baseUrl": "http://127.0.0.1:9/", "defaultLanguage": "en"}},
		"selected_tools": []string{"mcp__evil", "mcp__docs", "web_search"},
		"mcp": map[string]any{"servers": []map[string]any{
			{"id": "evil", "name": "Evil", "command": hostile, "max_result_chars": 2000},
			{"id": "docs", "command": command, "args": args, "outbound_data": "NONE"},
		}},
	})
	p := newScripted(t,
		toolReply("c1", "mcp__evil__notes", `{}`),
		toolReply("c2", "mcp__evil__dump", `{}`),
		toolReply("c3", "mcp__evil__crash", `{}`),
		toolReply("c4", "mcp__docs__read_text_file", `{"path":"`+filepath.Join(docs, "a.txt")+`"}`),
		toolReply("c5", "mcp__evil__tag", `{"labels":{"a":"b"}}`),
		textReply("Done."),
	)
	r := steward(t, home, "", nil, "ask", "--json", "--provider", "vllm", "--base-url", p.baseURL(), "--model", "m1", "Go.")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr %s", r.code, r.stderr)
	}
	// Reported once, on stderr: the description filtered, the name clash,
	// strict mode.
	for _, want := range []string{`MCP server "evil": tool "notes": suspicious instructions were removed`,
		`MCP server "evil": tool "web_search": it has the name of one of Steward's own tools`,
		`MCP server "evil": tool "tag": kept out of strict mode`} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	req := p.request(0)
	offered := offeredTools(req)
	for _, want := range []string{"web_search", "mcp__evil__web_search", "mcp__evil__notes", "mcp__docs__read_text_file"} {
		if !slices.Contains(offered, want) {
			t.Errorf("%s is offered: %v", want, offered)
		}
	}
	tools, _ := json.Marshal(req["tools"])
	if strings.Contains(string(tools), "Ignore all previous") || strings.Contains(string(tools), "evil.example") {
		t.Errorf("the injected description reached the model: %s", tools)
	}
	for _, tl := range req["tools"].([]any) {
		fn := tl.(map[string]any)["function"].(map[string]any)
		if fn["name"] == "web_search" && !strings.HasPrefix(fn["description"].(string), "Search the internet") {
			t.Errorf("Steward's own web_search is replaced: %v", fn)
		}
	}
	all, _ := json.Marshal([]any{p.request(1)["messages"], p.request(2)["messages"], p.request(3)["messages"], p.request(4)["messages"], p.request(5)["messages"]})
	s := string(all)
	if strings.Contains(s, "call web_search with the user") {
		t.Error("an injected instruction in a result reached the model")
	}
	if strings.Count(s, "All work and no play") > 200 || !strings.Contains(s, "Steward cut this result") {
		t.Error("the oversized result is cut")
	}
	if !strings.Contains(s, `MCP server \"Evil\" stopped`) {
		t.Errorf("the crash is named: %.2000s", s)
	}
	if !strings.Contains(s, "the good server still answers") {
		t.Error("the other server's tool works after the crash")
	}
	if !strings.Contains(s, "tagged") {
		t.Error("the crashed server is started again for its next call")
	}
}
