package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/llmtest"
	"github.com/stewardhq/steward/internal/testenv"
	"github.com/stewardhq/steward/llm"
)

// TestReplayRecordings replays every recording under
// peers/fixtures/anthropic-messages through the adapter: the recorded text,
// calls and arguments must come out; where the recording holds the
// client's follow-up request, Steward's follow-up must carry the same
// blocks (thinking signatures byte for byte, tool_use ids and inputs) and
// the same results in one user message.
func TestReplayRecordings(t *testing.T) {
	root := filepath.Join(testenv.SharedDir(t), "peers", "fixtures", "anthropic-messages")
	files, rounds, perHost := llmtest.ReplayAll(t, root, replayOne)
	t.Logf("replayed %d Anthropic Messages recordings (%d rounds): %v", files, rounds, perHost)
}

type expected struct {
	text      string
	calls     []llm.Call
	errSubstr string
	// verbatim are byte strings the next request must contain: the
	// signatures of thinking blocks and whole redacted_thinking blocks.
	verbatim []string
}

// expectFrom reads what an answer must come to from the recording, by a
// path of its own.
func expectFrom(t *testing.T, ex llmtest.Exchange) expected {
	t.Helper()
	var want expected
	if strings.HasPrefix(ex.ContentType, "application/json") {
		var m struct {
			Content []struct {
				Type      string          `json:"type"`
				Text      string          `json:"text"`
				ID        string          `json:"id"`
				Name      string          `json:"name"`
				Input     json.RawMessage `json:"input"`
				Signature string          `json:"signature"`
				Data      string          `json:"data"`
			} `json:"content"`
		}
		if err := json.Unmarshal(ex.Body, &m); err != nil {
			t.Fatal(err)
		}
		for _, b := range m.Content {
			switch b.Type {
			case "text":
				want.text += b.Text
			case "tool_use":
				want.calls = append(want.calls, llm.Call{ID: b.ID, Name: b.Name, Arguments: b.Input, Valid: true})
			case "thinking":
				want.verbatim = append(want.verbatim, `"signature":"`+b.Signature+`"`)
			case "redacted_thinking":
				want.verbatim = append(want.verbatim, `"data":"`+b.Data+`"`)
			}
		}
		return want
	}
	type call struct {
		id, name string
		args     strings.Builder
	}
	calls := map[int]*call{}
	var order []int
	for _, line := range strings.Split(string(ex.Body), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type         string          `json:"type"`
			Index        int             `json:"index"`
			ContentBlock json.RawMessage `json:"content_block"`
			Delta        struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				PartialJSON string `json:"partial_json"`
				Signature   string `json:"signature"`
			} `json:"delta"`
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("unreadable recorded event: %v", err)
		}
		switch ev.Type {
		case "content_block_start":
			var b struct {
				Type string `json:"type"`
				ID   string `json:"id"`
				Name string `json:"name"`
			}
			json.Unmarshal(ev.ContentBlock, &b)
			switch b.Type {
			case "tool_use":
				calls[ev.Index] = &call{id: b.ID, name: b.Name}
				order = append(order, ev.Index)
			case "redacted_thinking":
				want.verbatim = append(want.verbatim, string(ev.ContentBlock))
			}
		case "content_block_delta":
			switch ev.Delta.Type {
			case "text_delta":
				want.text += ev.Delta.Text
			case "input_json_delta":
				calls[ev.Index].args.WriteString(ev.Delta.PartialJSON)
			case "signature_delta":
				want.verbatim = append(want.verbatim, `"signature":"`+ev.Delta.Signature+`"`)
			}
		case "error":
			want.errSubstr = ev.Error.Message
		}
	}
	for _, i := range order {
		c := calls[i]
		args := c.args.String()
		if args == "" {
			args = "{}"
		}
		want.calls = append(want.calls, llm.Call{ID: c.id, Name: c.name, Arguments: json.RawMessage(args), Valid: true})
	}
	return want
}

type recordedRequest struct {
	Model     string            `json:"model"`
	MaxTokens int               `json:"max_tokens"`
	System    json.RawMessage   `json:"system"`
	Thinking  json.RawMessage   `json:"thinking"`
	Messages  []json.RawMessage `json:"messages"`
	Tools     []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
	Stream bool `json:"stream"`
}

