package loop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/llm"
	"github.com/stewardhq/steward/llm/anthropic"
	"github.com/stewardhq/steward/llm/chatcompletions"
	"github.com/stewardhq/steward/llm/responses"
	"github.com/stewardhq/steward/loop"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
)

// reply is one scripted HTTP answer of the loopback server.
type reply struct {
	status int
	header map[string]string
	// events are SSE data payloads, each written and flushed on its own.
	events []string
	// body replaces events for a non-stream answer.
	body string
	// die aborts the connection after the events, mid-stream.
	die bool
	// hold keeps the stream open after the events until the client leaves.
	hold bool
}

// sseServer is a loopback server that answers Chat Completions requests
// from a script and keeps every request body.
type sseServer struct {
	t   testing.TB
	srv *httptest.Server
	// path is the endpoint the adapter must post to.
	path    string
	mu      sync.Mutex
	replies []reply
	next    int
	bodies  [][]byte
}

func newSSEServer(t testing.TB, replies ...reply) *sseServer {
	s := &sseServer{t: t, replies: replies, path: "/v1/chat/completions"}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *sseServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != s.path {
		s.t.Errorf("request to %s", r.URL.Path)
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.t.Errorf("reading the request: %v", err)
	}
	s.mu.Lock()
	if s.next >= len(s.replies) {
		s.mu.Unlock()
		s.t.Errorf("request %d, the script has %d replies", s.next+1, len(s.replies))
		http.Error(w, `{"error":{"message":"script exhausted"}}`, http.StatusTeapot)
		return
	}
	rp := s.replies[s.next]
	s.next++
	s.bodies = append(s.bodies, body)
	s.mu.Unlock()

	for k, v := range rp.header {
		w.Header().Set(k, v)
	}
	status := rp.status
	if status == 0 {
		status = http.StatusOK
	}
	if rp.body != "" || status != http.StatusOK {
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(rp.body))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(status)
	fl := w.(http.Flusher)
	for _, e := range rp.events {
		_, _ = fmt.Fprintf(w, "data: %s\n\n", e)
		fl.Flush()
	}
	if rp.die {
		// Closes the connection in the middle of the chunked body.
		panic(http.ErrAbortHandler)
	}
	if rp.hold {
		<-r.Context().Done()
	}
}

func (s *sseServer) requests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.bodies)
}

// The Chat Completions stream payloads the scripts are made of.
func ccText(s string) string {
	b, _ := json.Marshal(s)
	return fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":%s}}]}`, b)
}

func ccCall(index int, id, name, args string) string {
	a, _ := json.Marshal(args)
	return fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":%d,"id":%q,"type":"function","function":{"name":%q,"arguments":%s}}]}}]}`, index, id, name, a)
}

func ccFinish(reason string) string {
	return fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":%q}]}`, reason)
}

func ccUsage(in, out int) string {
	return fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"m","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`, in, out, in+out)
}

const ccDone = "[DONE]"

func answerReply(text string) reply {
	return reply{events: []string{ccText(text), ccFinish("stop"), ccUsage(20, 3), ccDone}}
}

func callsReply(calls ...[3]string) reply {
	var ev []string
	for i, c := range calls {
		ev = append(ev, ccCall(i, c[0], c[1], c[2]))
	}
	return reply{events: append(ev, ccFinish("tool_calls"), ccUsage(10, 5), ccDone)}
}

// ccAdapter builds a Chat Completions adapter against the loopback server
// for a provider of the given kind, offering the tools' functions.
func ccAdapter(s *sseServer, kind llm.Kind, tools []tool.Offered, tr *llm.Transport) *chatcompletions.Adapter {
	p := kind.Provider("test-model", s.srv.URL+"/v1/", "test-key")
	p.Caps.ToolCalling = true
	req := llm.Request{Model: "test-model", System: "You are helpful.", Messages: []llm.Message{{Role: llm.RoleUser, Text: "Hello"}}, Tools: loop.ToolSpecs(tools)}
	if tr == nil {
		tr = &llm.Transport{Client: s.srv.Client(), Sleep: func(context.Context, time.Duration) error { return nil }}
	}
	return chatcompletions.NewWithOptions(p, req, tr, chatcompletions.Options{IdleTimeout: 10 * time.Second})
}

