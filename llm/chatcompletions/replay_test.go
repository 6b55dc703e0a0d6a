package chatcompletions

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stewardhq/steward/llm"
)

// recordedCall is a tool call as a recording states it.
type recordedCall struct {
	ID, Name, Args string
}

// finalCalls are the calls of answers no recorded follow-up request
// confirms; they were read off the recordings by hand.
var finalCalls = map[string][]recordedCall{
	"vercel-ai/packages/groq/src/__fixtures__/groq-tool-call.chunks.txt":                       {{"tk85n1k4m", "weather", `{}`}},
	"vercel-ai/packages/deepseek/src/chat/__fixtures__/deepseek-tool-call.chunks.txt":          {{"call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", "weather", `{"location": "San Francisco"}`}},
	"vercel-ai/packages/openai-compatible/src/chat/__fixtures__/xai-tool-call.chunks.txt":      {{"call_79382389", "weather", `{"location":"San Francisco"}`}},
	"pydantic-ai/tests/models/cassettes/test_openrouter/test_openrouter_tool_calling.yaml":     {{"3sniiMddS", "divide", `{"numerator": 123, "denominator": 456, "on_inf": "infinity"}`}},
	"pydantic-ai/tests/models/cassettes/test_ollama/test_ollama_cloud_tool_output.yaml#1":      {{"call_o2vnpxrw", "final_result", `{"city":"Paris","country":"France"}`}},
	"pydantic-ai/tests/models/cassettes/test_groq/test_tool_use_failed_error_streaming.yaml#2": nil,
}

// failingRounds are answers that carry an error inside a 200 stream.
var failingRounds = map[string]string{
	"pydantic-ai/tests/models/cassettes/test_groq/test_tool_use_failed_error_streaming.yaml#0": "tool_use_failed",
	"pydantic-ai/tests/models/cassettes/test_openrouter/test_openrouter_stream_error.yaml#0":   "Token limit reached",
}

// hostOf names the host of a recording and builds its provider.
func hostOf(rec recording) (string, llm.Provider) {
	u := ""
	for _, in := range rec.Interactions {
		if in.URL != "" {
			u = in.URL
			break
		}
	}
	host := ""
	if pu, err := url.Parse(u); err == nil {
		host = pu.Hostname()
	}
	model := ""
	if len(rec.Interactions) > 0 && rec.Interactions[0].Request != nil {
		model, _ = rec.Interactions[0].Request["model"].(string)
	}
	kind := func(k llm.Kind) (string, llm.Provider) {
		p := k.Provider(model, "", "test-key")
		if k == llm.KindOpenAI {
			p.Caps.API = llm.ChatCompletions // the recordings used Chat Completions
			p.Caps.Reasoning = llm.ReasoningNone
		}
		return string(k), p
	}
	switch {
	case host == "api.openai.com":
		return kind(llm.KindOpenAI)
	case host == "api.groq.com":
		return kind(llm.KindGroq)
	case host == "router.huggingface.co":
		return kind(llm.KindHuggingFace)
	case host == "localhost":
		return kind(llm.KindLlamaCpp)
	case host == "api.x.ai":
		return kind(llm.KindXAI)
	case host == "openrouter.ai":
		return kind(llm.KindOpenRouter)
	case host == "ollama.com":
		return kind(llm.KindOllama)
	case host == "api.z.ai":
		// Z.ai is not a catalogue kind; its GLM thinking models want
		// reasoning_content back ("preserved thinking"):
		// https://docs.z.ai/guides/capabilities/thinking-mode
		return "zai", llm.Provider{ID: "zai", Kind: "zai", Model: model, APIKey: "test-key", Caps: llm.Capabilities{
			API: llm.ChatCompletions, AcceptsParallelToolCalls: true, ToolCalling: true, Reasoning: llm.ReasoningContent}}
	}
	// vercel-ai chunk files carry no URL; their folder names the host.
	switch {
	case strings.Contains(rec.Path, "/groq/"):
		return kind(llm.KindGroq)
	case strings.Contains(rec.Path, "/deepseek/"):
		return kind(llm.KindDeepSeek)
	case strings.Contains(rec.Path, "xai-"):
		return kind(llm.KindXAI)
	}
	return "unknown", llm.Provider{}
}

