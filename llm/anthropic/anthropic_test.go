package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/llmtest"
	"github.com/stewardhq/steward/llm"
)

const (
	start = `{"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1}}}`
	stop  = `{"type":"message_stop"}`
)

func deltaEv(index, d string) string {
	return `{"type":"content_block_delta","index":` + index + `,"delta":` + d + `}`
}

func stopReason(r string) string {
	return `{"type":"message_delta","delta":{"stop_reason":"` + r + `"},"usage":{"output_tokens":9}}`
}

func TestParseStream(t *testing.T) {
	tests := []struct {
		name       string
		stream     string
		wantErr    string
		wantText   string
		wantCalls  string // id:name:args:valid, joined by |
		wantBlocks []string
	}{
		{name: "error event in a 200 stream", stream: llmtest.SSE(start, `{"type":"ping"}`, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
			wantErr: "Overloaded"},
		{name: "error object without an event name", stream: llmtest.SSE(start) + "data: {\"error\":{\"message\":\"Overloaded too\"}}\n\n", wantErr: "Overloaded too"},
		{name: "no stop reason, no message_stop", stream: llmtest.SSE(start, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`, deltaEv("0", `{"type":"text_delta","text":"Hi"}`)),
			wantErr: "ended without message_stop"},
		{name: "empty", stream: "", wantErr: "ended without message_stop"},
		{name: "stop reason without message_stop is cut off", stream: llmtest.SSE(start, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`, deltaEv("0", `{"type":"text_delta","text":"Hi"}`), stopReason("end_turn")),
			wantErr: "ended without message_stop"},
		{name: "orphan deltas", stream: llmtest.SSE(start, deltaEv("0", `{"type":"text_delta","text":"Hi"}`), deltaEv("1", `{"type":"input_json_delta","partial_json":"{}"}`), stop),
			wantText: "Hi", wantBlocks: []string{`{"text":"Hi","type":"text"}`}},
		{name: "input that is not an object", stream: llmtest.SSE(start, `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"w","input":{}}}`,
			deltaEv("0", `{"type":"input_json_delta","partial_json":"[1,"}`), deltaEv("0", `{"type":"input_json_delta","partial_json":"2]"}`), stopReason("tool_use"), stop),
			wantCalls: `t1:w:{}:false`, wantBlocks: []string{`{"id":"t1","input":{},"name":"w","type":"tool_use"}`}},
		{name: "broken input", stream: llmtest.SSE(start, `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"w","input":{}}}`,
			deltaEv("0", `{"type":"input_json_delta","partial_json":"{\"a\":"}`), stop),
			wantCalls: `t1:w:{}:false`},
		{name: "only empty input fragments", stream: llmtest.SSE(start, `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"w","input":{}}}`,
			deltaEv("0", `{"type":"input_json_delta","partial_json":""}`), stop),
			wantCalls: `t1:w:{}:true`},
		{name: "tool_use without id stays in the turn only", stream: llmtest.SSE(start, `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","name":"w","input":{}}}`, stop),
			wantBlocks: []string{`{"input":{},"name":"w","type":"tool_use"}`}},
		{name: "thinking without signature delta keeps an empty signature", stream: llmtest.SSE(start, `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
			deltaEv("0", `{"type":"thinking_delta","thinking":"Hmm"}`), stop),
			wantBlocks: []string{`{"signature":"","thinking":"Hmm","type":"thinking"}`}},
		{name: "blocks in index order, unknown ones untouched", stream: llmtest.SSE(start,
			`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking",  "data":"abc"}}`,
			deltaEv("1", `{"type":"text_delta","text":"B"}`), stop),
			wantText: "B", wantBlocks: []string{`{"type":"redacted_thinking",  "data":"abc"}`, `{"text":"B","type":"text"}`}},
		{name: "unreadable lines skipped", stream: "data: {oops\n\n" + llmtest.SSE(start, stop)},
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
			if streamed.String() != tt.wantText || res.text.String() != tt.wantText {
				t.Errorf("text streamed %q, kept %q, want %q", streamed.String(), res.text.String(), tt.wantText)
			}
			var calls []string
			for _, c := range res.calls {
				calls = append(calls, c.ID+":"+c.Name+":"+string(c.Arguments)+":"+map[bool]string{true: "true", false: "false"}[c.Valid])
			}
			if got := strings.Join(calls, "|"); got != tt.wantCalls {
				t.Errorf("calls %q, want %q", got, tt.wantCalls)
			}
			if tt.wantBlocks != nil {
				var got []string
				for _, b := range res.blocks {
					got = append(got, string(b))
				}
				if strings.Join(got, "\n") != strings.Join(tt.wantBlocks, "\n") {
					t.Errorf("blocks\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.wantBlocks, "\n"))
				}
			}
		})
	}
}

