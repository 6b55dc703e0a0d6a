package anthropic

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/stewardhq/steward/internal/llmtest"
	"github.com/stewardhq/steward/internal/testenv"
	"github.com/stewardhq/steward/llm"
)

var update = flag.Bool("update", false, "rewrite the golden request files")

// requestSchema is CreateMessageParams, the body of POST /v1/messages,
// from the Anthropic OpenAPI document, $refs resolved within the document.
var requestSchema = &llmtest.Schema{
	Name:     "CreateMessageParams",
	Resource: "anthropic-openapi.json",
	Load: func(t testing.TB) (any, string, error) {
		path := filepath.Join(testenv.SharedDir(t), "peers", "specs", "anthropic-openapi.json")
		f, err := os.Open(path)
		if err != nil {
			return nil, "", err
		}
		defer f.Close()
		v, err := jsonschema.UnmarshalJSON(f)
		return v, "#/components/schemas/CreateMessageParams", err
	},
}

// The validator must be able to say no, or its yes means nothing.
func TestSchemaRejectsBadBodies(t *testing.T) {
	for _, body := range []string{
		`{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"stream":"yes"}`,
		`{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":[{"type":"tool_result"}]}]}`,
		`{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"x"}}]}`,
		`{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"t"}]}]}`,
	} {
		if err := requestSchema.Validate(t, []byte(body)); err == nil {
			t.Errorf("CreateMessageParams accepted %s", body)
		}
	}
}

// answer streams a message of the given blocks the way Anthropic does:
// text and thinking as deltas, tool input in fragments (the first one
// empty), redacted thinking whole in its start.
func answer(stopReason string, blocks ...string) string {
	evs := []string{`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":12,"cache_read_input_tokens":4,"output_tokens":1}}}`, `{"type":"ping"}`}
	for i, raw := range blocks {
		var b struct {
			Type      string          `json:"type"`
			Text      string          `json:"text"`
			Thinking  string          `json:"thinking"`
			Signature string          `json:"signature"`
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			Input     json.RawMessage `json:"input"`
		}
		json.Unmarshal([]byte(raw), &b)
		delta := func(d string) {
			evs = append(evs, fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":%s}`, i, d))
		}
		switch b.Type {
		case "text":
			evs = append(evs, fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, i))
			delta(`{"type":"text_delta","text":` + llmtest.JSONString(b.Text) + `}`)
		case "thinking":
			evs = append(evs, fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"thinking","thinking":"","signature":""}}`, i))
			delta(`{"type":"thinking_delta","thinking":` + llmtest.JSONString(b.Thinking) + `}`)
			delta(`{"type":"signature_delta","signature":` + llmtest.JSONString(b.Signature) + `}`)
		case "tool_use":
			evs = append(evs, fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%s,"name":%s,"input":{}}}`, i, llmtest.JSONString(b.ID), llmtest.JSONString(b.Name)))
			in := string(b.Input)
			delta(`{"type":"input_json_delta","partial_json":""}`)
			delta(`{"type":"input_json_delta","partial_json":` + llmtest.JSONString(in[:len(in)/2]) + `}`)
			delta(`{"type":"input_json_delta","partial_json":` + llmtest.JSONString(in[len(in)/2:]) + `}`)
		default:
			evs = append(evs, fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":%s}`, i, raw))
		}
		evs = append(evs, fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
	}
	evs = append(evs,
		`{"type":"message_delta","delta":{"stop_reason":`+llmtest.JSONString(stopReason)+`,"stop_sequence":null},"usage":{"output_tokens":30}}`,
		`{"type":"message_stop"}`)
	return llmtest.SSE(evs...)
}

const (
	thinkingBlock = `{"type":"thinking","thinking":"The user wants weather and time.","signature":"EqQBCkYIBRgCKkD+/=sig<&>"}`
	redactedBlock = `{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"}`
	textPreamble  = `{"type":"text","text":"Let me check."}`
	useWeather    = `{"type":"tool_use","id":"toolu_01","name":"weather","input":{"city":"Florence"}}`
	useTime       = `{"type":"tool_use","id":"toolu_02","name":"local_time","input":{"city":"Florence"}}`
	textAnswer    = `{"type":"text","text":"It is sunny."}`
)