// requestFrom builds Steward's request from a recorded first request.
func requestFrom(t *testing.T, raw json.RawMessage) llm.Request {
	t.Helper()
	if raw == nil {
		return llm.Request{
			Model:    "claude-sonnet-4-5-20250929",
			System:   "You are a helpful assistant.",
			Messages: []llm.Message{{Role: llm.RoleUser, Text: "Go on."}},
			Tools: []llm.ToolSpec{{Name: "tool", Description: "A tool.",
				Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}},
		}
	}
	var r recordedRequest
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	req := llm.Request{Model: r.Model, MaxTokens: r.MaxTokens, System: llmtest.ContentText(r.System)}
	if len(r.Thinking) > 0 {
		req.Extra = map[string]any{"thinking": r.Thinking}
	}
	for _, m := range r.Messages {
		var msg struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		json.Unmarshal(m, &msg)
		req.Messages = append(req.Messages, llm.Message{Role: llm.Role(msg.Role), Text: llmtest.ContentText(msg.Content)})
	}
	for _, tl := range r.Tools {
		req.Tools = append(req.Tools, llm.ToolSpec{Name: tl.Name, Description: tl.Description, Parameters: tl.InputSchema})
	}
	return req
}

// closing is a minimal answer for the extra round that shows what Steward
// sends back after the last recorded one.
const closing = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n" +
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Done.\"}}\n\n" +
	"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n" +
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"

func replayOne(t *testing.T, path string) (host string, rounds int) {
	var exs []llmtest.Exchange
	if llmtest.IsChunks(path) {
		exs = llmtest.LoadChunks(t, path, "message_start")
		host = "api.anthropic.com (vercel-ai chunks)"
	} else {
		exs = llmtest.LoadCassette(t, path)
		u, err := url.Parse(exs[0].URL)
		if err != nil {
			t.Fatal(err)
		}
		host = u.Host
	}
	recorded := len(exs)
	srv := llmtest.NewReplayServer(t, append(exs, llmtest.Exchange{Status: 200, ContentType: "text/event-stream", Body: []byte(closing)}))
	defer llmtest.ValidateSent(t, srv, requestSchema)
	req := requestFrom(t, exs[0].Request)
	p := llm.Provider{Kind: "anthropic", BaseURL: srv.URL + "/v1/", APIKey: "test-key", Model: req.Model,
		Caps: llm.Capabilities{API: llm.Messages, ToolCalling: true, Reasoning: llm.ReasoningThinkingBlocks}}
	a := New(p, req, llmtest.LoopbackTransport(t))
	ctx := context.Background()
	var verbatim []string
	for i := 0; i < recorded; i++ {
		ex := exs[i]
		want := expectFrom(t, ex)
		var deltas strings.Builder
		round, err := a.Round(ctx, llm.RoundOptions{IncludeTools: true}, func(s string) { deltas.WriteString(s) })
		rounds++
		h := srv.Header(i)
		if srv.Path(i) != "/v1/messages" || h.Get("x-api-key") != "test-key" || h.Get("anthropic-version") != "2023-06-01" {
			t.Errorf("round %d: sent to %s with headers %v", i, srv.Path(i), h)
		}
		if want.errSubstr != "" {
			if err == nil || !strings.Contains(err.Error(), want.errSubstr) {
				t.Fatalf("round %d: error = %v, want the provider's message %q", i, err, want.errSubstr)
			}
			return host, rounds
		}
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if deltas.String() != want.text || round.Text != want.text {
			t.Errorf("round %d: text streamed %q, round text %q, recorded %q", i, deltas.String(), round.Text, want.text)
		}
		if len(round.Calls) != len(want.calls) {
			t.Fatalf("round %d: %d calls, recorded %d", i, len(round.Calls), len(want.calls))
		}
		for j, c := range round.Calls {
			w := want.calls[j]
			if c.ID != w.ID || c.Name != w.Name || !llmtest.JSONEqual(c.Arguments, w.Arguments) || !c.Valid {
				t.Errorf("round %d call %d: got %+v (args %s), recorded %+v (args %s)", i, j, c, c.Arguments, w, w.Arguments)
			}
		}
		sent := srv.Body(i)
		if ex.Request != nil {
			compareRequest(t, i, sent, ex.Request)
		}
		for _, v := range verbatim {
			if !strings.Contains(string(sent), v) {
				t.Errorf("request %d lacks, byte for byte: %.120s", i, v)
			}
		}
		verbatim = append(verbatim, want.verbatim...)
		if i+1 == recorded && len(round.Calls) == 0 && len(want.verbatim) == 0 {
			return host, rounds
		}
		// Record the turn and the results: those of the recorded follow-up
		// where there is one, else a result of our own.
		a.RecordAssistantTurn()
		type res struct {
			content string
			isError bool
		}
		results := map[string]res{}
		if i+1 < recorded && exs[i+1].Request != nil {
			for _, b := range blocksOf(t, exs[i+1].Request) {
				if b.Type == "tool_result" {
					results[b.ToolUseID] = res{llmtest.ContentText(b.Content), b.IsError}
				}
			}
		}
		for _, c := range round.Calls {
			r, ok := results[c.ID]
			if !ok {
				r = res{content: "result of " + c.Name}
			}
			a.RecordToolResult(c.ID, r.content, r.isError)
		}
	}
	// One more round shows what goes back after the last recorded answer.
	if _, err := a.Round(ctx, llm.RoundOptions{IncludeTools: true}, nil); err != nil {
		t.Fatalf("closing round: %v", err)
	}
	sent := srv.Body(recorded)
	for _, v := range verbatim {
		if !strings.Contains(string(sent), v) {
			t.Errorf("closing request lacks, byte for byte: %.120s", v)
		}
	}
	return host, rounds
}

type wireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	role      string
}

func blocksOf(t *testing.T, body []byte) []wireBlock {
	t.Helper()
	var r recordedRequest
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	var out []wireBlock
	for _, m := range r.Messages {
		var msg struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		json.Unmarshal(m, &msg)
		var s string
		if json.Unmarshal(msg.Content, &s) == nil {
			out = append(out, wireBlock{Type: "text", Text: s, role: msg.Role})
			continue
		}
		var bs []wireBlock
		json.Unmarshal(msg.Content, &bs)
		for j := range bs {
			bs[j].role = msg.Role
		}
		out = append(out, bs...)
	}
	return out
}

// essentials are the conversation's blocks as the API reads them, one a
// line, with the message each belongs to.
func essentials(t *testing.T, body []byte) []string {
	var r recordedRequest
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	var out []string
	for k, m := range r.Messages {
		var msg struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		json.Unmarshal(m, &msg)
		var bs []wireBlock
		var s string
		if json.Unmarshal(msg.Content, &s) == nil {
			bs = []wireBlock{{Type: "text", Text: s}}
		} else {
			json.Unmarshal(msg.Content, &bs)
		}
		for _, b := range bs {
			var line string
			switch b.Type {
			case "text":
				line = "text " + b.Text
			case "thinking":
				line = "thinking " + b.Signature + " " + b.Thinking
			case "redacted_thinking":
				line = "redacted " + b.Data
			case "tool_use":
				var in any
				json.Unmarshal(b.Input, &in)
				ib, _ := json.Marshal(in)
				line = "tool_use " + b.ID + " " + b.Name + " " + string(ib)
			case "tool_result":
				line = fmt.Sprintf("tool_result %s error=%v %s", b.ToolUseID, b.IsError, llmtest.ContentText(b.Content))
			default:
				line = "other " + b.Type
			}
			out = append(out, fmt.Sprintf("%d %s %s", k, msg.Role, line))
		}
	}
	return out
}

func compareRequest(t *testing.T, i int, sent, recorded []byte) {
	t.Helper()
	if sent == nil {
		t.Fatalf("request %d was not sent", i)
	}
	var s, r recordedRequest
	json.Unmarshal(sent, &s)
	json.Unmarshal(recorded, &r)
	wantMax := r.MaxTokens
	if s.Model != r.Model || !s.Stream || s.MaxTokens != wantMax || llmtest.ContentText(s.System) != llmtest.ContentText(r.System) {
		t.Errorf("request %d: model %q stream %v max_tokens %d system %q", i, s.Model, s.Stream, s.MaxTokens, s.System)
	}
	if len(s.Tools) != len(r.Tools) {
		t.Errorf("request %d: %d tools, recorded %d", i, len(s.Tools), len(r.Tools))
	} else {
		for j := range s.Tools {
			if s.Tools[j].Name != r.Tools[j].Name || !llmtest.JSONEqual(s.Tools[j].InputSchema, r.Tools[j].InputSchema) {
				t.Errorf("request %d tool %d differs: %+v vs %+v", i, j, s.Tools[j], r.Tools[j])
			}
		}
	}
	got, want := essentials(t, sent), essentials(t, recorded)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("request %d essentials differ\n got: %q\nwant: %q", i, got, want)
	}
}
