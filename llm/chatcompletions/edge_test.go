package chatcompletions

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/llm"
)

// roundFrom runs one round against a loopback server that answers with
// body, and returns the round and the adapter.
func roundFrom(t *testing.T, p llm.Provider, req llm.Request, contentType, body string) (*llm.Round, *Adapter, string, error) {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write([]byte(body))
	}))
	defer ts.Close()
	p.BaseURL = ts.URL + "/"
	a := NewWithOptions(p, req, &llm.Transport{Client: ts.Client(), MaxAttempts: 1}, Options{NewCallID: sequentialIDs(), Logger: quietLogger})
	var streamed strings.Builder
	round, err := a.Round(context.Background(), llm.RoundOptions{IncludeTools: true}, func(s string) { streamed.WriteString(s) })
	return round, a, streamed.String(), err
}

func weatherRequest() llm.Request {
	return llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Text: "weather?"}},
		Tools:    scenarioTools,
	}
}

type wantCall struct {
	id, name, args string
	valid          bool
}

func checkCalls(t *testing.T, got []llm.Call, want []wantCall) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d calls, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.ID != w.id || g.Name != w.name || string(g.Arguments) != w.args || g.Valid != w.valid {
			t.Errorf("call %d = {%s %s %s %v}, want %+v", i, g.ID, g.Name, g.Arguments, g.Valid, w)
		}
	}
}