func scenarioRequest(model string, thinking bool) llm.Request {
	req := llm.Request{
		Model:    model,
		System:   "You are a helpful assistant.",
		Messages: []llm.Message{{Role: llm.RoleUser, Text: "Hello"}, {Role: llm.RoleAssistant, Text: "Hi, how can I help?"}, {Role: llm.RoleUser, Text: "Weather and time in Florence?"}},
		Tools: []llm.ToolSpec{
			{Name: "weather", Description: "Current weather of a city.", Strict: true,
				Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"The city."},"unit":{"type":"string","description":"Unit.","enum":["C","F"]}},"required":["city"],"additionalProperties":false}`)},
			{Name: "local_time", Description: "Local time of a city.",
				Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
		},
		Extra: map[string]any{"temperature": 0.2, "model": "overridden", "stream": false, "system": "not this", "messages": []any{}, "tools": []any{}},
	}
	if thinking {
		req.MaxTokens = 8000
		req.Extra = map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 4000}}
	}
	return req
}

type scenario struct {
	name    string
	answers [][]string
	isError bool
	final   bool
}

var scenarios = []scenario{
	{name: "first_call_with_tools", answers: [][]string{{textPreamble, useWeather}}},
	{name: "follow_up_with_results", answers: [][]string{{textPreamble, useWeather}, {textAnswer}}},
	{name: "parallel_calls", answers: [][]string{{textPreamble, useWeather, useTime}, {textAnswer}}},
	{name: "error_results", answers: [][]string{{useWeather, useTime}, {textAnswer}}, isError: true},
	{name: "no_tools", answers: [][]string{{useWeather}, {textAnswer}}, final: true},
}

var hosts = []struct {
	name     string
	model    string
	thinking bool
}{
	{"anthropic-claude-sonnet-4-5", "claude-sonnet-4-5", false},
	{"anthropic-claude-sonnet-4-5-thinking", "claude-sonnet-4-5", true},
}

func runScenario(t *testing.T, sc scenario, model string, thinking bool) []byte {
	t.Helper()
	var exs []llmtest.Exchange
	for i, blocks := range sc.answers {
		stop := "end_turn"
		if i == 0 {
			stop = "tool_use"
			if thinking {
				blocks = append([]string{thinkingBlock, redactedBlock}, blocks...)
			}
		}
		exs = append(exs, llmtest.Exchange{Status: 200, ContentType: "text/event-stream", Body: []byte(answer(stop, blocks...))})
	}
	srv := llmtest.NewReplayServer(t, exs)
	p := llm.Provider{Kind: "anthropic", BaseURL: srv.URL + "/v1/", APIKey: "k", Model: "ignored",
		Caps: llm.Capabilities{API: llm.Messages, EnforcesStrictToolSchemas: true, ToolCalling: true, Reasoning: llm.ReasoningThinkingBlocks}}
	a := New(p, scenarioRequest(model, thinking), llmtest.LoopbackTransport(t))
	ctx := context.Background()
	round, err := a.Round(ctx, llm.RoundOptions{IncludeTools: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.answers) == 1 {
		return srv.Body(0)
	}
	a.RecordAssistantTurn()
	for i, c := range round.Calls {
		content, isErr := "Sunny, 24 °C <b>&</b>", false
		if sc.isError && i == 0 {
			content, isErr = "Tool execution failed: the weather service answered 503.", true
		}
		a.RecordToolResult(c.ID, content, isErr)
	}
	opts := llm.RoundOptions{IncludeTools: true}
	if sc.final {
		opts = llm.RoundOptions{FinalInstruction: "The maximum of 15 tool calls has been reached. Answer now.", IncludeTools: false}
	}
	if _, err := a.Round(ctx, opts, nil); err != nil {
		t.Fatal(err)
	}
	return srv.Body(1)
}

// TestRequestsValidateAndMatchGolden builds the request of every scenario
// for every host, validates it against CreateMessageParams and compares it
// with its golden file (go test -run Golden -update rewrites them).
func TestRequestsValidateAndMatchGolden(t *testing.T) {
	for _, h := range hosts {
		for _, sc := range scenarios {
			t.Run(h.name+"/"+sc.name, func(t *testing.T) {
				body := runScenario(t, sc, h.model, h.thinking)
				llmtest.CheckRequest(t, requestSchema, body, filepath.Join("testdata", "golden", h.name, sc.name+".json"), *update)
			})
		}
	}
}
