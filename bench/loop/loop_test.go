package loop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"charm.land/fantasy"
	fantasyopenai "charm.land/fantasy/providers/openai"

	"github.com/stewardhq/steward/chat"
	"github.com/stewardhq/steward/llm"
	"github.com/stewardhq/steward/llm/chatcompletions"
	"github.com/stewardhq/steward/loop"
	"github.com/stewardhq/steward/tool"
)

// The scripted conversation: nine rounds in which the model says a few words
// and asks for one call of the echo tool, then a tenth that answers in
// twenty text deltas.
const (
	convRounds   = 10
	convCalls    = 9
	toolName     = "weather"
	toolResult   = `{"temperature":21,"unit":"C"}`
	toolArgs     = `{"city":"Bern"}`
	finalWord    = "word "
	finalDeltas  = 20
	systemPrompt = "You are helpful."
	userPrompt   = "What is the weather in Bern?"
)

var toolSchema = json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)

func chunk(delta string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"test-model","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}`
}

// conversation returns the response bodies of the ten rounds, in order.
func conversation() [][]byte {
	var out [][]byte
	frame := func(sb *strings.Builder, e string) { fmt.Fprintf(sb, "data: %s\n\n", e) }
	finish := func(reason string) string {
		return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"test-model","choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}]}`
	}
	usage := func(in, outTok int) string {
		return fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"test-model","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`, in, outTok, in+outTok)
	}
	args, _ := json.Marshal(toolArgs)
	for i := range convCalls {
		var sb strings.Builder
		frame(&sb, chunk(`{"role":"assistant","content":"Checking. "}`))
		frame(&sb, chunk(fmt.Sprintf(`{"tool_calls":[{"index":0,"id":"call_%d","type":"function","function":{"name":%q,"arguments":""}}]}`, i, toolName)))
		frame(&sb, chunk(fmt.Sprintf(`{"tool_calls":[{"index":0,"function":{"arguments":%s}}]}`, args)))
		frame(&sb, finish("tool_calls"))
		frame(&sb, usage(100+10*i, 10))
		frame(&sb, "[DONE]")
		out = append(out, []byte(sb.String()))
	}
	var sb strings.Builder
	for range finalDeltas {
		frame(&sb, chunk(`{"content":"`+finalWord+`"}`))
	}
	frame(&sb, finish("stop"))
	frame(&sb, usage(200, 20))
	frame(&sb, "[DONE]")
	return append(out, []byte(sb.String()))
}

// finalText is the text of the tenth round.
var finalText = strings.Repeat(finalWord, finalDeltas)

// scriptServer serves the scripted rounds in order on loopback; reset starts
// a new conversation.
type scriptServer struct {
	srv    *httptest.Server
	rounds [][]byte
	mu     sync.Mutex
	next   int
	// lastRequest is the body of the last request, kept for the checks.
	lastRequest []byte
}

func newScriptServer(tb testing.TB) *scriptServer {
	s := &scriptServer{rounds: conversation()}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		i := s.next
		s.next++
		s.lastRequest = body
		s.mu.Unlock()
		if i >= len(s.rounds) {
			http.Error(w, "the script has only ten rounds", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(s.rounds[i])
	}))
	tb.Cleanup(s.srv.Close)
	return s
}

func (s *scriptServer) reset() {
	s.mu.Lock()
	s.next = 0
	s.mu.Unlock()
}

func (s *scriptServer) served() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next
}

// weatherTool is the trivial local tool on Steward's side.
type weatherTool struct{ tool.Base }

func (weatherTool) Execute(_ context.Context, args json.RawMessage, _ tool.ExecContext) (tool.Result, error) {
	if !bytes.Contains(args, []byte("Bern")) {
		return tool.Result{}, fmt.Errorf("unexpected arguments %s", args)
	}
	return tool.Result{Text: toolResult}, nil
}

func stewardTools() []tool.Offered {
	t := weatherTool{Base: tool.Base{Def: tool.Definition{ID: toolName, Function: tool.Function{Name: toolName, Description: "Gives the current weather of a city.", Parameters: toolSchema}}}}
	return []tool.Offered{{Definition: t.Def, Function: t.Def.Function, Tool: t}}
}