// TestStreamEdgeCases covers what real hosts send (issue 3 §3).
func TestStreamEdgeCases(t *testing.T) {
	groq := llm.KindGroq.Provider("m", "", "k")
	tests := []struct {
		name      string
		body      string
		calls     []wantCall
		text      string
		usage     llm.Usage
		errSubstr string
	}{
		{
			name:  "whole call in one delta (Groq)",
			body:  sse(`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"functions.weather:0","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Rome\"}"},"index":0}]}}]}`),
			calls: []wantCall{{"functions.weather:0", "weather", `{"city":"Rome"}`, true}},
		},
		{
			name: "every call at index 0 with a new id (Ollama)",
			body: sse(
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","function":{"name":"weather","arguments":"{\"city\":\"Rome\"}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_b","function":{"name":"clock","arguments":"{}"}}]}}]}`),
			calls: []wantCall{{"call_a", "weather", `{"city":"Rome"}`, true}, {"call_b", "clock", `{}`, true}},
		},
		{
			name: "the same id at two indexes is two calls with distinct ids",
			body: sse(
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"weather","function":{"name":"weather","arguments":"{\"city\":\"Rome\"}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"weather","function":{"name":"weather","arguments":"{\"city\":\"Oslo\"}"}}]}}]}`),
			calls: []wantCall{{"weather", "weather", `{"city":"Rome"}`, true}, {"call_00000000000000000000000000000001", "weather", `{"city":"Oslo"}`, true}},
		},
		{
			name: "an id repeated on every fragment of one call",
			body: sse(
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c9","function":{"name":"weather","arguments":"{\"city\""}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c9","function":{"arguments":":\"Oslo\"}"}}]}}]}`),
			calls: []wantCall{{"c9", "weather", `{"city":"Oslo"}`, true}},
		},
		{
			name: "fragments without index or id continue the last call",
			body: sse(
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"call_a","function":{"name":"weather","arguments":"{\"ci"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"ty\":\"Oslo\"}"}}]}}]}`),
			calls: []wantCall{{"call_a", "weather", `{"city":"Oslo"}`, true}},
		},
		{
			name: "fragments matched by id when the index is missing",
			body: sse(
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"a","function":{"name":"weather","arguments":"{\"city\":"}},{"id":"b","function":{"name":"clock","arguments":"{"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"a","function":{"arguments":"\"Bern\"}"}},{"id":"b","function":{"arguments":"}"}}]}}]}`),
			calls: []wantCall{{"a", "weather", `{"city":"Bern"}`, true}, {"b", "clock", `{}`, true}},
		},
		{
			name: "escaped quotes split across fragments",
			body: sse(
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"q","function":{"name":"weather","arguments":"{\"city\":\"say \\"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"hi\\\"\"}"}}]}}]}`),
			calls: []wantCall{{"q", "weather", `{"city":"say \"hi\""}`, true}},
		},
		{
			name: "first non-blank id, type and name win",
			body: sse(
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"","type":"","function":{"name":"","arguments":""}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"x1","type":"function","function":{"name":"weather","arguments":"{}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"x1","type":"other","function":{"name":"clock"}}]}}]}`),
			calls: []wantCall{{"x1", "weather", `{}`, true}},
		},
		{
			name:  "missing id is supplied",
			body:  sse(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"clock","arguments":""}}]}}]}`),
			calls: []wantCall{{"call_00000000000000000000000000000001", "clock", `{}`, true}},
		},
		{
			name:  "name with stray whitespace is canonicalized",
			body:  sse(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":" weather\n","arguments":"{\"city\":\"Rome\"}"}}]}}]}`),
			calls: []wantCall{{"c", "weather", `{"city":"Rome"}`, true}},
		},
		{
			name:  "malformed name and non-object arguments are carried as invalid",
			body:  sse(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"get weather!","arguments":"{}"}},{"index":1,"id":"c2","function":{"name":"weather","arguments":"[1]"}},{"index":2,"id":"c3","function":{"name":"weather","arguments":"{\"city\":"}}]}}]}`),
			calls: []wantCall{{"c1", "get weather!", `{}`, false}, {"c2", "weather", `[1]`, false}, {"c3", "weather", `"{\"city\":"`, false}},
		},
		{
			name: "usage-only chunk, Groq's x_groq usage and the first choice only",
			body: sse(
				`{"choices":[{"index":0,"delta":{"content":"Hel"}},{"index":1,"delta":{"content":"IGNORED"}}]}`,
				`{"choices":[{"index":0,"delta":{"content":"lo"}}],"x_groq":{"usage":{"prompt_tokens":3,"completion_tokens":1}}}`,
				`{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":1}}}`),
			text:  "Hello",
			usage: llm.Usage{InputTokens: 7, OutputTokens: 2, CachedTokens: 4, ReasoningTokens: 1},
		},
		{
			name: "pings, comments, unreadable lines and CRLF are skipped",
			body: ": OPENROUTER PROCESSING\r\n\r\nevent: ping\r\ndata: {}\r\n\r\ndata: not json\r\n\r\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}   \r\n\r\ndata: [DONE]\r\n\r\n",
			text: "ok",
		},
		{
			name:      "a stream that ends with neither finish_reason nor [DONE] is cut off",
			body:      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"done\"}}]}\n\n",
			errSubstr: "ended before the answer was complete",
		},
		{
			name: "a stream with a finish_reason and no [DONE] is complete",
			body: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"done\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
			text: "done",
		},
		{
			name:      "event: error inside a 200 stream",
			body:      "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"hm\"}}]}\n\nevent: error\ndata: {\"error\":{\"message\":\"Tool call validation failed\",\"type\":\"invalid_request_error\",\"code\":\"tool_use_failed\"}}\n\n",
			errSubstr: "tool_use_failed",
		},
		{
			name:      "error object in a chunk",
			body:      sse(`{"choices":[{"index":0,"delta":{"content":""}}],"error":{"code":400,"message":"Token limit reached"}}`),
			errSubstr: "Token limit reached",
		},
		{
			name:      "error chunk with type error",
			body:      sse(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
			errSubstr: "Overloaded",
		},
		{
			name:      "a stream with no readable line",
			body:      ": keep-alive\n\ndata: <html>\n\n",
			errSubstr: "no readable",
		},
		{
			name:      "pings and [DONE] only",
			body:      "event: ping\ndata: {}\n\ndata: {\"type\":\"ping\"}\n\ndata: [DONE]\n\n",
			errSubstr: "no readable",
		},
		{
			name:      "an empty answer",
			body:      "",
			errSubstr: "no readable",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			round, _, streamed, err := roundFrom(t, groq, weatherRequest(), "text/event-stream", tc.body)
			if tc.errSubstr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errSubstr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tc.errSubstr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if round.Text != tc.text || streamed != tc.text {
				t.Errorf("text = %q, streamed %q, want %q", round.Text, streamed, tc.text)
			}
			if tc.usage != (llm.Usage{}) && round.Usage != tc.usage {
				t.Errorf("usage = %+v, want %+v", round.Usage, tc.usage)
			}
			checkCalls(t, round.Calls, tc.calls)
		})
	}
}

func TestStreamErrorIsTyped(t *testing.T) {
	_, _, _, err := roundFrom(t, llm.KindOpenRouter.Provider("m", "", "k"), weatherRequest(), "text/event-stream",
		sse(`{"error":{"code":400,"message":"Token limit reached"}}`))
	var se *StreamError
	if !errors.As(err, &se) || se.Code != "400" {
		t.Fatalf("err = %#v, want a *StreamError with code 400", err)
	}
}

