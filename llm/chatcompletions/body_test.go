package chatcompletions

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stewardhq/steward/llm"
)

func bodyOf(t *testing.T, p llm.Provider, req llm.Request, ro llm.RoundOptions) map[string]json.RawMessage {
	t.Helper()
	a := NewWithOptions(p, req, nil, Options{Logger: quietLogger})
	b, err := a.BuildBody(ro)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestParallelToolCallsAndTools covers when tools and parallel_tool_calls
// are sent.
func TestParallelToolCallsAndTools(t *testing.T) {
	withTools := weatherRequest()
	noTools := llm.Request{Messages: withTools.Messages}
	perplexity := llm.KindPerplexity.Provider("sonar", "", "k")
	tests := []struct {
		name         string
		p            llm.Provider
		req          llm.Request
		includeTools bool
		wantTools    bool
		wantParallel string // "" = absent
	}{
		{"openai with tools", llm.KindOpenAI.Provider("gpt-4o", "", "k"), withTools, true, true, "false"},
		{"groq with tools", llm.KindGroq.Provider("m", "", "k"), withTools, true, true, "false"},
		{"hugging face never gets the flag", llm.KindHuggingFace.Provider("m", "", "k"), withTools, true, true, ""},
		{"no tools offered", llm.KindGroq.Provider("m", "", "k"), noTools, true, false, ""},
		{"tools excluded for the final round", llm.KindGroq.Provider("m", "", "k"), withTools, false, false, ""},
		{"host without tool calling", perplexity, withTools, true, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := bodyOf(t, tc.p, tc.req, llm.RoundOptions{IncludeTools: tc.includeTools})
			if _, ok := m["tools"]; ok != tc.wantTools {
				t.Errorf("tools present = %v, want %v", ok, tc.wantTools)
			}
			if got := string(m["parallel_tool_calls"]); got != tc.wantParallel {
				t.Errorf("parallel_tool_calls = %q, want %q", got, tc.wantParallel)
			}
			if _, ok := m["tool_choice"]; ok {
				t.Error("tool_choice sent")
			}
			if string(m["stream"]) != "true" {
				t.Errorf("stream = %s", m["stream"])
			}
		})
	}
}

func TestExtraCannotOverrideWhatTheAdapterSets(t *testing.T) {
	req := weatherRequest()
	req.Model = "override-model"
	req.Extra = map[string]any{
		"Model": "x", "messages": []any{}, "STREAM": false, "stream_options": nil, "tools": []any{},
		"parallel_tool_calls": true, "tool_choice": "required", "n": 3,
		"temperature": 0.3, "reasoning_effort": "low",
	}
	m := bodyOf(t, llm.KindOpenAI.Provider("gpt-4o", "", "k"), req, llm.RoundOptions{IncludeTools: true})
	if string(m["model"]) != `"override-model"` || string(m["stream"]) != "true" || string(m["parallel_tool_calls"]) != "false" {
		t.Errorf("reserved keys overridden: model %s stream %s parallel %s", m["model"], m["stream"], m["parallel_tool_calls"])
	}
	for _, k := range []string{"Model", "STREAM", "tool_choice", "n"} {
		if _, ok := m[k]; ok {
			t.Errorf("%s passed through", k)
		}
	}
	if string(m["temperature"]) != "0.3" || string(m["reasoning_effort"]) != `"low"` {
		t.Errorf("harmless extras lost: %s %s", m["temperature"], m["reasoning_effort"])
	}
	if string(m["stream_options"]) != `{"include_usage":true}` {
		t.Errorf("stream_options = %s", m["stream_options"])
	}
	var tools []any
	_ = json.Unmarshal(m["tools"], &tools)
	if len(tools) != 2 {
		t.Errorf("tools = %s", m["tools"])
	}
	m = bodyOf(t, llm.KindMistral.Provider("mistral-large-latest", "", "k"), weatherRequest(), llm.RoundOptions{})
	if _, ok := m["stream_options"]; ok {
		t.Error("stream_options sent to Mistral")
	}
	if string(m["model"]) != `"mistral-large-latest"` {
		t.Errorf("provider model not used: %s", m["model"])
	}
}

