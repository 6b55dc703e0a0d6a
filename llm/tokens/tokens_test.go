package tokens_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stewardhq/steward/llm"
	"github.com/stewardhq/steward/llm/tokens"
)

func TestEncoding(t *testing.T) {
	tests := []struct {
		model string
		enc   string
		exact bool
	}{
		{"gpt-4o", tokens.O200kBase, true},
		{"gpt-4o-mini-2024-07-18", tokens.O200kBase, true},
		{"GPT-4.1-nano", tokens.O200kBase, true},
		{"gpt-5", tokens.O200kBase, true},
		{"gpt-5.1-codex", tokens.O200kBase, true},
		{"o1", tokens.O200kBase, true},
		{"o3-mini", tokens.O200kBase, true},
		{"o4-mini", tokens.O200kBase, true},
		{"openai/gpt-4o", tokens.O200kBase, true},
		{"gpt-oss:20b", tokens.O200kBase, true},
		{"gpt-4", tokens.Cl100kBase, true},
		{"gpt-4-turbo", tokens.Cl100kBase, true},
		{"gpt-3.5-turbo", tokens.Cl100kBase, true},
		{"gpt-35-turbo", tokens.Cl100kBase, true},
		{"o10-preview", tokens.O200kBase, false},
		{"gpt-40", tokens.O200kBase, false},
		{"claude-sonnet-4-5", tokens.O200kBase, false},
		{"meta-llama/Llama-3.3-70B-Instruct", tokens.O200kBase, false},
		{"", tokens.O200kBase, false},
	}
	for _, tc := range tests {
		t.Run(tc.model, func(t *testing.T) {
			enc, exact := tokens.Encoding(tc.model)
			if enc != tc.enc || exact != tc.exact {
				t.Errorf("Encoding(%q) = %s, %v; want %s, %v", tc.model, enc, exact, tc.enc, tc.exact)
			}
		})
	}
}

func TestCountKnownValues(t *testing.T) {
	// Reference counts from OpenAI's tiktoken.
	tests := []struct {
		model, text string
		want        int
	}{
		{"gpt-4", "tiktoken is great!", 6},
		{"gpt-4", "hello world", 2},
		{"gpt-4o", "hello world", 2},
		{"gpt-4o", "", 0},
	}
	for _, tc := range tests {
		got, err := tokens.Count(tc.model, tc.text)
		if err != nil || got != tc.want {
			t.Errorf("Count(%q, %q) = %d, %v; want %d", tc.model, tc.text, got, err, tc.want)
		}
	}
}

func count(t *testing.T, model, s string) int {
	t.Helper()
	n, err := tokens.Count(model, s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCountTools(t *testing.T) {
	search := llm.ToolSpec{
		Name:        "web_search",
		Description: "Searches the web for <pages> & news.",
		Parameters:  json.RawMessage("{\n  \"type\": \"object\",\n  \"properties\": {\"query\": {\"type\": \"string\"}},\n  \"required\": [\"query\"]\n}"),
	}
	bare := llm.ToolSpec{Name: "now"}
	wantSearch := `{"name":"web_search","description":"Searches the web for <pages> & news.","parameters":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}}`
	instructions := "# Tool usage instructions:\nSearch only when the user asks about current events."
	for _, model := range []string{"gpt-4o", "gpt-4", "mistral-large"} {
		t.Run(model, func(t *testing.T) {
			tests := []struct {
				name  string
				specs []llm.ToolSpec
				instr string
				want  int
			}{
				{"nothing", nil, "", 0},
				{"blank instructions", nil, " \n", 0},
				{"one tool, compact and unescaped", []llm.ToolSpec{search}, "", count(t, model, wantSearch)},
				{"a tool without parameters", []llm.ToolSpec{bare}, "", count(t, model, `{"name":"now"}`)},
				{"tools and instructions", []llm.ToolSpec{search, bare}, instructions,
					count(t, model, wantSearch) + count(t, model, `{"name":"now"}`) + count(t, model, "\n\n"+instructions)},
			}
			for _, tc := range tests {
				got, err := tokens.CountTools(model, tc.specs, tc.instr)
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				if got != tc.want {
					t.Errorf("%s: %d tokens, want %d", tc.name, got, tc.want)
				}
			}
		})
	}
}

func TestCountToolsRefusesBadParameters(t *testing.T) {
	for _, params := range []string{`{"type":`, `["not","an","object"]`} {
		_, err := tokens.CountTools("gpt-4o", []llm.ToolSpec{{Name: "broken", Parameters: json.RawMessage(params)}}, "")
		if err == nil || !strings.Contains(err.Error(), `"broken"`) || !strings.Contains(err.Error(), "JSON Schema object") {
			t.Errorf("parameters %s: error %v", params, err)
		}
	}
}

func BenchmarkCountTools(b *testing.B) {
	spec := llm.ToolSpec{Name: "web_search", Description: strings.Repeat("Searches the web. ", 20),
		Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"what to search"}},"required":["query"]}`)}
	specs := []llm.ToolSpec{spec, spec, spec}
	for b.Loop() {
		if _, err := tokens.CountTools("gpt-4o", specs, "Use the tools wisely."); err != nil {
			b.Fatal(err)
		}
	}
}