// ccBody is the part of a Chat Completions request the tests look at.
type ccBody struct {
	Tools             []json.RawMessage `json:"tools"`
	ParallelToolCalls *bool             `json:"parallel_tool_calls"`
	Messages          []struct {
		Role       string `json:"role"`
		Content    any    `json:"content"`
		ToolCallID string `json:"tool_call_id"`
		ToolCalls  []struct {
			ID string `json:"id"`
		} `json:"tool_calls"`
	} `json:"messages"`
}

func parseBody(t *testing.T, b []byte) ccBody {
	t.Helper()
	var v ccBody
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("request body: %v\n%s", err, b)
	}
	return v
}

// checkHistoryPaired fails unless every tool call in the body's assistant
// messages is followed by its tool result before the next assistant turn.
func checkHistoryPaired(t *testing.T, b ccBody) {
	t.Helper()
	var open []string
	for _, m := range b.Messages {
		switch m.Role {
		case "assistant":
			if len(open) > 0 {
				t.Fatalf("calls %v have no result before the next assistant turn", open)
			}
			for _, c := range m.ToolCalls {
				open = append(open, c.ID)
			}
		case "tool":
			if len(open) == 0 || open[0] != m.ToolCallID {
				t.Fatalf("result for %q, expected one of %v in order", m.ToolCallID, open)
			}
			open = open[1:]
		}
	}
	if len(open) > 0 {
		t.Fatalf("calls %v have no result", open)
	}
}

