package responses

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/llmtest"
	"github.com/stewardhq/steward/llm"
)

func TestParseStream(t *testing.T) {
	created := `{"type":"response.created","response":{"id":"r","status":"in_progress","output":[]}}`
	tests := []struct {
		name      string
		stream    string
		wantErr   string
		wantText  string
		wantItems int
		wantUsage bool
		wantCites int
	}{
		{name: "completed", stream: answer(textItem), wantText: "It is sunny.", wantItems: 1, wantUsage: true},
		{name: "error event", stream: llmtest.SSE(created, `{"type":"error","code":"rate_limit_exceeded","message":"Rate limit reached for gpt-4o","param":null}`),
			wantErr: "Rate limit reached for gpt-4o"},
		{name: "nested error event", stream: llmtest.SSE(created, `{"type":"error","error":{"type":"server_error","message":"The server had an error"}}`),
			wantErr: "The server had an error"},
		{name: "response.failed", stream: llmtest.SSE(created, `{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"Something broke"},"output":[]}}`),
			wantErr: "Something broke"},
		{name: "chat style error object", stream: llmtest.SSE(`{"error":{"message":"Invalid API key","code":401}}`), wantErr: "Invalid API key"},
		{name: "no completed after items is cut off", stream: llmtest.SSE(created,
			`{"type":"response.output_item.done","output_index":1,"item":`+callWeather+`}`,
			`{"type":"response.output_item.done","output_index":0,"item":`+textItem+`}`), wantErr: "ended without response.completed, after 2 output items"},
		{name: "nothing at all", stream: llmtest.SSE(created), wantErr: "ended without response.completed"},
		{name: "empty body", stream: "", wantErr: "ended without response.completed"},
		{name: "unreadable lines skipped", stream: "data: {not json\n\n" + answer(textItem), wantText: "It is sunny.", wantItems: 1, wantUsage: true},
		{name: "incomplete counts as the round", stream: llmtest.SSE(created, `{"type":"response.output_text.delta","delta":"Partial"}`,
			`{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Partial"}]}]}}`),
			wantText: "Partial", wantItems: 1},
		{name: "refusal", stream: llmtest.SSE(created, `{"type":"response.refusal.delta","delta":"I can't help with that."}`,
			`{"type":"response.completed","response":{"status":"completed","output":[{"type":"message","role":"assistant","content":[{"type":"refusal","refusal":"I can't help with that."}]}]}}`),
			wantText: "I can't help with that.", wantItems: 1},
		{name: "annotations", stream: llmtest.SSE(created, `{"type":"response.output_text.delta","delta":"See"}`,
			`{"type":"response.output_text.annotation.added","annotation":{"type":"url_citation","url":"https://example.org/a","title":"A"}}`,
			`{"type":"response.completed","response":{"status":"completed","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"See","annotations":[{"type":"url_citation","url":"https://example.org/b","title":"B"}]}]}]}}`),
			wantText: "See", wantItems: 1, wantCites: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var streamed strings.Builder
			res, err := parseStream(strings.NewReader(tt.stream), func(s string) { streamed.WriteString(s) })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if streamed.String() != tt.wantText {
				t.Errorf("streamed %q, want %q", streamed.String(), tt.wantText)
			}
			if len(res.output) != tt.wantItems || (res.usage != nil) != tt.wantUsage || len(res.citations) != tt.wantCites {
				t.Errorf("items %d usage %v citations %d", len(res.output), res.usage, len(res.citations))
			}
		})
	}
}

func newAdapter(t *testing.T, caps llm.Capabilities, req llm.Request, answers ...string) (llm.Adapter, *llmtest.ReplayServer) {
	t.Helper()
	var exs []llmtest.Exchange
	for _, a := range answers {
		exs = append(exs, llmtest.Exchange{Status: 200, ContentType: "text/event-stream", Body: []byte(a)})
	}
	srv := llmtest.NewReplayServer(t, exs)
	p := llm.Provider{Kind: "openai", BaseURL: srv.URL + "/", Model: "gpt-4o", Caps: caps}
	return New(p, req, llmtest.LoopbackTransport(t)), srv
}