func TestMistralGetsItsIDFormat(t *testing.T) {
	a := NewWithOptions(llm.KindMistral.Provider("m", "", "k"), weatherRequest(), nil, Options{Logger: quietLogger})
	id := a.opts.NewCallID()
	if !regexp.MustCompile(`^[a-zA-Z0-9]{9}$`).MatchString(id) {
		t.Errorf("Mistral call id %q is not 9 alphanumerics", id)
	}
}

func TestGeneratedIDsLookRight(t *testing.T) {
	re := regexp.MustCompile(`^call_[0-9a-f]{32}$`)
	seen := map[string]bool{}
	for range 50 {
		id := randomCallID()
		if !re.MatchString(id) || seen[id] {
			t.Fatalf("generated id %q is malformed or repeated", id)
		}
		seen[id] = true
	}
}

// TestHistoryShapes checks what goes back: invalid names and arguments in a
// form the host accepts, null content, reasoning where the host needs it,
// Gemini's extra_content kept, one tool message per result.
func TestHistoryShapes(t *testing.T) {
	body := sse(
		`{"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"think ","reasoning":"ignored when reasoning_content exists"}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning_content":"more"}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"bad name","arguments":"{}"},"extra_content":{"google":{"thought_signature":"sig=="}}},{"index":1,"id":"c2","function":{"name":"weather","arguments":"oops"}}]}}]}`)
	tests := []struct {
		kind      llm.Kind
		field     string
		reasoning string
	}{
		{llm.KindDeepSeek, "reasoning_content", "think more"},
		{llm.KindOllama, "reasoning", "think more"},
		{llm.KindGroq, "", ""},
		{llm.KindHuggingFace, "", ""},
	}
	for _, tc := range tests {
		t.Run(string(tc.kind), func(t *testing.T) {
			round, a, _, err := roundFrom(t, tc.kind.Provider("m", "", "k"), weatherRequest(), "text/event-stream", body)
			if err != nil {
				t.Fatal(err)
			}
			a.RecordAssistantTurn()
			a.RecordAssistantTurn() // a second call must not record twice
			for _, c := range round.Calls {
				a.RecordToolResult(c.ID, "The tool call was invalid.", true)
			}
			b, err := a.BuildBody(llm.RoundOptions{IncludeTools: true})
			if err != nil {
				t.Fatal(err)
			}
			var req struct {
				Messages []map[string]json.RawMessage `json:"messages"`
			}
			if err := json.Unmarshal(b, &req); err != nil {
				t.Fatal(err)
			}
			if len(req.Messages) != 4 {
				t.Fatalf("%d messages, want user, assistant and two tool results: %s", len(req.Messages), b)
			}
			asst := req.Messages[1]
			if string(asst["content"]) != "null" {
				t.Errorf("assistant content = %s, want null", asst["content"])
			}
			for _, f := range []string{"reasoning_content", "reasoning", "reasoning_details"} {
				raw, ok := asst[f]
				if f == tc.field {
					if rawString(raw) != tc.reasoning {
						t.Errorf("%s = %s, want %q", f, raw, tc.reasoning)
					}
				} else if ok {
					t.Errorf("%s sent to %s, which does not want it", f, tc.kind)
				}
			}
			var calls []struct {
				ID           string          `json:"id"`
				Type         string          `json:"type"`
				ExtraContent json.RawMessage `json:"extra_content"`
				Function     struct{ Name, Arguments string }
			}
			if err := json.Unmarshal(asst["tool_calls"], &calls); err != nil {
				t.Fatal(err)
			}
			if calls[0].Function.Name != InvalidToolName || calls[0].Function.Arguments != "{}" || string(calls[0].ExtraContent) != `{"google":{"thought_signature":"sig=="}}` {
				t.Errorf("invalid-name call goes back as %+v", calls[0])
			}
			if calls[1].Function.Name != "weather" || calls[1].Function.Arguments != "{}" || calls[1].Type != "function" {
				t.Errorf("invalid-arguments call goes back as %+v", calls[1])
			}
			for i, id := range []string{"c1", "c2"} {
				m := req.Messages[2+i]
				if rawString(m["role"]) != "tool" || rawString(m["tool_call_id"]) != id || len(m) != 3 {
					t.Errorf("result %d = %v", i, m)
				}
			}
			texts := a.RecordedTexts()
			if len(texts) == 0 || !strings.Contains(strings.Join(texts, "|"), "The tool call was invalid.") {
				t.Errorf("recorded texts miss the results: %q", texts)
			}
		})
	}
}

