package responses

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/llmtest"
	"github.com/stewardhq/steward/internal/testenv"
	"github.com/stewardhq/steward/llm"
)

// TestReplayRecordings replays every recording under
// peers/fixtures/responses through the adapter: the recorded text, calls
// and arguments must come out, and where the recording holds the client's
// follow-up request, Steward's follow-up must carry the same call ids,
// calls and results, plus every reasoning item of the round.
func TestReplayRecordings(t *testing.T) {
	root := filepath.Join(testenv.SharedDir(t), "peers", "fixtures", "responses")
	files, rounds, perHost := llmtest.ReplayAll(t, root, replayOne)
	t.Logf("replayed %d Responses recordings (%d rounds): %v", files, rounds, perHost)
}

// expected is what an answer must come to, read from the recording by a
// path of its own (the .done events, not the deltas the adapter reads).
type expected struct {
	text      string
	calls     []llm.Call
	errSubstr string
	// reasoning are the reasoning items carrying encrypted content.
	reasoning []json.RawMessage
}

func expectFrom(t *testing.T, ex llmtest.Exchange) expected {
	t.Helper()
	var want expected
	readItem := func(raw json.RawMessage) {
		var it struct {
			Type             string `json:"type"`
			CallID           string `json:"call_id"`
			Name             string `json:"name"`
			Arguments        string `json:"arguments"`
			EncryptedContent string `json:"encrypted_content"`
		}
		json.Unmarshal(raw, &it)
		switch it.Type {
		case "reasoning":
			if it.EncryptedContent != "" {
				want.reasoning = append(want.reasoning, raw)
			}
		}
	}
	if strings.HasPrefix(ex.ContentType, "application/json") {
		var resp struct {
			Output []json.RawMessage `json:"output"`
		}
		if err := json.Unmarshal(ex.Body, &resp); err != nil {
			t.Fatal(err)
		}
		for _, raw := range resp.Output {
			readItem(raw)
			var it struct {
				Type      string `json:"type"`
				CallID    string `json:"call_id"`
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
				Content   []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
			}
			json.Unmarshal(raw, &it)
			switch it.Type {
			case "message":
				for _, c := range it.Content {
					if c.Type == "output_text" {
						want.text += c.Text
					}
				}
			case "function_call":
				want.calls = append(want.calls, llm.Call{ID: it.CallID, Name: it.Name, Arguments: json.RawMessage(it.Arguments), Valid: true})
			}
		}
		return want
	}
	calls := map[int]*llm.Call{}
	var order []int
	for _, line := range strings.Split(string(ex.Body), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type        string          `json:"type"`
			OutputIndex int             `json:"output_index"`
			Text        string          `json:"text"`
			Arguments   string          `json:"arguments"`
			Item        json.RawMessage `json:"item"`
			Response    json.RawMessage `json:"response"`
			Message     string          `json:"message"`
			Error       struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("unreadable recorded event: %v", err)
		}
		switch ev.Type {
		case "response.output_text.done":
			want.text += ev.Text
		case "response.output_item.added":
			var it struct {
				Type   string `json:"type"`
				CallID string `json:"call_id"`
				Name   string `json:"name"`
			}
			json.Unmarshal(ev.Item, &it)
			if it.Type == "function_call" {
				calls[ev.OutputIndex] = &llm.Call{ID: it.CallID, Name: it.Name, Valid: true}
				order = append(order, ev.OutputIndex)
			}
		case "response.completed":
			// The completed response is the round; its reasoning items
			// are what goes back (their encrypted content differs from
			// the one in output_item.done).
			var resp struct {
				Output []json.RawMessage `json:"output"`
			}
			json.Unmarshal(ev.Response, &resp)
			for _, raw := range resp.Output {
				readItem(raw)
			}
		case "response.function_call_arguments.done":
			calls[ev.OutputIndex].Arguments = json.RawMessage(ev.Arguments)
		case "error":
			want.errSubstr = ev.Message
			if want.errSubstr == "" {
				want.errSubstr = ev.Error.Message
			}
		}
	}
	for _, i := range order {
		want.calls = append(want.calls, *calls[i])
	}
	return want
}