var plainCaps = llm.Capabilities{API: llm.Responses, ToolCalling: true}

func TestCalls(t *testing.T) {
	tests := []struct {
		name      string
		item      string
		wantID    string
		wantArgs  string
		wantValid bool
	}{
		{"ordinary", callWeather, "call_1", `{"city":"Florence"}`, true},
		{"no call_id", `{"type":"function_call","name":"weather","arguments":"{}"}`, "", `{}`, true},
		{"empty arguments", `{"type":"function_call","call_id":"c","name":"weather","arguments":""}`, "c", `{}`, true},
		{"array arguments", `{"type":"function_call","call_id":"c","name":"weather","arguments":"[1]"}`, "c", `[1]`, false},
		{"broken arguments", `{"type":"function_call","call_id":"c","name":"weather","arguments":"{\"city\":"}`, "c", `"{\"city\":"`, false},
		{"blank name", `{"type":"function_call","call_id":"c","name":" ","arguments":"{}"}`, "c", `{}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, _ := newAdapter(t, plainCaps, llm.Request{}, answer(tt.item))
			round, err := a.Round(context.Background(), llm.RoundOptions{IncludeTools: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(round.Calls) != 1 {
				t.Fatalf("calls: %+v", round.Calls)
			}
			c := round.Calls[0]
			if c.ID != tt.wantID || string(c.Arguments) != tt.wantArgs || c.Valid != tt.wantValid {
				t.Errorf("got id %q args %s valid %v", c.ID, c.Arguments, c.Valid)
			}
		})
	}
}

// Strict mode is the host's promise: a host which does not bind gets the
// schema as written with strict:false, one which does gets it converted.
func TestStrictOnlyWhereTheHostBinds(t *testing.T) {
	spec := llm.ToolSpec{Name: "w", Strict: true, Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`)}
	for _, binds := range []bool{false, true} {
		caps := llm.Capabilities{API: llm.Responses, EnforcesStrictToolSchemas: binds}
		a, srv := newAdapter(t, caps, llm.Request{Tools: []llm.ToolSpec{spec}}, answer(textItem))
		if _, err := a.Round(context.Background(), llm.RoundOptions{IncludeTools: true}, nil); err != nil {
			t.Fatal(err)
		}
		var body struct {
			Tools []functionTool `json:"tools"`
		}
		json.Unmarshal(srv.Body(0), &body)
		tl := body.Tools[0]
		converted := strings.Contains(string(tl.Parameters), `"required":["a"]`) && strings.Contains(string(tl.Parameters), `"null"`)
		if tl.Strict != binds || converted != binds {
			t.Errorf("host binds %v: strict %v, parameters %s", binds, tl.Strict, tl.Parameters)
		}
	}
}