func TestUsageAndCitations(t *testing.T) {
	s := llmtest.SSE(`{"type":"message_start","message":{"usage":{"input_tokens":10,"cache_creation_input_tokens":3,"cache_read_input_tokens":4,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"","citations":[]}}`,
		deltaEv("0", `{"type":"citations_delta","citation":{"type":"web_search_result_location","url":"https://example.org/a","title":"A","cited_text":"x","encrypted_index":"e"}}`),
		deltaEv("0", `{"type":"text_delta","text":"Cited."}`),
		stopReason("end_turn"), stop)
	res, err := parseStream(strings.NewReader(s), func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	r := res.round()
	if want := (llm.Usage{InputTokens: 17, OutputTokens: 9, CachedTokens: 4}); r.Usage != want {
		t.Errorf("usage %+v, want %+v", r.Usage, want)
	}
	if len(r.Sources) != 1 || r.Sources[0].URL != "https://example.org/a" || r.Sources[0].Title != "A" {
		t.Errorf("sources %+v", r.Sources)
	}
	if !strings.Contains(string(res.blocks[0]), `"citations":[{"type":"web_search_result_location"`) {
		t.Errorf("the citation must stay in the block: %s", res.blocks[0])
	}
}

func newAdapter(t *testing.T, req llm.Request, answers ...string) (llm.Adapter, *llmtest.ReplayServer) {
	t.Helper()
	var exs []llmtest.Exchange
	for _, a := range answers {
		exs = append(exs, llmtest.Exchange{Status: 200, ContentType: "text/event-stream", Body: []byte(a)})
	}
	srv := llmtest.NewReplayServer(t, exs)
	p := llm.Provider{Kind: "anthropic", BaseURL: srv.URL + "/", APIKey: "k", Model: "claude-sonnet-4-5",
		Caps: llm.Capabilities{API: llm.Messages, EnforcesStrictToolSchemas: true}}
	return New(p, req, llmtest.LoopbackTransport(t)), srv
}

func TestRequestRules(t *testing.T) {
	tools := []llm.ToolSpec{{Name: "w", Parameters: json.RawMessage(`{"type":"object"}`)}}
	tests := []struct {
		name  string
		req   llm.Request
		opts  llm.RoundOptions
		check func(t *testing.T, body map[string]any)
	}{
		{"max_tokens defaults to 4096", llm.Request{}, llm.RoundOptions{}, func(t *testing.T, b map[string]any) {
			if b["max_tokens"] != float64(4096) {
				t.Errorf("max_tokens %v", b["max_tokens"])
			}
		}},
		{"max_tokens from the request wins", llm.Request{MaxTokens: 100, Extra: map[string]any{"max_tokens": 7}}, llm.RoundOptions{}, func(t *testing.T, b map[string]any) {
			if b["max_tokens"] != float64(100) {
				t.Errorf("max_tokens %v", b["max_tokens"])
			}
		}},
		{"max_tokens from configuration when the request says nothing", llm.Request{Extra: map[string]any{"max_tokens": 7}}, llm.RoundOptions{}, func(t *testing.T, b map[string]any) {
			if b["max_tokens"] != float64(7) {
				t.Errorf("max_tokens %v", b["max_tokens"])
			}
		}},
		{"tools excluded: no tools, no tool_choice", llm.Request{Tools: tools, Extra: map[string]any{"tool_choice": map[string]any{"type": "auto"}}}, llm.RoundOptions{}, func(t *testing.T, b map[string]any) {
			if _, ok := b["tools"]; ok {
				t.Error("tools sent")
			}
			if _, ok := b["tool_choice"]; ok {
				t.Error("tool_choice sent")
			}
		}},
		{"included but none: no tools", llm.Request{}, llm.RoundOptions{IncludeTools: true}, func(t *testing.T, b map[string]any) {
			if _, ok := b["tools"]; ok {
				t.Error("tools sent")
			}
		}},
		{"final instruction after a blank line", llm.Request{System: "Sys."}, llm.RoundOptions{FinalInstruction: "Answer."}, func(t *testing.T, b map[string]any) {
			if b["system"] != "Sys.\n\nAnswer." {
				t.Errorf("system %q", b["system"])
			}
		}},
		{"no system at all", llm.Request{}, llm.RoundOptions{}, func(t *testing.T, b map[string]any) {
			if _, ok := b["system"]; ok {
				t.Error("empty system sent")
			}
		}},
		{"empty messages left out", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "a"}, {Role: llm.RoleAssistant, Text: " "}, {Role: llm.RoleUser, Text: "b"}}}, llm.RoundOptions{}, func(t *testing.T, b map[string]any) {
			if n := len(b["messages"].([]any)); n != 2 {
				t.Errorf("%d messages", n)
			}
		}},
		{"strict only when true", llm.Request{Tools: []llm.ToolSpec{{Name: "a", Strict: true}, {Name: "b"}}}, llm.RoundOptions{IncludeTools: true}, func(t *testing.T, b map[string]any) {
			ts := b["tools"].([]any)
			if ts[0].(map[string]any)["strict"] != true {
				t.Error("strict missing")
			}
			if _, ok := ts[1].(map[string]any)["strict"]; ok {
				t.Error("strict:false written")
			}
			if ts[1].(map[string]any)["input_schema"].(map[string]any)["type"] != "object" {
				t.Error("a missing schema must become an empty object schema")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, srv := newAdapter(t, tt.req, llmtest.SSE(start, stop))
			if _, err := a.Round(context.Background(), tt.opts, nil); err != nil {
				t.Fatal(err)
			}
			var body map[string]any
			if err := json.Unmarshal(srv.Body(0), &body); err != nil {
				t.Fatal(err)
			}
			if body["stream"] != true || body["model"] != "claude-sonnet-4-5" {
				t.Errorf("stream %v model %v", body["stream"], body["model"])
			}
			tt.check(t, body)
		})
	}
}