func TestOpenRouterReasoningDetailsMerge(t *testing.T) {
	body := sse(
		`{"choices":[{"index":0,"delta":{"reasoning":"a","reasoning_details":[{"type":"reasoning.text","text":"a","format":"anthropic-claude-v1","index":0}]}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning":"b","reasoning_details":[{"type":"reasoning.text","text":"b","format":"anthropic-claude-v1","index":0}]}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning_details":[{"type":"reasoning.text","signature":"SIG","format":"anthropic-claude-v1","index":0},{"type":"reasoning.encrypted","data":"ENC","index":1}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"t1","type":"function","function":{"name":"clock","arguments":"{}"}}]}}]}`)
	round, a, _, err := roundFrom(t, llm.KindOpenRouter.Provider("m", "", "k"), weatherRequest(), "text/event-stream", body)
	if err != nil {
		t.Fatal(err)
	}
	a.RecordAssistantTurn()
	a.RecordToolResult(round.Calls[0].ID, "12:00", false)
	b, _ := a.BuildBody(llm.RoundOptions{IncludeTools: true})
	var req struct {
		Messages []struct {
			Reasoning        string `json:"reasoning"`
			ReasoningDetails []any  `json:"reasoning_details"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(b, &req); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(req.Messages[1].ReasoningDetails)
	want := `[{"format":"anthropic-claude-v1","index":0,"signature":"SIG","text":"ab","type":"reasoning.text"},{"data":"ENC","index":1,"type":"reasoning.encrypted"}]`
	if string(got) != want || req.Messages[1].Reasoning != "ab" {
		t.Errorf("reasoning_details = %s (reasoning %q), want %s", got, req.Messages[1].Reasoning, want)
	}
}

func TestNonStreamingAnswer(t *testing.T) {
	body := `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Let me check.","reasoning":"r","tool_calls":[{"id":"a","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Rome\"}"}},{"type":"function","function":{"name":"clock","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":6}}`
	round, _, streamed, err := roundFrom(t, llm.KindOllama.Provider("m", "", ""), weatherRequest(), "application/json; charset=utf-8", body)
	if err != nil {
		t.Fatal(err)
	}
	if round.Text != "Let me check." || streamed != "Let me check." || round.Usage.OutputTokens != 6 {
		t.Errorf("round = %+v, streamed %q", round, streamed)
	}
	checkCalls(t, round.Calls, []wantCall{{"a", "weather", `{"city":"Rome"}`, true}, {"call_00000000000000000000000000000001", "clock", `{}`, true}})

	_, _, _, err = roundFrom(t, llm.KindOllama.Provider("m", "", ""), weatherRequest(), "application/json", `{"error":{"message":"model not found"}}`)
	if err == nil || !strings.Contains(err.Error(), "model not found") {
		t.Errorf("JSON error answer: err = %v", err)
	}
}

func TestSources(t *testing.T) {
	body := sse(
		`{"choices":[{"index":0,"delta":{"content":"See","annotations":[{"type":"url_citation","url_citation":{"url":"https://example.org/a","title":"A"}}]}}]}`,
		`{"citations":["https://example.org/a","https://example.org/b"],"search_results":[{"title":"B","url":"https://example.org/b"}],"choices":[{"index":0,"delta":{"content":"."}}]}`)
	round, _, _, err := roundFrom(t, llm.KindPerplexity.Provider("sonar", "", "k"), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "q"}}}, "text/event-stream", body)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Citation{{Title: "A", URL: "https://example.org/a"}, {Title: "B", URL: "https://example.org/b"}}
	if len(round.Sources) != 2 || round.Sources[0] != want[0] || round.Sources[1] != want[1] {
		t.Errorf("sources = %+v, want %+v", round.Sources, want)
	}
}

// TestTextReachesCallerAsItArrives holds the stream open after the first
// delta until the caller has seen it.
func TestTextReachesCallerAsItArrives(t *testing.T) {
	seen := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"first\"}}]}\n\n"))
		w.(http.Flusher).Flush()
		select {
		case <-seen:
		case <-time.After(10 * time.Second):
			return
		}
		_, _ = w.Write([]byte(sse(`{"choices":[{"index":0,"delta":{"content":" second"}}]}`)))
	}))
	defer ts.Close()
	p := llm.KindGroq.Provider("m", ts.URL, "k")
	a := New(p, weatherRequest(), &llm.Transport{Client: ts.Client(), MaxAttempts: 1})
	var got []string
	start := time.Now()
	round, err := a.Round(context.Background(), llm.RoundOptions{IncludeTools: true}, func(s string) {
		got = append(got, s)
		if s == "first" {
			close(seen)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if round.Text != "first second" || len(got) != 2 || time.Since(start) > 9*time.Second {
		t.Errorf("text %q in %d deltas after %s; the first delta was not handed on before the stream went on", round.Text, len(got), time.Since(start))
	}
}

func TestIdleStreamTimesOut(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"partial\"}}]}\n\n"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer ts.Close()
	p := llm.KindGroq.Provider("m", ts.URL, "k")
	a := NewWithOptions(p, weatherRequest(), &llm.Transport{Client: ts.Client(), MaxAttempts: 1}, Options{IdleTimeout: 150 * time.Millisecond})
	_, err := a.Round(context.Background(), llm.RoundOptions{IncludeTools: true}, nil)
	if err == nil || !strings.Contains(err.Error(), "stalled") {
		t.Fatalf("err = %v, want a stalled-stream error", err)
	}
}

func TestIdleWaitingForHeadersTimesOut(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Reading the body lets the server notice the client leaving.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer ts.Close()
	a := NewWithOptions(llm.KindGroq.Provider("m", ts.URL, "k"), weatherRequest(), &llm.Transport{Client: ts.Client(), MaxAttempts: 1}, Options{IdleTimeout: 150 * time.Millisecond})
	_, err := a.Round(context.Background(), llm.RoundOptions{}, nil)
	if err == nil || !strings.Contains(err.Error(), "did not answer") {
		t.Fatalf("err = %v, want a no-answer error", err)
	}
}

func TestStreamThatDiesMidwayIsAnError(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"par\"}}]}\n\ndata: {\"choices\":[{\"ind"))
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.(*net.TCPConn).SetLinger(0)
			_ = conn.Close()
		}
	}))
	defer ts.Close()
	a := New(llm.KindGroq.Provider("m", ts.URL, "k"), weatherRequest(), &llm.Transport{Client: ts.Client(), MaxAttempts: 1})
	round, err := a.Round(context.Background(), llm.RoundOptions{IncludeTools: true}, nil)
	if err == nil {
		t.Fatalf("a stream cut in the middle gave a round %+v and no error", round)
	}
}

func TestCancellationMidStream(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer ts.Close()
	a := New(llm.KindGroq.Provider("m", ts.URL, "k"), weatherRequest(), &llm.Transport{Client: ts.Client(), MaxAttempts: 1})
	_, err := a.Round(ctx, llm.RoundOptions{}, func(string) { cancel() })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestHTTPErrorIsWrapped(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":{"message":"parallel_tool_calls is not supported"}}`))
	}))
	defer ts.Close()
	a := New(llm.KindGroq.Provider("m", ts.URL, "k"), weatherRequest(), &llm.Transport{Client: ts.Client(), MaxAttempts: 1})
	_, err := a.Round(context.Background(), llm.RoundOptions{IncludeTools: true}, nil)
	var he *llm.HTTPError
	if !errors.As(err, &he) || he.StatusCode != 400 || !strings.Contains(err.Error(), "parallel_tool_calls") {
		t.Fatalf("err = %v, want a wrapped *llm.HTTPError 400", err)
	}
}