func TestLoopbackTwoCallsWithoutParallelToolCalls(t *testing.T) {
	var ran []string
	mk := func(name string) *fakeTool {
		return newTool(name, policy.NoOutbound, func(_ context.Context, args json.RawMessage, ec tool.ExecContext) (tool.Result, error) {
			ran = append(ran, ec.CallID)
			return tool.Result{Text: name + " says " + string(args)}, nil
		})
	}
	tools := offer(mk("weather"), mk("time"))
	s := newSSEServer(t,
		callsReply([3]string{"call_a", "weather", `{"city":"Bern"}`}, [3]string{"call_b", "time", `{"zone":"CET"}`}),
		answerReply("Sunny at noon."),
	)
	// Hugging Face rejects parallel_tool_calls, so its models may ask for
	// several calls at once.
	a := ccAdapter(s, llm.KindHuggingFace, tools, nil)
	res, _, err := runLoop(t, context.Background(), a, loop.RunContext{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Sunny at noon." || res.Stop != loop.StopAnswered {
		t.Errorf("text %q stop %q", res.Text, res.Stop)
	}
	if !slices.Equal(ran, []string{"call_a", "call_b"}) {
		t.Errorf("ran %v", ran)
	}
	reqs := s.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	first, second := parseBody(t, reqs[0]), parseBody(t, reqs[1])
	if first.ParallelToolCalls != nil || len(first.Tools) != 2 {
		t.Errorf("first request: parallel_tool_calls %v, %d tools", first.ParallelToolCalls, len(first.Tools))
	}
	checkHistoryPaired(t, second)
	var results []string
	for _, m := range second.Messages {
		if m.Role == "tool" {
			results = append(results, m.ToolCallID+"="+fmt.Sprint(m.Content))
		}
	}
	want := []string{`call_a=weather says {"city":"Bern"}`, `call_b=time says {"zone":"CET"}`}
	if !slices.Equal(results, want) {
		t.Errorf("results in the follow-up %v, want %v", results, want)
	}
	if res.Usage != (llm.Usage{InputTokens: 30, OutputTokens: 8}) {
		t.Errorf("usage %+v", res.Usage)
	}
}

func TestLoopbackRetryAfter429(t *testing.T) {
	s := newSSEServer(t,
		reply{status: http.StatusTooManyRequests, header: map[string]string{"Retry-After": "7"}, body: `{"error":{"message":"slow down"}}`},
		answerReply("Hello after the wait."),
	)
	var waits []time.Duration
	tr := &llm.Transport{Client: s.srv.Client(), Sleep: func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}}
	a := ccAdapter(s, llm.KindOpenAI, nil, tr)
	res, rec, err := runLoop(t, context.Background(), a, loop.RunContext{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Hello after the wait." {
		t.Errorf("text %q", res.Text)
	}
	if !slices.Equal(waits, []time.Duration{7 * time.Second}) {
		t.Errorf("waits %v, want the 7s Retry-After", waits)
	}
	if n := strings.Count(rec.text(), "Hello"); n != 1 {
		t.Errorf("the user saw the answer %d times", n)
	}
	if len(s.requests()) != 2 {
		t.Errorf("%d requests", len(s.requests()))
	}
}

func TestLoopbackStreamDiesMidway(t *testing.T) {
	echo := textTool("echo", "ok")
	tools := offer(echo)
	tests := []struct {
		name    string
		replies []reply
	}{
		{"first round", []reply{{events: []string{ccText("Half an ans")}, die: true}}},
		{"after a call", []reply{callsReply([3]string{"c1", "echo", `{}`}), {events: []string{ccText("Half")}, die: true}}},
		// Nothing was shown, so the round is asked again, up to the
		// transport's four tries, and each try dies the same way.
		{"mid tool call", []reply{{events: []string{ccCall(0, "c1", "echo", `{"q":`)}, die: true}, {events: []string{ccCall(0, "c1", "echo", `{"q":`)}, die: true},
			{events: []string{ccCall(0, "c1", "echo", `{"q":`)}, die: true}, {events: []string{ccCall(0, "c1", "echo", `{"q":`)}, die: true}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSSEServer(t, tc.replies...)
			a := ccAdapter(s, llm.KindOpenAI, tools, nil)
			res, rec, err := runLoop(t, context.Background(), a, loop.RunContext{Tools: tools})
			if err == nil {
				t.Fatalf("no error; the answer was %q", res.Text)
			}
			if res.Stop != loop.StopError || !slices.Contains(rec.types(), loop.EventError) {
				t.Errorf("stop %q events %v", res.Stop, rec.types())
			}
			if echo.calls() > 1 {
				t.Errorf("the half-streamed call ran")
			}
			echo.seen = nil
		})
	}
}

func TestLoopbackCancelMidStream(t *testing.T) {
	echo := textTool("echo", "ok")
	tools := offer(echo)
	s := newSSEServer(t,
		callsReply([3]string{"c1", "echo", `{}`}),
		reply{events: []string{ccText("Starting to")}, hold: true},
	)
	a := ccAdapter(s, llm.KindOpenAI, tools, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{}
	sink := loop.SinkFunc(func(e loop.Event) {
		rec.Emit(e)
		if e.Type == loop.EventText && strings.Contains(e.Text, "Starting") {
			cancel()
		}
	})
	res, err := loop.New(loop.Options{}).Run(ctx, a, loop.RunContext{Tools: tools, Chat: &fakeChat{}}, sink)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want cancellation", err)
	}
	if res.Stop != loop.StopCancelled || rec.last().Type != loop.EventDone {
		t.Errorf("stop %q, last event %q", res.Stop, rec.last().Type)
	}
	body, err := a.BuildBody(llm.RoundOptions{IncludeTools: true})
	if err != nil {
		t.Fatal(err)
	}
	checkHistoryPaired(t, parseBody(t, body))
}

func TestLoopbackCancelMidTool(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	waiter := newTool("wait", policy.NoOutbound, func(ctx context.Context, _ json.RawMessage, _ tool.ExecContext) (tool.Result, error) {
		cancel()
		<-ctx.Done()
		return tool.Result{}, ctx.Err()
	})
	tools := offer(waiter)
	s := newSSEServer(t, callsReply([3]string{"c1", "wait", `{}`}, [3]string{"c2", "wait", `{}`}))
	a := ccAdapter(s, llm.KindHuggingFace, tools, nil)
	_, _, err := runLoop(t, ctx, a, loop.RunContext{Tools: tools})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v", err)
	}
	body, err := a.BuildBody(llm.RoundOptions{IncludeTools: true})
	if err != nil {
		t.Fatal(err)
	}
	b := parseBody(t, body)
	checkHistoryPaired(t, b)
	var n int
	for _, m := range b.Messages {
		if m.Role == "tool" && m.Content == loop.CancelledCallText {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d cancellation results, want 2", n)
	}
}

func TestLoopbackCallsLimit(t *testing.T) {
	echo := textTool("echo", "ok")
	tools := offer(echo)
	var replies []reply
	for i := range 16 {
		replies = append(replies, callsReply([3]string{fmt.Sprint("c", i), "echo", `{}`}))
	}
	replies[15] = answerReply("Done.")
	s := newSSEServer(t, replies...)
	a := ccAdapter(s, llm.KindOpenAI, tools, nil)
	res, _, err := runLoop(t, context.Background(), a, loop.RunContext{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if echo.calls() != loop.MaxToolCalls || res.Stop != loop.StopLimit {
		t.Errorf("calls %d stop %q", echo.calls(), res.Stop)
	}
	reqs := s.requests()
	last := parseBody(t, reqs[len(reqs)-1])
	if len(last.Tools) != 0 || last.ParallelToolCalls != nil {
		t.Errorf("the final request offers tools: %d, parallel %v", len(last.Tools), last.ParallelToolCalls)
	}
	if !strings.Contains(string(reqs[len(reqs)-1]), "limit of 15 tool calls") {
		t.Errorf("the final request lacks the limit instruction")
	}
	checkHistoryPaired(t, last)
	first := parseBody(t, reqs[0])
	if first.ParallelToolCalls == nil || *first.ParallelToolCalls {
		t.Errorf("OpenAI requests with tools must send parallel_tool_calls false")
	}
}

// BenchmarkLoop10Rounds measures the loop's own CPU per conversation of ten
// rounds (nine with one tool call each, then the answer) against a loopback
// Chat Completions server, the adapter's streaming and HTTP included.
func BenchmarkLoop10Rounds(b *testing.B) {
	echo := textTool("echo", `{"temperature":21,"unit":"C"}`)
	tools := offer(echo)
	var payloads [][]byte
	for i := range 9 {
		var sb strings.Builder
		for _, e := range []string{ccText("Checking. "), ccCall(0, fmt.Sprint("call_", i), "echo", `{"city":"Bern"}`), ccFinish("tool_calls"), ccUsage(100, 10), ccDone} {
			fmt.Fprintf(&sb, "data: %s\n\n", e)
		}
		payloads = append(payloads, []byte(sb.String()))
	}
	var sb strings.Builder
	for range 20 {
		fmt.Fprintf(&sb, "data: %s\n\n", ccText("word "))
	}
	for _, e := range []string{ccFinish("stop"), ccUsage(100, 20), ccDone} {
		fmt.Fprintf(&sb, "data: %s\n\n", e)
	}
	payloads = append(payloads, []byte(sb.String()))

	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		p := payloads[n%len(payloads)]
		n++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(p)
	}))
	defer srv.Close()
	s := &sseServer{t: b, srv: srv}
	l := loop.New(loop.Options{})
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		mu.Lock()
		n = 0
		mu.Unlock()
		a := ccAdapter(s, llm.KindOpenAI, tools, &llm.Transport{Client: srv.Client()})
		res, err := l.Run(ctx, a, loop.RunContext{Tools: tools, Chat: &fakeChat{}}, nil)
		if err != nil || res.Rounds != 10 {
			b.Fatalf("run: %v after %d rounds", err, res.Rounds)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10, "ns/round")
}

