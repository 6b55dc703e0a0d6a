package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/mcptest"
)

// offeredTools are the function names a Chat Completions request offered.
func offeredTools(req map[string]any) []string {
	var out []string
	tools, _ := req["tools"].([]any)
	for _, t := range tools {
		fn, _ := t.(map[string]any)["function"].(map[string]any)
		if name, ok := fn["name"].(string); ok {
			out = append(out, name)
		}
	}
	return out
}

func writeSettings(t *testing.T, home string, settings map[string]any) {
	t.Helper()
	cfg := filepath.Join(home, "config")
	if err := os.MkdirAll(cfg, 0o700); err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(settings, "", "  ")
	if err := os.WriteFile(filepath.Join(cfg, "settings.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestChatWithMCPFilesystemKeepsItsRestriction is the end-to-end chat on
// the built binary: the model reads a file through the real MCP filesystem
// server, which is configured to demand ONLY_CONFIGURED_SERVICES, and is
// then refused web_search; after chat --resume web_search is not even
// offered, and a call of it is refused again.
func TestChatWithMCPFilesystemKeepsItsRestriction(t *testing.T) {
	home := t.TempDir()
	docs := filepath.Join(home, "docs")
	if err := os.MkdirAll(docs, 0o700); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(docs, "notes.txt")
	if err := os.WriteFile(notes, []byte("Project Falcon launches on 12 March; budget 40k."), 0o600); err != nil {
		t.Fatal(err)
	}
	command, args := mcptest.Filesystem(t, docs)
	writeSettings(t, home, map[string]any{
		"version": 2,
		// web_search is configured, so only the restriction keeps it away;
		// the address is never contacted.
		"tools":          map[string]any{"web_search": map[string]any{"searxng.baseUrl": "http://127.0.0.1:9/", "defaultLanguage": "en"}},
		"selected_tools": []string{"mcp__docs", "web_search"},
		"mcp": map[string]any{"servers": []map[string]any{{
			"id": "docs", "name": "Project documents", "command": command, "args": args,
			"outbound_data": "NONE", "outbound_data_restriction": "ONLY_CONFIGURED_SERVICES",
		}}},
	})
	p := newScripted(t,
		toolReply("call_1", "mcp__docs__read_text_file", fmt.Sprintf(`{"path":%q}`, notes)),
		toolReply("call_2", "web_search", `{"query":"Project Falcon launch 12 March"}`),
		textReply("Falcon launches on 12 March."),
	)
	r := steward(t, home, "When does Falcon launch?\n", nil, "chat", "--provider", "vllm", "--base-url", p.baseURL(), "--model", "m1")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	first := offeredTools(p.request(0))
	if !slices.Contains(first, "mcp__docs__read_text_file") || !slices.Contains(first, "web_search") {
		t.Fatalf("the first request offers the MCP tools and web_search: %v", first)
	}
	if msgs, _ := json.Marshal(p.request(1)["messages"]); !strings.Contains(string(msgs), "Project Falcon launches on 12 March") {
		t.Fatalf("the file's content reached the model: %s", msgs)
	}
	msgs, _ := json.Marshal(p.request(2)["messages"])
	if !strings.Contains(string(msgs), "MCP server 'Project documents'") || !strings.Contains(string(msgs), "Only configured services") {
		t.Fatalf("web_search is refused, naming the MCP server and its restriction: %s", msgs)
	}
	if !strings.Contains(r.stderr, "[tool] mcp__docs__read_text_file: done") || !strings.Contains(r.stderr, "[tool] web_search: BLOCKED") {
		t.Fatalf("the user sees both calls: %s", r.stderr)
	}
	m := regexp.MustCompile(`steward chat --resume ([0-9a-f]{8})`).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("no chat ID in %q", r.stderr)
	}
	show := steward(t, home, "", nil, "chats", "show", m[1])
	if !strings.Contains(show.stdout, "ONLY_CONFIGURED_SERVICES") || !strings.Contains(show.stdout, "Project documents") {
		t.Errorf("the stored chat keeps the restriction and who demanded it: %s", show.stdout)
	}

	// After --resume the restriction holds: web_search is not offered, and
	// a model that calls it anyway is refused.
	p2 := newScripted(t,
		toolReply("call_3", "web_search", `{"query":"Falcon"}`),
		textReply("I cannot search the web in this chat."),
	)
	r = steward(t, home, "Search the web for Falcon news.\n", nil, "chat", "--resume", m[1], "--provider", "vllm", "--base-url", p2.baseURL(), "--model", "m1")
	if r.code != 0 {
		t.Fatalf("resume: exit %d\nstderr %s", r.code, r.stderr)
	}
	again := offeredTools(p2.request(0))
	if slices.Contains(again, "web_search") || !slices.Contains(again, "mcp__docs__read_text_file") {
		t.Fatalf("after resume web_search is not offered, the MCP tools are: %v", again)
	}
	if !strings.Contains(r.stderr, "[tool] web_search: BLOCKED") {
		t.Fatalf("the call is refused: %s", r.stderr)
	}
}