func TestUsageOnlyForKnownItems(t *testing.T) {
	a, _ := newAdapter(t, plainCaps, llm.Request{}, answer(textItem), answer(textItem, `{"type":"web_search_call","id":"ws_1","status":"completed"}`))
	r1, err := a.Round(context.Background(), llm.RoundOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := llm.Usage{InputTokens: 10, OutputTokens: 5, ReasoningTokens: 3, CachedTokens: 2}
	if r1.Usage != want {
		t.Errorf("usage %+v, want %+v", r1.Usage, want)
	}
	r2, err := a.Round(context.Background(), llm.RoundOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r2.Usage != (llm.Usage{}) {
		t.Errorf("usage with a hosted tool item: %+v, want none", r2.Usage)
	}
}

func TestRequestRules(t *testing.T) {
	req := llm.Request{
		Model:  "o4-mini",
		System: "Be brief.",
		Tools: []llm.ToolSpec{{Name: "open", Strict: true, Description: "Allows more.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"additionalProperties":true}`)}},
		Extra: map[string]any{"tool_choice": "auto", "include": []any{"message.output_text.logprobs"}, "input": "x", "parallel_tool_calls": true},
	}
	reasoning := llm.Capabilities{API: llm.Responses, EnforcesStrictToolSchemas: true, ToolCalling: true, Reasoning: llm.ReasoningResponsesItems}
	a, srv := newAdapter(t, reasoning, req, answer(textItem), answer(textItem))
	if _, err := a.Round(context.Background(), llm.RoundOptions{IncludeTools: true}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Round(context.Background(), llm.RoundOptions{FinalInstruction: "Stop now."}, nil); err != nil {
		t.Fatal(err)
	}
	var first, second map[string]any
	json.Unmarshal(srv.Body(0), &first)
	json.Unmarshal(srv.Body(1), &second)
	if _, ok := first["parallel_tool_calls"]; ok {
		t.Error("parallel_tool_calls was sent")
	}
	if got := first["include"]; len(got.([]any)) != 2 || got.([]any)[1] != includeEncrypted {
		t.Errorf("include = %v, want the configured one plus encrypted reasoning", got)
	}
	tools := first["tools"].([]any)
	if tl := tools[0].(map[string]any); tl["strict"] != false || tl["parameters"].(map[string]any)["additionalProperties"] != true {
		t.Errorf("a schema strict mode cannot express must go as written with strict false: %v", tl)
	}
	if first["tool_choice"] != "auto" {
		t.Errorf("tool_choice with tools: %v", first["tool_choice"])
	}
	if _, ok := second["tool_choice"]; ok || len(second["tools"].([]any)) != 0 {
		t.Errorf("without tools: tools %v tool_choice %v", second["tools"], second["tool_choice"])
	}
	sys := second["input"].([]any)[0].(map[string]any)
	if sys["role"] != "developer" || sys["content"] != "Be brief.\n\nStop now." {
		t.Errorf("system item: %v", sys)
	}
}

// A model the catalogue took for a reasoning one refuses encrypted
// reasoning; the adapter asks again without it, for the rest of the run.
func TestEncryptedReasoningRefused(t *testing.T) {
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		if strings.Contains(string(b), includeEncrypted) {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":{"message":"Encrypted content is not supported with this model.","type":"invalid_request_error","param":"include","code":null}}`))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(answer(textItem)))
	}))
	defer srv.Close()
	p := llm.Provider{BaseURL: srv.URL + "/", Model: "gpt-4o", Caps: llm.Capabilities{API: llm.Responses, Reasoning: llm.ReasoningResponsesItems}}
	a := New(p, llm.Request{}, llmtest.LoopbackTransport(t))
	for i := 0; i < 2; i++ {
		if _, err := a.Round(context.Background(), llm.RoundOptions{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(bodies) != 3 {
		t.Errorf("%d requests, want 3 (refused, retried, then without include)", len(bodies))
	}
}

// OpenAI's models that do not reason are not asked for encrypted
// reasoning, even when the provider speaks Responses for them.
func TestNoEncryptedReasoningForModelsThatDoNotReason(t *testing.T) {
	caps := llm.Capabilities{API: llm.Responses, Reasoning: llm.ReasoningResponsesItems}
	for _, tt := range []struct {
		kind, model string
		want        bool
	}{
		{"openai", "gpt-4o", false},
		{"openai", "gpt-4.1-mini", false},
		{"openai", "o4-mini", true},
		{"openai", "gpt-5", true},
		{"other", "gpt-4o", true},
	} {
		srv := llmtest.NewReplayServer(t, []llmtest.Exchange{{Status: 200, ContentType: "text/event-stream", Body: []byte(answer(textItem))}})
		a := New(llm.Provider{Kind: tt.kind, BaseURL: srv.URL + "/", Model: tt.model, Caps: caps}, llm.Request{}, llmtest.LoopbackTransport(t))
		if _, err := a.Round(context.Background(), llm.RoundOptions{}, nil); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(srv.Body(0)), includeEncrypted); got != tt.want {
			t.Errorf("%s %s: include sent %v, want %v", tt.kind, tt.model, got, tt.want)
		}
	}
}

func TestHTTPErrorIsReturned(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"message":"Incorrect API key provided"}}`))
	}))
	defer srv.Close()
	a := New(llm.Provider{BaseURL: srv.URL + "/", APIKey: "bad"}, llm.Request{}, llmtest.LoopbackTransport(t))
	_, err := a.Round(context.Background(), llm.RoundOptions{}, nil)
	var he *llm.HTTPError
	if !errors.As(err, &he) || he.StatusCode != 401 || !strings.Contains(err.Error(), "Incorrect API key") {
		t.Fatalf("err = %v", err)
	}
}

func TestRecording(t *testing.T) {
	a, srv := newAdapter(t, plainCaps, llm.Request{}, answer(textItem, callWeather), answer(textItem))
	if _, err := a.Round(context.Background(), llm.RoundOptions{IncludeTools: true}, nil); err != nil {
		t.Fatal(err)
	}
	a.RecordAssistantTurn()
	a.RecordAssistantTurn() // once per round, whatever the caller does
	a.RecordToolResult("call_1", "Sunny", true)
	if _, err := a.Round(context.Background(), llm.RoundOptions{IncludeTools: true}, nil); err != nil {
		t.Fatal(err)
	}
	items := inputItems(t, srv.Body(1))
	var types []string
	for _, it := range items {
		types = append(types, it.Type+it.Role)
	}
	if got := strings.Join(types, ","); got != "messageassistant,function_call,function_call_output" {
		t.Errorf("items: %s", got)
	}
	texts := a.RecordedTexts()
	if strings.Join(texts, "|") != `It is sunny.|weather|{"city":"Florence"}|Sunny` {
		t.Errorf("recorded texts %q", texts)
	}
}

func TestWholeJSONAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"r","status":"completed","output":[` + textItem + `],"usage":{"input_tokens":3,"output_tokens":4}}`))
	}))
	defer srv.Close()
	a := New(llm.Provider{BaseURL: srv.URL + "/"}, llm.Request{}, llmtest.LoopbackTransport(t))
	var got strings.Builder
	round, err := a.Round(context.Background(), llm.RoundOptions{}, func(s string) { got.WriteString(s) })
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != "It is sunny." || round.Usage.OutputTokens != 4 {
		t.Errorf("text %q usage %+v", got.String(), round.Usage)
	}
}

func TestIdleStream(t *testing.T) {
	srv := llmtest.HangingServer(t, llmtest.SSE(`{"type":"response.output_text.delta","delta":"Hel"}`))
	a := NewWithOptions(llm.Provider{BaseURL: srv.URL + "/"}, llm.Request{}, llmtest.LoopbackTransport(t), Options{IdleTimeout: 100 * time.Millisecond})
	var got strings.Builder
	_, err := a.Round(context.Background(), llm.RoundOptions{}, func(s string) { got.WriteString(s) })
	if !errors.Is(err, ErrIdle) {
		t.Fatalf("err = %v, want ErrIdle", err)
	}
	if got.String() != "Hel" {
		t.Errorf("text before the stall: %q", got.String())
	}
}

func TestCancelMidStream(t *testing.T) {
	srv := llmtest.HangingServer(t, llmtest.SSE(`{"type":"response.output_text.delta","delta":"Hel"}`))
	a := New(llm.Provider{BaseURL: srv.URL + "/"}, llm.Request{}, llmtest.LoopbackTransport(t))
	ctx, cancel := context.WithCancel(context.Background())
	_, err := a.Round(ctx, llm.RoundOptions{}, func(string) { cancel() })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
