package responses

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"github.com/stewardhq/steward/internal/llmtest"
	"github.com/stewardhq/steward/internal/testenv"
	"github.com/stewardhq/steward/llm"
)

var update = flag.Bool("update", false, "rewrite the golden request files")

// requestSchema is CreateResponse from OpenAI's published
// OpenAPI document, $refs resolved within the document. The document uses
// the 2019-09 keywords $recursiveAnchor/$recursiveRef in two filter
// schemas, which draft 2020-12 does not know; they are rewritten to the
// equivalent plain $ref to the schema itself.
var requestSchema = &llmtest.Schema{
	Name:     "CreateResponse",
	Resource: "openai-openapi.json",
	Load: func(t testing.TB) (any, string, error) {
		path := filepath.Join(testenv.SharedDir(t), "peers", "specs", "openai-openapi.yaml")
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, "", err
		}
		var doc any
		if err := yaml.Unmarshal(b, &doc); err != nil {
			return nil, "", err
		}
		replaceRecursiveRefs(doc)
		j, err := json.Marshal(doc)
		if err != nil {
			return nil, "", err
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
		return v, "#/components/schemas/CreateResponse", err
	},
}

func replaceRecursiveRefs(doc any) {
	schemas := doc.(map[string]any)["components"].(map[string]any)["schemas"].(map[string]any)
	for name, s := range schemas {
		sm, ok := s.(map[string]any)
		if !ok || sm["$recursiveAnchor"] != true {
			continue
		}
		delete(sm, "$recursiveAnchor")
		var walk func(v any)
		walk = func(v any) {
			switch x := v.(type) {
			case map[string]any:
				if r, ok := x["$recursiveRef"]; ok && r == "#" {
					delete(x, "$recursiveRef")
					x["$ref"] = "#/components/schemas/" + name
				}
				for _, c := range x {
					walk(c)
				}
			case []any:
				for _, c := range x {
					walk(c)
				}
			}
		}
		walk(sm)
	}
}

// The validator must be able to say no, or its yes means nothing.
func TestSchemaRejectsBadBodies(t *testing.T) {
	for _, body := range []string{
		`{"model":"gpt-4o","input":"hi","stream":"yes"}`,
		`{"model":"gpt-4o","input":"hi","store":"no"}`,
		`{"model":"gpt-4o","input":"hi","include":["not.a.thing"]}`,
		`{"model":"gpt-4o","input":"hi","tools":[{"type":"function","function":{"name":"x"}}]}`,
	} {
		if err := requestSchema.Validate(t, []byte(body)); err == nil {
			t.Errorf("CreateResponse accepted %s", body)
		}
	}
}