// requestFrom builds the run's base request from a recorded first request.
func requestFrom(t *testing.T, body map[string]any) llm.Request {
	t.Helper()
	req := llm.Request{}
	if body == nil {
		req.Model = "recorded-model"
		req.Messages = []llm.Message{{Role: llm.RoleUser, Text: "What is the weather?"}}
		req.Tools = []llm.ToolSpec{{Name: "weather", Description: "Get the weather", Parameters: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`)}}
		return req
	}
	req.Model, _ = body["model"].(string)
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		mm := m.(map[string]any)
		text, _ := mm["content"].(string)
		switch mm["role"] {
		case "system":
			req.System = text
		case "user":
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Text: text})
		case "assistant":
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Text: text})
		}
	}
	tools, _ := body["tools"].([]any)
	for _, tl := range tools {
		f := tl.(map[string]any)["function"].(map[string]any)
		params, err := json.Marshal(f["parameters"])
		if err != nil {
			t.Fatal(err)
		}
		desc, _ := f["description"].(string)
		strict, _ := f["strict"].(bool)
		req.Tools = append(req.Tools, llm.ToolSpec{Name: f["name"].(string), Description: desc, Parameters: params, Strict: strict})
	}
	return req
}

// replayServer answers each request with the next queued interaction and
// keeps what it received.
type replayServer struct {
	mu     sync.Mutex
	next   *interaction
	bodies [][]byte
	paths  []string
	auth   []string
}

func (s *replayServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	in := s.next
	s.bodies = append(s.bodies, b)
	s.paths = append(s.paths, r.URL.Path)
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	s.mu.Unlock()
	if in == nil {
		http.Error(w, "no interaction queued", http.StatusInternalServerError)
		return
	}
	ct := in.ContentType
	if ct == "" {
		ct = "text/event-stream"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(in.Status)
	_, _ = w.Write(in.Body)
}

func (s *replayServer) queue(in *interaction) {
	s.mu.Lock()
	s.next = in
	s.mu.Unlock()
}

// trailingTurn returns the last assistant message with tool calls of a
// request and the tool messages after it.
func trailingTurn(body map[string]any) (assistant map[string]any, results []map[string]any) {
	msgs, _ := body["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i].(map[string]any)
		if m["role"] == "tool" {
			results = append([]map[string]any{m}, results...)
			continue
		}
		if m["role"] == "assistant" && m["tool_calls"] != nil && len(results) > 0 {
			return m, results
		}
		return nil, nil
	}
	return nil, nil
}

func callsOf(assistant map[string]any) []recordedCall {
	var out []recordedCall
	tcs, _ := assistant["tool_calls"].([]any)
	for _, tc := range tcs {
		m := tc.(map[string]any)
		f := m["function"].(map[string]any)
		id, _ := m["id"].(string)
		args, _ := f["arguments"].(string)
		out = append(out, recordedCall{ID: id, Name: f["name"].(string), Args: args})
	}
	return out
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return a == b
	}
	return reflect.DeepEqual(x, y)
}

func textOf(v any) string {
	s, _ := v.(string)
	return s
}

// compareFollowUp checks that Steward's follow-up request carries the
// recorded essentials: call ids, names and arguments, the result shape, the
// assistant text, and the reasoning fields the recorder sent back.
func compareFollowUp(t *testing.T, ours, recorded map[string]any) {
	t.Helper()
	ra, rr := trailingTurn(recorded)
	oa, or := trailingTurn(ours)
	if ra == nil {
		return
	}
	if oa == nil {
		t.Fatalf("Steward's follow-up has no assistant turn with results; recorded one has %d results", len(rr))
	}
	rc, oc := callsOf(ra), callsOf(oa)
	if len(rc) != len(oc) {
		t.Fatalf("follow-up carries %d calls, recorded %d", len(oc), len(rc))
	}
	for i := range rc {
		if rc[i].ID != oc[i].ID || rc[i].Name != oc[i].Name || !jsonEqual(rc[i].Args, oc[i].Args) {
			t.Errorf("follow-up call %d = %+v, recorded %+v", i, oc[i], rc[i])
		}
	}
	// pydantic-ai folds reasoning into the content as <think>…</think>;
	// that is its own shape, not the host's.
	if rtext := textOf(ra["content"]); !strings.HasPrefix(rtext, "<think>") {
		if otext := textOf(oa["content"]); otext != rtext {
			t.Errorf("follow-up assistant content = %q, recorded %q", otext, rtext)
		}
	}
	if v, ok := oa["content"]; !ok || (v != nil && textOf(v) == "") {
		t.Errorf("assistant content must be null or text, got %#v", oa["content"])
	}
	for _, f := range []string{"reasoning_content", "reasoning"} {
		if rv := textOf(ra[f]); rv != "" && textOf(oa[f]) != rv {
			t.Errorf("follow-up %s = %q, recorded %q", f, textOf(oa[f]), rv)
		}
	}
	if rd, ok := ra["reasoning_details"]; ok {
		if !reflect.DeepEqual(rd, oa["reasoning_details"]) {
			a, _ := json.Marshal(oa["reasoning_details"])
			b, _ := json.Marshal(rd)
			t.Errorf("follow-up reasoning_details differ:\n ours     %s\n recorded %s", a, b)
		}
	}
	if len(rr) != len(or) {
		t.Fatalf("follow-up carries %d tool results, recorded %d", len(or), len(rr))
	}
	for i := range rr {
		if rr[i]["tool_call_id"] != or[i]["tool_call_id"] || rr[i]["content"] != or[i]["content"] {
			t.Errorf("tool result %d = %v, recorded %v", i, or[i], rr[i])
		}
		keys := make([]string, 0, len(or[i]))
		for k := range or[i] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if strings.Join(keys, ",") != "content,role,tool_call_id" {
			t.Errorf("tool result %d has keys %v, want content, role, tool_call_id", i, keys)
		}
	}
}

// TestReplayRecordings replays every Chat Completions recording through
// the adapter, from a loopback server, and checks the text, the calls and
// the follow-up requests against what was recorded.
func TestReplayRecordings(t *testing.T) {
	recs := loadRecordings(t)
	perHost := map[string]int{}
	rounds, followUps, callsChecked, validatedBodies := 0, 0, 0, 0
	for _, rec := range recs {
		t.Run(rec.Path, func(t *testing.T) {
			host, p := hostOf(rec)
			if host == "unknown" {
				t.Fatalf("no host known for %s", rec.Path)
			}
			srv := &replayServer{}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			p.BaseURL = ts.URL + "/v1/"

			var base map[string]any
			if len(rec.Interactions) > 0 {
				base = rec.Interactions[0].Request
			}
			newAdapter := func(body map[string]any) *Adapter {
				return NewWithOptions(p, requestFrom(t, body), &llm.Transport{Client: ts.Client(), MaxAttempts: 1}, Options{Logger: quietLogger})
			}
			a := newAdapter(base)
			prevOK := false
			for i := range rec.Interactions {
				in := &rec.Interactions[i]
				key := rec.Path + "#" + itoa(i)
				if prevOK && in.Request != nil {
					body, err := a.BuildBody(llm.RoundOptions{IncludeTools: true})
					if err != nil {
						t.Fatal(err)
					}
					var ours map[string]any
					if err := json.Unmarshal(body, &ours); err != nil {
						t.Fatal(err)
					}
					if ra, _ := trailingTurn(in.Request); ra != nil {
						followUps++
					}
					compareFollowUp(t, ours, in.Request)
				} else if i > 0 {
					// The recorder's history cannot be reproduced (an error
					// round, or a retry of its own): start from its request.
					a = newAdapter(in.Request)
				}
				if i == 0 && in.Request != nil {
					checkFirstRequest(t, a, in.Request)
				}
				srv.queue(in)
				var streamed strings.Builder
				round, err := a.Round(context.Background(), llm.RoundOptions{IncludeTools: true}, func(s string) { streamed.WriteString(s) })
				rounds++
				if want, ok := failingRounds[key]; ok {
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Fatalf("round %d: err = %v, want an error mentioning %q", i, err, want)
					}
					prevOK = false
					continue
				}
				if err != nil {
					t.Fatalf("round %d: %v", i, err)
				}
				if got := srv.paths[len(srv.paths)-1]; got != "/v1/chat/completions" {
					t.Errorf("request went to %q", got)
				}
				if got := srv.auth[len(srv.auth)-1]; got != "Bearer test-key" {
					t.Errorf("Authorization = %q", got)
				}
				wantText := recordedText(*in)
				if round.Text != wantText || streamed.String() != wantText {
					t.Errorf("round %d text = %q (streamed %q), want %q", i, round.Text, streamed.String(), wantText)
				}
				var want []recordedCall
				haveWant := false
				if i+1 < len(rec.Interactions) {
					if ra, _ := trailingTurn(rec.Interactions[i+1].Request); ra != nil {
						want, haveWant = callsOf(ra), true
					}
				}
				if w, ok := finalCalls[key]; ok {
					want, haveWant = w, true
				} else if w, ok := finalCalls[rec.Path]; ok && i == len(rec.Interactions)-1 {
					want, haveWant = w, true
				}
				if !haveWant && len(round.Calls) > 0 {
					t.Fatalf("round %d yields %d calls but nothing recorded states them", i, len(round.Calls))
				}
				if haveWant {
					if len(round.Calls) != len(want) {
						t.Fatalf("round %d: %d calls, want %d: %+v", i, len(round.Calls), len(want), round.Calls)
					}
					for j, c := range round.Calls {
						callsChecked++
						if c.ID != want[j].ID || c.Name != want[j].Name || !jsonEqual(string(c.Arguments), want[j].Args) || !c.Valid {
							t.Errorf("round %d call %d = %+v, want %+v", i, j, c, want[j])
						}
					}
				}
				prevOK = len(round.Calls) > 0
				if prevOK {
					a.RecordAssistantTurn()
					results := map[string]string{}
					if i+1 < len(rec.Interactions) {
						_, rr := trailingTurn(rec.Interactions[i+1].Request)
						for _, r := range rr {
							results[textOf(r["tool_call_id"])] = textOf(r["content"])
						}
					}
					for _, c := range round.Calls {
						content, ok := results[c.ID]
						if !ok {
							content = "result of " + c.Name
						}
						a.RecordToolResult(c.ID, content, false)
					}
				}
			}
			srv.mu.Lock()
			sent := append([][]byte(nil), srv.bodies...)
			srv.mu.Unlock()
			for _, b := range sent {
				validateRequest(t, b)
				validatedBodies++
			}
			perHost[host]++
		})
	}
	hosts := make([]string, 0, len(perHost))
	total := 0
	for h, n := range perHost {
		hosts = append(hosts, h+"="+itoa(n))
		total += n
	}
	sort.Strings(hosts)
	t.Logf("replayed %d of %d recordings (%d rounds, %d calls checked, %d follow-up requests compared, %d sent bodies validated against the spec): %s", total, len(recs), rounds, callsChecked, followUps, validatedBodies, strings.Join(hosts, " "))
	if total != len(recs) && !t.Failed() {
		t.Errorf("only %d of %d recordings replayed", total, len(recs))
	}
}

// checkFirstRequest compares Steward's first request with the recorded one:
// the same system and user messages, the same functions nested under
// "function", and stream:true.
func checkFirstRequest(t *testing.T, a *Adapter, recorded map[string]any) {
	t.Helper()
	body, err := a.BuildBody(llm.RoundOptions{IncludeTools: true})
	if err != nil {
		t.Fatal(err)
	}
	var ours map[string]any
	if err := json.Unmarshal(body, &ours); err != nil {
		t.Fatal(err)
	}
	if ours["stream"] != true {
		t.Error("stream is not true")
	}
	if !reflect.DeepEqual(ours["messages"], recorded["messages"]) {
		a, _ := json.Marshal(ours["messages"])
		b, _ := json.Marshal(recorded["messages"])
		t.Errorf("first messages differ:\n ours     %s\n recorded %s", a, b)
	}
	rt, _ := recorded["tools"].([]any)
	ot, _ := ours["tools"].([]any)
	if len(rt) != len(ot) {
		t.Fatalf("%d tools sent, %d recorded", len(ot), len(rt))
	}
	for i := range rt {
		rf := rt[i].(map[string]any)["function"].(map[string]any)
		of := ot[i].(map[string]any)["function"].(map[string]any)
		if rf["name"] != of["name"] || !reflect.DeepEqual(rf["parameters"], of["parameters"]) {
			t.Errorf("tool %d differs: ours %v, recorded %v", i, of, rf)
		}
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