func TestJSONAnswerWithWrongContentType(t *testing.T) {
	body := "\n   \n" + `{"choices":[{"index":0,"message":{"content":"plain"}}]}`
	round, _, _, err := roundFrom(t, llm.KindLMStudio.Provider("m", "", ""), weatherRequest(), "text/plain", body)
	if err != nil || round.Text != "plain" {
		t.Fatalf("round = %+v, err = %v", round, err)
	}
}

func TestDecode(t *testing.T) {
	var text strings.Builder
	round, err := Decode(strings.NewReader(sse(twoCallsChunk, finishChunk)), func(s string) { text.WriteString(s) })
	if err != nil {
		t.Fatal(err)
	}
	if round.Text != "Checking both." || text.String() != "Checking both." {
		t.Errorf("text = %q, streamed %q", round.Text, text.String())
	}
	checkCalls(t, round.Calls, []wantCall{{"call_w1", "weather", `{"city":"Florence"}`, true}, {"call_c2", "clock", `{}`, true}})
	if _, err := Decode(strings.NewReader(""), nil); !errors.Is(err, ErrEmptyStream) {
		t.Errorf("empty input: err = %v, want ErrEmptyStream", err)
	}
	round, err = Decode(strings.NewReader(`{"choices":[{"message":{"content":"json"}}]}`), nil)
	if err != nil || round.Text != "json" {
		t.Errorf("JSON answer: %+v, %v", round, err)
	}
}