// answer streams a response whose output are items (JSON objects); text
// items also stream their text as deltas.
func answer(items ...string) string {
	var evs []string
	evs = append(evs, `{"type":"response.created","response":{"id":"resp_1","status":"in_progress","output":[]}}`)
	for i, it := range items {
		var m struct {
			Type    string `json:"type"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		json.Unmarshal([]byte(it), &m)
		if m.Type == "message" {
			for _, c := range m.Content {
				d, _ := json.Marshal(c.Text)
				evs = append(evs, fmt.Sprintf(`{"type":"response.output_text.delta","output_index":%d,"delta":%s}`, i, d))
			}
		}
		evs = append(evs, fmt.Sprintf(`{"type":"response.output_item.done","output_index":%d,"item":%s}`, i, it))
	}
	evs = append(evs, fmt.Sprintf(`{"type":"response.completed","response":{"id":"resp_1","status":"completed","output":[%s],"usage":{"input_tokens":10,"output_tokens":5,"input_tokens_details":{"cached_tokens":2},"output_tokens_details":{"reasoning_tokens":3}}}}`, strings.Join(items, ",")))
	return llmtest.SSE(evs...)
}

const (
	reasoningItem = `{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Thinking about the weather."}],"encrypted_content":"gAAAAB_opaque+/="}`
	callWeather   = `{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"weather","arguments":"{\"city\":\"Florence\"}"}`
	callTime      = `{"id":"fc_2","type":"function_call","status":"completed","call_id":"call_2","name":"local_time","arguments":"{\"city\":\"Florence\"}"}`
	textItem      = `{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"It is sunny.","annotations":[]}]}`
)

func scenarioRequest(model string) llm.Request {
	return llm.Request{
		Model:    model,
		System:   "You are a helpful assistant.",
		Messages: []llm.Message{{Role: llm.RoleUser, Text: "Hello"}, {Role: llm.RoleAssistant, Text: "Hi, how can I help?"}, {Role: llm.RoleUser, Text: "Weather and time in Florence?"}},
		Tools: []llm.ToolSpec{
			{Name: "weather", Description: "Current weather of a city.", Strict: true,
				Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"The city."},"unit":{"type":"string","description":"Unit.","enum":["C","F"]}},"required":["city"],"additionalProperties":false}`)},
			{Name: "local_time", Description: "Local time of a city.",
				Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
		},
		Extra: map[string]any{"temperature": 0.2, "model": "overridden", "stream": false, "store": true, "parallel_tool_calls": true, "tools": []any{}},
	}
}

type scenario struct {
	name string
	// answers are the output items of each answer.
	answers [][]string
	// results per call: content and error flag.
	isError bool
	// final: the second round runs without tools, with a final
	// instruction.
	final bool
}

var scenarios = []scenario{
	{name: "first_call_with_tools", answers: [][]string{{callWeather}}},
	{name: "follow_up_with_results", answers: [][]string{{callWeather}, {textItem}}},
	{name: "parallel_calls", answers: [][]string{{callWeather, callTime}, {textItem}}},
	{name: "error_results", answers: [][]string{{callWeather}, {textItem}}, isError: true},
	{name: "no_tools", answers: [][]string{{callWeather}, {textItem}}, final: true},
}

var hosts = []struct {
	name  string
	model string
	caps  llm.Capabilities
}{
	{"openai-gpt-4o", "gpt-4o", llm.Capabilities{API: llm.Responses, EnforcesStrictToolSchemas: true, ToolCalling: true}},
	{"openai-gpt-5", "gpt-5", llm.Capabilities{API: llm.Responses, EnforcesStrictToolSchemas: true, ToolCalling: true, Reasoning: llm.ReasoningResponsesItems}},
}

// runScenario drives the adapter through a scenario against a scripted
// loopback server and returns the last request it sent.
func runScenario(t *testing.T, sc scenario, model string, caps llm.Capabilities) []byte {
	t.Helper()
	var exs []llmtest.Exchange
	for i, items := range sc.answers {
		if i == 0 && caps.Reasoning == llm.ReasoningResponsesItems {
			// A reasoning model thinks before it calls.
			items = append([]string{reasoningItem}, items...)
		}
		exs = append(exs, llmtest.Exchange{Status: 200, ContentType: "text/event-stream", Body: []byte(answer(items...))})
	}
	srv := llmtest.NewReplayServer(t, exs)
	p := llm.Provider{Kind: "openai", BaseURL: srv.URL + "/v1/", APIKey: "k", Model: "ignored", Caps: caps}
	a := New(p, scenarioRequest(model), llmtest.LoopbackTransport(t))
	ctx := context.Background()
	round, err := a.Round(ctx, llm.RoundOptions{IncludeTools: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.answers) == 1 {
		return srv.Body(0)
	}
	a.RecordAssistantTurn()
	for _, c := range round.Calls {
		content := "Sunny, 24 °C <b>&</b>"
		if sc.isError {
			content = "Tool execution failed: the weather service answered 503."
		}
		a.RecordToolResult(c.ID, content, sc.isError)
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
// for every host, validates it against CreateResponse and compares it with
// its golden file (go test -run Golden -update rewrites them).
func TestRequestsValidateAndMatchGolden(t *testing.T) {
	for _, h := range hosts {
		for _, sc := range scenarios {
			t.Run(h.name+"/"+sc.name, func(t *testing.T) {
				body := runScenario(t, sc, h.model, h.caps)
				llmtest.CheckRequest(t, requestSchema, body, filepath.Join("testdata", "golden", h.name, sc.name+".json"), *update)
			})
		}
	}
}