func TestLoopbackCallOutcomes(t *testing.T) {
	locked := newTool("locked", policy.NoOutbound, func(context.Context, json.RawMessage, tool.ExecContext) (tool.Result, error) {
		return tool.Result{}, tool.Blocked("This folder is excluded by the organization.")
	})
	flaky := newTool("flaky", policy.NoOutbound, func(context.Context, json.RawMessage, tool.ExecContext) (tool.Result, error) {
		return tool.Result{}, errors.New("the index is locked")
	})
	echo := textTool("echo", "echoed")
	tools := offer(locked, flaky, echo)
	tests := []struct {
		name string
		call [3]string
		// want is the content of the role "tool" message in the follow-up.
		want   string
		status loop.Status
	}{
		{"blocked call", [3]string{"c1", "locked", `{}`}, "This folder is excluded by the organization.", loop.StatusBlocked},
		{"failing tool", [3]string{"c1", "flaky", `{}`}, "Tool execution failed: the index is locked", loop.StatusError},
		{"arguments not an object", [3]string{"c1", "echo", `[1,2]`}, loop.InvalidCallText, loop.StatusError},
		{"malformed function name", [3]string{"c1", "echo me!", `{}`}, loop.InvalidCallText, loop.StatusError},
		{"unknown tool", [3]string{"c1", "nosuch", `{}`}, "Tool 'nosuch' is not available.", loop.StatusBlocked},
		// Chat Completions lets Steward supply a missing ID; the call runs.
		{"call without an ID", [3]string{"", "echo", `{}`}, "echoed", loop.StatusSuccess},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSSEServer(t, callsReply(tc.call), answerReply("Understood."))
			a := ccAdapter(s, llm.KindOpenAI, tools, nil)
			res, _, err := runLoop(t, context.Background(), a, loop.RunContext{Tools: tools})
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != "Understood." || len(res.Traces) != 1 || res.Traces[0].Status != tc.status {
				t.Fatalf("text %q traces %+v", res.Text, res.Traces)
			}
			reqs := s.requests()
			follow := parseBody(t, reqs[len(reqs)-1])
			checkHistoryPaired(t, follow)
			var got []string
			for _, m := range follow.Messages {
				if m.Role == "tool" {
					got = append(got, fmt.Sprint(m.Content))
				}
			}
			if !slices.Equal(got, []string{tc.want}) {
				t.Errorf("tool results %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLoopbackCharsLimit(t *testing.T) {
	big := newTool("big", policy.NoOutbound, func(context.Context, json.RawMessage, tool.ExecContext) (tool.Result, error) {
		return tool.Result{Text: strings.Repeat("z", 120_000)}, nil
	})
	tools := offer(big)
	s := newSSEServer(t,
		callsReply([3]string{"c1", "big", `{}`}, [3]string{"c2", "big", `{}`}),
		callsReply([3]string{"c3", "big", `{}`}, [3]string{"c4", "big", `{}`}),
		answerReply("Summary."),
	)
	a := ccAdapter(s, llm.KindHuggingFace, tools, nil)
	res, _, err := runLoop(t, context.Background(), a, loop.RunContext{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if big.calls() != 3 || res.Calls != 3 || res.Stop != loop.StopLimit || res.Text != "Summary." {
		t.Errorf("ran %d, counted %d, stop %q, text %q", big.calls(), res.Calls, res.Stop, res.Text)
	}
	reqs := s.requests()
	last := parseBody(t, reqs[2])
	checkHistoryPaired(t, last)
	if len(last.Tools) != 0 {
		t.Errorf("the final request offers tools")
	}
	if !strings.Contains(string(reqs[2]), "limit of 300000 characters") {
		t.Errorf("the final request lacks the characters instruction")
	}
	var limited int
	for _, m := range last.Messages {
		if m.Role == "tool" && m.Content == loop.CharsLimitInstruction {
			limited++
		}
	}
	if limited != 1 {
		t.Errorf("%d calls answered with the instruction, want 1 (c4)", limited)
	}
}

func TestLoopbackResponsesCallWithoutID(t *testing.T) {
	echo := textTool("echo", "ok")
	tools := offer(echo)
	completed := `{"type":"response.completed","response":{"id":"resp_1","status":"completed","output":[` +
		`{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Let me check.","annotations":[]}]},` +
		`{"type":"function_call","id":"fc_1","name":"echo","arguments":"{}","status":"completed"}` +
		`],"usage":{"input_tokens":12,"output_tokens":4}}}`
	s := newSSEServer(t, reply{events: []string{
		`{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"Let me check."}`,
		completed,
	}})
	s.path = "/v1/responses"
	p := llm.KindOpenAI.Provider("gpt-4o", s.srv.URL+"/v1/", "test-key")
	p, err := llm.WithAPI(p, llm.Responses)
	if err != nil {
		t.Fatal(err)
	}
	req := llm.Request{Model: "gpt-4o", Messages: []llm.Message{{Role: llm.RoleUser, Text: "Hi"}},
		Tools: []llm.ToolSpec{{Name: "echo", Parameters: json.RawMessage(`{"type":"object"}`)}}}
	a := responses.New(p, req, &llm.Transport{Client: s.srv.Client()})
	res, _, err := runLoop(t, context.Background(), a, loop.RunContext{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Let me check."+loop.InvalidCallText || res.Stop != loop.StopInvalidCall {
		t.Errorf("text %q stop %q", res.Text, res.Stop)
	}
	if echo.calls() != 0 || len(s.requests()) != 1 {
		t.Errorf("the call ran or another request was sent")
	}
	if res.Usage.InputTokens != 12 {
		t.Errorf("usage %+v", res.Usage)
	}
}

func anthropicEvents(blocks ...string) []string {
	ev := []string{`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"usage":{"input_tokens":25,"output_tokens":1}}}`}
	return append(ev, blocks...)
}

func TestLoopbackAnthropicResultsInOneMessage(t *testing.T) {
	locked := newTool("locked", policy.NoOutbound, func(context.Context, json.RawMessage, tool.ExecContext) (tool.Result, error) {
		return tool.Result{}, tool.Blocked("Blocked by policy.")
	})
	echo := textTool("echo", "echoed")
	tools := offer(locked, echo)
	round1 := anthropicEvents(
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Checking."}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"locked","input":{}}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_2","name":"echo","input":{}}}`,
		`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"q\": \"x\"}"}}`,
		`{"type":"content_block_stop","index":2}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":30}}`,
		`{"type":"message_stop"}`,
	)
	round2 := anthropicEvents(
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Done."}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}`,
		`{"type":"message_stop"}`,
	)
	s := newSSEServer(t, reply{events: round1}, reply{events: round2})
	s.path = "/v1/messages"
	p := llm.KindAnthropic.Provider("claude-test", s.srv.URL+"/v1/", "test-key")
	req := llm.Request{Model: "claude-test", MaxTokens: 1024, Messages: []llm.Message{{Role: llm.RoleUser, Text: "Hi"}},
		Tools: []llm.ToolSpec{{Name: "locked", Parameters: json.RawMessage(`{"type":"object"}`)}, {Name: "echo", Parameters: json.RawMessage(`{"type":"object"}`)}}}
	a := anthropic.New(p, req, &llm.Transport{Client: s.srv.Client()})
	res, _, err := runLoop(t, context.Background(), a, loop.RunContext{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Checking.\n\nDone." {
		t.Errorf("text %q", res.Text)
	}
	reqs := s.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content json.RawMessage
		} `json:"messages"`
	}
	if err := json.Unmarshal(reqs[1], &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Messages) != 3 || body.Messages[2].Role != "user" {
		t.Fatalf("follow-up messages %s", reqs[1])
	}
	var results []struct {
		Type      string `json:"type"`
		ToolUseID string `json:"tool_use_id"`
		IsError   bool   `json:"is_error"`
		Content   any    `json:"content"`
	}
	if err := json.Unmarshal(body.Messages[2].Content, &results); err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 || results[0].ToolUseID != "toolu_1" || !results[0].IsError || results[1].ToolUseID != "toolu_2" || results[1].IsError {
		t.Errorf("tool results %+v", results)
	}
	if !strings.Contains(fmt.Sprint(results[0].Content), "Blocked by policy.") {
		t.Errorf("blocked content %v", results[0].Content)
	}
}

func TestLoopbackIdleStreamIsAnError(t *testing.T) {
	s := newSSEServer(t, reply{events: []string{ccText("Half an")}, hold: true})
	p := llm.KindOpenAI.Provider("test-model", s.srv.URL+"/v1/", "test-key")
	req := llm.Request{Model: "test-model", Messages: []llm.Message{{Role: llm.RoleUser, Text: "Hello"}}}
	a := chatcompletions.NewWithOptions(p, req, &llm.Transport{Client: s.srv.Client()}, chatcompletions.Options{IdleTimeout: 150 * time.Millisecond})
	res, _, err := runLoop(t, context.Background(), a, loop.RunContext{})
	if err == nil || errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want the stalled stream reported", err)
	}
	if res.Stop != loop.StopError || res.Text != "Half an" {
		t.Errorf("stop %q text %q", res.Stop, res.Text)
	}
}