// stewardConversation runs one conversation through Steward's loop.
type stewardConversation struct {
	s     *scriptServer
	l     loop.Loop
	tools []tool.Offered
	p     llm.Provider
	tr    *llm.Transport
}

func newStewardConversation(s *scriptServer) *stewardConversation {
	p := llm.KindOpenAI.Provider("test-model", s.srv.URL+"/v1/", "test-key")
	p.Caps.API = llm.ChatCompletions
	p.Caps.ToolCalling = true
	return &stewardConversation{s: s, l: loop.New(loop.Options{}), tools: stewardTools(), p: p, tr: &llm.Transport{Client: s.srv.Client()}}
}

func (c *stewardConversation) run(ctx context.Context) (loop.Result, string, error) {
	c.s.reset()
	req := llm.Request{Model: "test-model", System: systemPrompt, Messages: []llm.Message{{Role: llm.RoleUser, Text: userPrompt}}, Tools: loop.ToolSpecs(c.tools)}
	a := chatcompletions.New(c.p, req, c.tr)
	var streamed strings.Builder
	sink := loop.SinkFunc(func(e loop.Event) {
		if e.Type == loop.EventText {
			streamed.WriteString(e.Text)
		}
	})
	res, err := c.l.Run(ctx, a, loop.RunContext{Tools: c.tools, Chat: &chat.Thread{}, ProviderName: "OpenAI"}, sink)
	return res, streamed.String(), err
}

func (c *stewardConversation) check(tb testing.TB, ctx context.Context) {
	tb.Helper()
	res, streamed, err := c.run(ctx)
	switch {
	case err != nil:
		tb.Fatalf("steward: %v", err)
	case res.Rounds != convRounds || res.Calls != convCalls || c.s.served() != convRounds:
		tb.Fatalf("steward: %d rounds, %d calls, %d requests; want %d, %d, %d", res.Rounds, res.Calls, c.s.served(), convRounds, convCalls, convRounds)
	case !strings.HasSuffix(res.Text, finalText) || !strings.HasSuffix(streamed, finalText):
		tb.Fatalf("steward: answer %q, streamed %q; want it to end with %q", res.Text, streamed, finalText)
	}
	for i, tr := range res.Traces {
		if tr.Status != loop.StatusSuccess {
			tb.Fatalf("steward: call %d ended %s", i, tr.Status)
		}
	}
	// The last request carries the nine results.
	if n := bytes.Count(c.s.lastRequest, []byte(`"role":"tool"`)); n != convCalls {
		tb.Fatalf("steward: the last request carries %d tool results, want %d", n, convCalls)
	}
}

// fantasyConversation runs the same conversation through fantasy's agent
// with its OpenAI (Chat Completions) provider.
type fantasyConversation struct {
	s     *scriptServer
	agent fantasy.Agent
	runs  *int
}

type weatherInput struct {
	City string `json:"city" description:"The city"`
}

func newFantasyConversation(tb testing.TB, s *scriptServer) *fantasyConversation {
	prov, err := fantasyopenai.New(fantasyopenai.WithBaseURL(s.srv.URL+"/v1"), fantasyopenai.WithAPIKey("test-key"), fantasyopenai.WithHTTPClient(s.srv.Client()))
	if err != nil {
		tb.Fatal(err)
	}
	model, err := prov.LanguageModel(context.Background(), "test-model")
	if err != nil {
		tb.Fatal(err)
	}
	runs := new(int)
	weather := fantasy.NewAgentTool(toolName, "Gives the current weather of a city.", func(_ context.Context, in weatherInput, _ fantasy.ToolCall) (fantasy.ToolResponse, error) {
		if in.City != "Bern" {
			return fantasy.ToolResponse{}, fmt.Errorf("unexpected city %q", in.City)
		}
		*runs++
		return fantasy.NewTextResponse(toolResult), nil
	})
	agent := fantasy.NewAgent(model, fantasy.WithSystemPrompt(systemPrompt), fantasy.WithTools(weather))
	return &fantasyConversation{s: s, agent: agent, runs: runs}
}