// All results of a round go in one user message, flushed when the next
// round starts; the turn is recorded once.
func TestResultsInOneMessage(t *testing.T) {
	first := llmtest.SSE(start,
		`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"a","input":{}}}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t2","name":"b","input":{}}}`,
		stopReason("tool_use"), stop)
	a, srv := newAdapter(t, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "go"}}}, first, llmtest.SSE(start, stop))
	round, err := a.Round(context.Background(), llm.RoundOptions{IncludeTools: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a.RecordAssistantTurn()
	a.RecordAssistantTurn()
	a.RecordToolResult(round.Calls[0].ID, "one", false)
	a.RecordToolResult(round.Calls[1].ID, "two", true)
	if _, err := a.Round(context.Background(), llm.RoundOptions{IncludeTools: true}, nil); err != nil {
		t.Fatal(err)
	}
	got := essentials(t, srv.Body(1))
	want := []string{"0 user text go", "1 assistant tool_use t1 a {}", "1 assistant tool_use t2 b {}",
		"2 user tool_result t1 error=false one", "2 user tool_result t2 error=true two"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if strings.Contains(string(srv.Body(1)), `"is_error":false`) {
		t.Error("is_error:false written")
	}
	if texts := a.RecordedTexts(); strings.Join(texts, "|") != "a|{}|b|{}|one|two" {
		t.Errorf("recorded texts %q", texts)
	}
}

// A host which does not bind gets no strict flag; a model which refuses
// strict tools is asked again without, for the rest of the run.
func TestStrictFallbacks(t *testing.T) {
	req := llm.Request{Tools: []llm.ToolSpec{{Name: "a", Strict: true, Parameters: json.RawMessage(`{"type":"object"}`)}}}
	t.Run("host does not bind", func(t *testing.T) {
		srv := llmtest.NewReplayServer(t, []llmtest.Exchange{{Status: 200, ContentType: "text/event-stream", Body: []byte(llmtest.SSE(start, stop))}})
		a := New(llm.Provider{BaseURL: srv.URL + "/", Caps: llm.Capabilities{API: llm.Messages}}, req, llmtest.LoopbackTransport(t))
		if _, err := a.Round(context.Background(), llm.RoundOptions{IncludeTools: true}, nil); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(srv.Body(0)), `"strict"`) {
			t.Errorf("strict sent to a host that does not bind: %s", srv.Body(0))
		}
	})
	t.Run("model refuses strict", func(t *testing.T) {
		srv := llmtest.NewReplayServer(t, []llmtest.Exchange{
			{Status: 400, ContentType: "application/json", Body: []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"tools.0.strict: Extra inputs are not permitted"}}`)},
			{Status: 200, ContentType: "text/event-stream", Body: []byte(llmtest.SSE(start, stop))},
			{Status: 200, ContentType: "text/event-stream", Body: []byte(llmtest.SSE(start, stop))},
		})
		a := New(llm.Provider{BaseURL: srv.URL + "/", Caps: llm.Capabilities{API: llm.Messages, EnforcesStrictToolSchemas: true}}, req, llmtest.LoopbackTransport(t))
		for i := 0; i < 2; i++ {
			if _, err := a.Round(context.Background(), llm.RoundOptions{IncludeTools: true}, nil); err != nil {
				t.Fatal(err)
			}
		}
		if !strings.Contains(string(srv.Body(0)), `"strict":true`) || strings.Contains(string(srv.Body(1)), `"strict"`) || strings.Contains(string(srv.Body(2)), `"strict"`) {
			t.Errorf("bodies:\n%s\n%s\n%s", srv.Body(0), srv.Body(1), srv.Body(2))
		}
	})
}

// The final round runs without tools, but Anthropic refuses a conversation
// with tool blocks and no tool definitions: the tools go along with
// tool_choice none.
func TestFinalRoundAfterToolBlocks(t *testing.T) {
	first := llmtest.SSE(start, `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"w","input":{}}}`, stopReason("tool_use"), stop)
	req := llm.Request{Tools: []llm.ToolSpec{{Name: "w", Parameters: json.RawMessage(`{"type":"object"}`)}},
		Extra: map[string]any{"tool_choice": map[string]any{"type": "auto"}}}
	a, srv := newAdapter(t, req, first, llmtest.SSE(start, stop))
	round, err := a.Round(context.Background(), llm.RoundOptions{IncludeTools: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a.RecordAssistantTurn()
	a.RecordToolResult(round.Calls[0].ID, "limit reached", false)
	if _, err := a.Round(context.Background(), llm.RoundOptions{FinalInstruction: "Answer now."}, nil); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Tools      []map[string]any `json:"tools"`
		ToolChoice map[string]any   `json:"tool_choice"`
	}
	json.Unmarshal(srv.Body(1), &body)
	if len(body.Tools) != 1 || body.ToolChoice["type"] != "none" {
		t.Errorf("tools %v tool_choice %v, want the tools with tool_choice none", body.Tools, body.ToolChoice)
	}
	if err := requestSchema.Validate(t, srv.Body(1)); err != nil {
		t.Error(err)
	}
}

func TestWholeJSONAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"type":"message","content":[{"type":"text","text":"Hi"},{"type":"tool_use","id":"t","name":"w","input":"nope"},{"type":"thinking","thinking":"x"}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":2}}`))
	}))
	defer srv.Close()
	a := New(llm.Provider{BaseURL: srv.URL + "/"}, llm.Request{}, llmtest.LoopbackTransport(t))
	var got strings.Builder
	round, err := a.Round(context.Background(), llm.RoundOptions{}, func(s string) { got.WriteString(s) })
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != "Hi" || len(round.Calls) != 1 || round.Calls[0].Valid || string(round.Calls[0].Arguments) != "{}" {
		t.Errorf("text %q calls %+v", got.String(), round.Calls)
	}
}

func TestHTTPErrorIsReturned(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"type":"error","error":{"type":"invalid_request_error","message":"messages.1.content.0.thinking.signature: Invalid signature"}}`))
	}))
	defer srv.Close()
	a := New(llm.Provider{BaseURL: srv.URL + "/"}, llm.Request{}, llmtest.LoopbackTransport(t))
	_, err := a.Round(context.Background(), llm.RoundOptions{}, nil)
	var he *llm.HTTPError
	if !errors.As(err, &he) || !strings.Contains(err.Error(), "Invalid signature") {
		t.Fatalf("err = %v", err)
	}
}

func TestIdleStream(t *testing.T) {
	srv := llmtest.HangingServer(t, llmtest.SSE(start, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`, deltaEv("0", `{"type":"text_delta","text":"Hel"}`)))
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
	srv := llmtest.HangingServer(t, llmtest.SSE(start, deltaEv("0", `{"type":"text_delta","text":"Hel"}`)))
	a := New(llm.Provider{BaseURL: srv.URL + "/"}, llm.Request{}, llmtest.LoopbackTransport(t))
	ctx, cancel := context.WithCancel(context.Background())
	_, err := a.Round(ctx, llm.RoundOptions{}, func(string) { cancel() })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