func TestLoopbackResponsesTwoCalls(t *testing.T) {
	var ran []string
	mk := func(name string) *fakeTool {
		return newTool(name, policy.NoOutbound, func(_ context.Context, _ json.RawMessage, ec tool.ExecContext) (tool.Result, error) {
			ran = append(ran, ec.CallID)
			return tool.Result{Text: name + " done"}, nil
		})
	}
	tools := offer(mk("first"), mk("second"))
	completed1 := `{"type":"response.completed","response":{"id":"resp_1","status":"completed","output":[` +
		`{"type":"function_call","id":"fc_1","call_id":"call_1","name":"second","arguments":"{}","status":"completed"},` +
		`{"type":"function_call","id":"fc_2","call_id":"call_2","name":"first","arguments":"{\"a\":1}","status":"completed"}` +
		`],"usage":{"input_tokens":10,"output_tokens":4}}}`
	completed2 := `{"type":"response.completed","response":{"id":"resp_2","status":"completed","output":[` +
		`{"type":"message","id":"msg_2","role":"assistant","status":"completed","content":[{"type":"output_text","text":"All done.","annotations":[]}]}` +
		`],"usage":{"input_tokens":30,"output_tokens":3}}}`
	s := newSSEServer(t,
		reply{events: []string{completed1}},
		reply{events: []string{`{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"All done."}`, completed2}},
	)
	s.path = "/v1/responses"
	p, err := llm.WithAPI(llm.KindOpenAI.Provider("gpt-4o", s.srv.URL+"/v1/", "test-key"), llm.Responses)
	if err != nil {
		t.Fatal(err)
	}
	req := llm.Request{Model: "gpt-4o", Messages: []llm.Message{{Role: llm.RoleUser, Text: "Hi"}}, Tools: loop.ToolSpecs(tools)}
	a := responses.New(p, req, &llm.Transport{Client: s.srv.Client()})
	res, _, err := runLoop(t, context.Background(), a, loop.RunContext{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "All done." || !slices.Equal(ran, []string{"call_1", "call_2"}) {
		t.Errorf("text %q, ran %v", res.Text, ran)
	}
	var body struct {
		Input []struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
			Output string `json:"output"`
		} `json:"input"`
	}
	if err := json.Unmarshal(s.requests()[1], &body); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range body.Input {
		if it.Type == "function_call" || it.Type == "function_call_output" {
			got = append(got, it.Type+":"+it.CallID+":"+it.Output)
		}
	}
	want := []string{"function_call:call_1:", "function_call:call_2:", "function_call_output:call_1:second done", "function_call_output:call_2:first done"}
	if !slices.Equal(got, want) {
		t.Errorf("follow-up items %v, want %v", got, want)
	}
}

// TestLoopbackAnthropicNothingLeftToOffer: when the chat tightened so far
// that no tool is left, Anthropic still needs tool definitions beside the
// tool blocks of the conversation; they go with tool_choice none, so the
// model cannot call any, and the re-offered system prompt replaces the
// old one.
func TestLoopbackAnthropicNothingLeftToOffer(t *testing.T) {
	mail := newTool("read_mail", policy.NoOutbound, func(context.Context, json.RawMessage, tool.ExecContext) (tool.Result, error) {
		return tool.Result{Text: "mail", RequiredConfidence: policy.High}, nil
	})
	tools := offer(mail)
	round1 := anthropicEvents(
		`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"read_mail","input":{}}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":3}}`,
		`{"type":"message_stop"}`,
	)
	round2 := anthropicEvents(
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Done."}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}`,
		`{"type":"message_stop"}`,
	)
	s := newSSEServer(t, reply{events: round1}, reply{events: round2})
	s.path = "/v1/messages"
	p := llm.KindAnthropic.Provider("claude-test", s.srv.URL+"/v1/", "test-key")
	req := llm.Request{Model: "claude-test", MaxTokens: 1024, System: "first system", Messages: []llm.Message{{Role: llm.RoleUser, Text: "Hi"}}, Tools: loop.ToolSpecs(tools)}
	a := anthropic.New(p, req, &llm.Transport{Client: s.srv.Client()})
	reoffer := func(context.Context) (loop.Offer, error) { return loop.Offer{System: "nothing left"}, nil }
	if _, _, err := runLoop(t, context.Background(), a, loop.RunContext{Tools: tools, Reoffer: reoffer}); err != nil {
		t.Fatal(err)
	}
	var body struct {
		System     string            `json:"system"`
		Tools      []json.RawMessage `json:"tools"`
		ToolChoice map[string]string `json:"tool_choice"`
	}
	if err := json.Unmarshal(s.requests()[1], &body); err != nil {
		t.Fatal(err)
	}
	if body.System != "nothing left" || len(body.Tools) == 0 || body.ToolChoice["type"] != "none" {
		t.Errorf("second request: system %q, %d tools, tool_choice %v", body.System, len(body.Tools), body.ToolChoice)
	}
}