func (c *fantasyConversation) run(ctx context.Context) (*fantasy.AgentResult, string, error) {
	c.s.reset()
	var streamed strings.Builder
	res, err := c.agent.Stream(ctx, fantasy.AgentStreamCall{
		Prompt: userPrompt,
		OnTextDelta: func(_, text string) error {
			streamed.WriteString(text)
			return nil
		},
	})
	return res, streamed.String(), err
}

func (c *fantasyConversation) check(tb testing.TB, ctx context.Context) {
	tb.Helper()
	*c.runs = 0
	res, streamed, err := c.run(ctx)
	if err != nil {
		tb.Fatalf("fantasy: %v", err)
	}
	calls, results := 0, 0
	for _, st := range res.Steps {
		calls += len(st.Content.ToolCalls())
		for _, r := range st.Content.ToolResults() {
			if _, isErr := r.Result.(fantasy.ToolResultOutputContentError); isErr {
				tb.Fatalf("fantasy: tool call %s failed", r.ToolCallID)
			}
			results++
		}
	}
	switch {
	case len(res.Steps) != convRounds || calls != convCalls || results != convCalls || *c.runs != convCalls || c.s.served() != convRounds:
		tb.Fatalf("fantasy: %d steps, %d calls, %d results, %d runs, %d requests; want %d, %d, %d, %d, %d", len(res.Steps), calls, results, *c.runs, c.s.served(), convRounds, convCalls, convCalls, convCalls, convRounds)
	case res.Response.Content.Text() != finalText || !strings.HasSuffix(streamed, finalText):
		tb.Fatalf("fantasy: answer %q, streamed %q; want %q", res.Response.Content.Text(), streamed, finalText)
	}
	if n := bytes.Count(c.s.lastRequest, []byte(`"role":"tool"`)); n != convCalls {
		tb.Fatalf("fantasy: the last request carries %d tool results, want %d", n, convCalls)
	}
}

// floorConversation sends ten plain requests and reads the ten scripted
// answers: the HTTP and server cost both loops pay, with no loop at all.
func floorConversation(ctx context.Context, s *scriptServer, client *http.Client, body []byte) error {
	s.reset()
	for range convRounds {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.srv.URL+"/v1/chat/completions", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// TestLoopsAgree runs the scripted conversation once through each loop and
// checks that both ran nine calls and got the final text.
func TestLoopsAgree(t *testing.T) {
	ctx := context.Background()
	newStewardConversation(newScriptServer(t)).check(t, ctx)
	newFantasyConversation(t, newScriptServer(t)).check(t, ctx)
}

// BenchmarkLoop10Rounds runs the scripted ten-round conversation through
// Steward's loop and through fantasy's agent, side by side in one process.
// ns/round is ns/op divided by ten. "floor" is ten bare HTTP round trips to
// the same server: subtract it to see the loops' own cost.
func BenchmarkLoop10Rounds(b *testing.B) {
	ctx := context.Background()
	b.Run("impl=floor", func(b *testing.B) {
		s := newScriptServer(b)
		client := s.srv.Client()
		body := []byte(`{"model":"test-model","stream":true,"messages":[{"role":"user","content":"What is the weather in Bern?"}]}`)
		b.ReportAllocs()
		for b.Loop() {
			if err := floorConversation(ctx, s, client, body); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/convRounds, "ns/round")
	})
	b.Run("impl=steward", func(b *testing.B) {
		c := newStewardConversation(newScriptServer(b))
		c.check(b, ctx)
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			res, _, err := c.run(ctx)
			if err != nil || res.Calls != convCalls {
				b.Fatalf("run: %v after %d calls", err, res.Calls)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/convRounds, "ns/round")
	})
	b.Run("impl=fantasy", func(b *testing.B) {
		c := newFantasyConversation(b, newScriptServer(b))
		c.check(b, ctx)
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			res, _, err := c.run(ctx)
			if err != nil || len(res.Steps) != convRounds {
				b.Fatalf("run: %v", err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/convRounds, "ns/round")
	})
}