// requestFrom builds Steward's request from a recorded first request, so
// that both carry the same conversation and tools.
func requestFrom(t *testing.T, raw json.RawMessage) llm.Request {
	t.Helper()
	if raw == nil {
		return llm.Request{
			Model:    "gpt-5.1-codex-max",
			System:   "You are a helpful assistant.",
			Messages: []llm.Message{{Role: llm.RoleUser, Text: "Compute."}},
			Tools: []llm.ToolSpec{{Name: "calculator", Description: "Calculates.",
				Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"},"op":{"type":"string"}},"required":["a","b","op"],"additionalProperties":false}`)}},
		}
	}
	var r struct {
		Model string `json:"model"`
		Input []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"input"`
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	req := llm.Request{Model: r.Model}
	for _, in := range r.Input {
		text := llmtest.ContentText(in.Content)
		switch in.Role {
		case "system", "developer":
			req.System = text
		case "user":
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Text: text})
		case "assistant":
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Text: text})
		}
	}
	for _, tl := range r.Tools {
		req.Tools = append(req.Tools, llm.ToolSpec{Name: tl.Name, Description: tl.Description, Parameters: tl.Parameters})
	}
	return req
}

func reasoningModel(model string) bool { return llm.OpenAIAPIForModel(model) == llm.Responses }

func replayOne(t *testing.T, path string) (host string, rounds int) {
	var exs []llmtest.Exchange
	if llmtest.IsChunks(path) {
		exs = llmtest.LoadChunks(t, path, "response.created")
		host = "api.openai.com (vercel-ai chunks)"
	} else {
		exs = llmtest.LoadCassette(t, path)
		u, err := url.Parse(exs[0].URL)
		if err != nil {
			t.Fatal(err)
		}
		host = u.Host
	}
	srv := llmtest.NewReplayServer(t, exs)
	defer llmtest.ValidateSent(t, srv, requestSchema)
	req := requestFrom(t, exs[0].Request)
	p := llm.Provider{Kind: "openai", BaseURL: srv.URL + "/v1/", APIKey: "test-key", Model: req.Model,
		Caps: llm.Capabilities{API: llm.Responses, ToolCalling: true}}
	if reasoningModel(req.Model) {
		p.Caps.Reasoning = llm.ReasoningResponsesItems
	}
	a := New(p, req, llmtest.LoopbackTransport(t))
	ctx := context.Background()
	var reasoningSoFar []json.RawMessage
	for i, ex := range exs {
		want := expectFrom(t, ex)
		var deltas strings.Builder
		round, err := a.Round(ctx, llm.RoundOptions{IncludeTools: true}, func(s string) { deltas.WriteString(s) })
		rounds++
		if srv.Path(i) != "/v1/responses" || srv.Header(i).Get("Authorization") != "Bearer test-key" {
			t.Errorf("round %d: sent to %s with Authorization %q", i, srv.Path(i), srv.Header(i).Get("Authorization"))
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
		if ex.Request != nil {
			compareRequest(t, i, srv.Body(i), ex.Request, reasoningSoFar, p.Caps.Reasoning == llm.ReasoningResponsesItems)
		} else if i > 0 {
			checkReasoningReplayed(t, i, srv.Body(i), reasoningSoFar)
		}
		reasoningSoFar = append(reasoningSoFar, want.reasoning...)
		if i+1 == len(exs) {
			break
		}
		if len(round.Calls) == 0 {
			t.Fatalf("round %d: the recording goes on, but the round asked for no tool", i)
		}
		a.RecordAssistantTurn()
		outputs := map[string]string{}
		if next := exs[i+1].Request; next != nil {
			for _, it := range inputItems(t, next) {
				if it.Type == "function_call_output" {
					outputs[it.CallID] = it.Output
				}
			}
		}
		for _, c := range round.Calls {
			out, ok := outputs[c.ID]
			if !ok {
				out = "result of " + c.Name
			}
			a.RecordToolResult(c.ID, out, false)
		}
	}
	return host, rounds
}

type inputItem struct {
	Type             string          `json:"type"`
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	CallID           string          `json:"call_id"`
	Name             string          `json:"name"`
	Arguments        string          `json:"arguments"`
	Output           string          `json:"output"`
	EncryptedContent string          `json:"encrypted_content"`
	raw              json.RawMessage
}

func inputItems(t *testing.T, body []byte) []inputItem {
	t.Helper()
	var r struct {
		Input []json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("request body: %v", err)
	}
	out := make([]inputItem, len(r.Input))
	for i, raw := range r.Input {
		json.Unmarshal(raw, &out[i])
		out[i].raw = raw
	}
	return out
}

// essentials are the messages, calls and results of a request, in order.
func essentials(items []inputItem) []string {
	var out []string
	for _, it := range items {
		switch {
		case it.Type == "function_call":
			var args any
			json.Unmarshal([]byte(it.Arguments), &args)
			a, _ := json.Marshal(args)
			out = append(out, "call "+it.CallID+" "+it.Name+" "+string(a))
		case it.Type == "function_call_output":
			out = append(out, "output "+it.CallID+" "+it.Output)
		case it.Role == "user":
			out = append(out, "user "+llmtest.ContentText(it.Content))
		case it.Role == "system" || it.Role == "developer":
			out = append(out, it.Role+" "+llmtest.ContentText(it.Content))
		}
	}
	return out
}

func compareRequest(t *testing.T, i int, sent, recorded []byte, reasoning []json.RawMessage, reasons bool) {
	t.Helper()
	if sent == nil {
		t.Fatalf("request %d was not sent", i)
	}
	var s, r struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
		Store  *bool  `json:"store"`
		Tools  []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"tools"`
		Include           []string `json:"include"`
		ParallelToolCalls *bool    `json:"parallel_tool_calls"`
	}
	json.Unmarshal(sent, &s)
	json.Unmarshal(recorded, &r)
	if s.Model != r.Model || !s.Stream || s.Store == nil || *s.Store || s.ParallelToolCalls != nil {
		t.Errorf("request %d: model %q stream %v store %v parallel_tool_calls %v", i, s.Model, s.Stream, s.Store, s.ParallelToolCalls)
	}
	if len(s.Tools) != len(r.Tools) {
		t.Errorf("request %d: %d tools, recorded %d", i, len(s.Tools), len(r.Tools))
	} else {
		for j := range s.Tools {
			if s.Tools[j].Name != r.Tools[j].Name || s.Tools[j].Type != "function" || !llmtest.JSONEqual(s.Tools[j].Parameters, r.Tools[j].Parameters) {
				t.Errorf("request %d tool %d differs: %+v vs %+v", i, j, s.Tools[j], r.Tools[j])
			}
		}
	}
	if reasons != (len(s.Include) == 1 && s.Include[0] == includeEncrypted) {
		t.Errorf("request %d: include %v for a model that reasons: %v", i, s.Include, reasons)
	}
	got, want := essentials(inputItems(t, sent)), essentials(inputItems(t, recorded))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("request %d essentials differ\n got: %q\nwant: %q", i, got, want)
	}
	checkReasoningReplayed(t, i, sent, reasoning)
}

// checkReasoningReplayed asserts that every reasoning item of earlier
// rounds goes back byte for byte, each before the call that followed it.
func checkReasoningReplayed(t *testing.T, i int, sent []byte, reasoning []json.RawMessage) {
	t.Helper()
	var got []json.RawMessage
	for _, it := range inputItems(t, sent) {
		if it.Type == "reasoning" {
			got = append(got, it.raw)
		}
	}
	if len(got) != len(reasoning) {
		t.Fatalf("request %d carries %d reasoning items, the rounds before produced %d", i, len(got), len(reasoning))
	}
	for j := range got {
		if !bytes.Equal(got[j], compact(t, reasoning[j])) {
			t.Errorf("request %d: reasoning item %d changed:\n got %.200s\nwant %.200s", i, j, got[j], reasoning[j])
		}
	}
}

func compact(t *testing.T, raw []byte) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