func TestStrictOnlyWhereTheHostBinds(t *testing.T) {
	loose := weatherRequest()
	loose.Tools = []llm.ToolSpec{scenarioTools[0]}
	loose.Tools[0].Strict = false
	tests := []struct {
		name       string
		p          llm.Provider
		req        llm.Request
		wantStrict bool
	}{
		{"openai keeps strict and converts", llm.KindOpenAI.Provider("gpt-4o", "", "k"), llm.Request{Tools: scenarioTools[:1]}, true},
		{"openai honours a definition without strict", llm.KindOpenAI.Provider("gpt-4o", "", "k"), loose, false},
		{"groq gets the schema as written", llm.KindGroq.Provider("m", "", "k"), llm.Request{Tools: scenarioTools[:1]}, false},
		{"ollama gets the schema as written", llm.KindOllama.Provider("m", "", ""), llm.Request{Tools: scenarioTools[:1]}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := bodyOf(t, tc.p, tc.req, llm.RoundOptions{IncludeTools: true})
			var tools []struct {
				Type     string
				Function struct {
					Name       string
					Strict     *bool
					Parameters struct {
						Required   []string
						Properties map[string]struct{ Type any }
					}
				}
			}
			if err := json.Unmarshal(m["tools"], &tools); err != nil {
				t.Fatal(err)
			}
			f := tools[0].Function
			if tools[0].Type != "function" || f.Name != "weather" || f.Strict == nil || *f.Strict != tc.wantStrict {
				t.Fatalf("tool = %s", m["tools"])
			}
			unitType, _ := json.Marshal(f.Parameters.Properties["unit"].Type)
			if tc.wantStrict {
				if strings.Join(f.Parameters.Required, ",") != "city,unit" || string(unitType) != `["string","null"]` {
					t.Errorf("strict schema not converted: %s", m["tools"])
				}
			} else if strings.Join(f.Parameters.Required, ",") != "city" || string(unitType) != `"string"` {
				t.Errorf("schema not as written: %s", m["tools"])
			}
		})
	}
}

func TestSystemPromptAndFinalInstruction(t *testing.T) {
	req := weatherRequest()
	req.System = "Be brief."
	req.Messages = []llm.Message{{Role: llm.RoleUser, Text: "hi"}, {Role: llm.RoleAssistant, Text: ""}, {Role: llm.RoleAssistant, Text: "hello"}, {Role: llm.RoleUser, Text: "weather?"}}
	m := bodyOf(t, llm.KindGroq.Provider("m", "", "k"), req, llm.RoundOptions{FinalInstruction: "Do not call tools."})
	var msgs []wireMessage
	if err := json.Unmarshal(m["messages"], &msgs); err != nil {
		t.Fatal(err)
	}
	want := []wireMessage{{"system", "Be brief.\n\nDo not call tools."}, {"user", "hi"}, {"assistant", "hello"}, {"user", "weather?"}}
	if len(msgs) != len(want) {
		t.Fatalf("messages = %+v", msgs)
	}
	for i := range want {
		if msgs[i] != want[i] {
			t.Errorf("message %d = %+v, want %+v", i, msgs[i], want[i])
		}
	}
	req.System = ""
	m = bodyOf(t, llm.KindGroq.Provider("m", "", "k"), req, llm.RoundOptions{})
	_ = json.Unmarshal(m["messages"], &msgs)
	if msgs[0].Role != "user" {
		t.Errorf("an empty system prompt was sent: %+v", msgs[0])
	}
}

func TestValidFunctionName(t *testing.T) {
	tests := map[string]bool{
		"weather": true, "get_weather-2": true, strings.Repeat("a", 64): true,
		"": false, strings.Repeat("a", 65): false, "get weather": false, "functions.weather": false, "wetter_für": false,
	}
	for name, want := range tests {
		if got := ValidFunctionName(name); got != want {
			t.Errorf("ValidFunctionName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestMissingModelIsAClearError(t *testing.T) {
	a := NewWithOptions(llm.KindGroq.Provider("", "", "k"), weatherRequest(), nil, Options{Logger: quietLogger})
	if _, err := a.BuildBody(llm.RoundOptions{}); err == nil || !strings.Contains(err.Error(), "no model") {
		t.Errorf("err = %v, want a missing-model error", err)
	}
}
