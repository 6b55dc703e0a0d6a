package chatcompletions

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"github.com/stewardhq/steward/internal/testenv"
	"github.com/stewardhq/steward/llm"
)

var quietLogger = slog.New(slog.DiscardHandler)

var update = flag.Bool("update", false, "rewrite the golden request files")

var (
	specOnce   sync.Once
	specSchema *jsonschema.Schema
	specErr    error
)

// chatRequestSchema compiles CreateChatCompletionRequest from OpenAI's
// published spec, with its $refs resolved inside the document.
func chatRequestSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	specOnce.Do(func() {
		path := filepath.Join(testenv.SharedDir(t), "peers", "specs", "openai-openapi.yaml")
		b, err := os.ReadFile(path)
		if err != nil {
			specErr = err
			return
		}
		var doc any
		if err := yaml.Unmarshal(b, &doc); err != nil {
			specErr = fmt.Errorf("parsing the spec: %w", err)
			return
		}
		// Keep only the schemas CreateChatCompletionRequest reaches, and
		// round-trip through JSON so the compiler sees JSON values only.
		pruned, err := reachableSchemas(normalizeYAML(doc), "CreateChatCompletionRequest")
		if err != nil {
			specErr = err
			return
		}
		j, err := json.Marshal(pruned)
		if err != nil {
			specErr = err
			return
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
		if err != nil {
			specErr = err
			return
		}
		c := jsonschema.NewCompiler()
		const url = "https://spec.invalid/openai-openapi.json"
		if err := c.AddResource(url, inst); err != nil {
			specErr = err
			return
		}
		specSchema, specErr = c.Compile(url + "#/components/schemas/CreateChatCompletionRequest")
	})
	if specErr != nil {
		t.Fatalf("compiling CreateChatCompletionRequest: %v", specErr)
	}
	return specSchema
}

// reachableSchemas returns a document holding the named schema and every
// schema its "#/components/schemas/…" references reach.
func reachableSchemas(doc any, root string) (any, error) {
	all, _ := doc.(map[string]any)["components"].(map[string]any)["schemas"].(map[string]any)
	if all == nil {
		return nil, fmt.Errorf("the spec has no components.schemas")
	}
	const prefix = "#/components/schemas/"
	keep := map[string]any{}
	todo := []string{root}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if ref, ok := e.(string); ok && k == "$ref" && strings.HasPrefix(ref, prefix) {
					todo = append(todo, strings.TrimPrefix(ref, prefix))
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	for len(todo) > 0 {
		name := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if _, done := keep[name]; done {
			continue
		}
		s, ok := all[name]
		if !ok {
			return nil, fmt.Errorf("the spec references a missing schema %q", name)
		}
		keep[name] = s
		walk(s)
	}
	return map[string]any{"components": map[string]any{"schemas": keep}}, nil
}

func validateRequest(t *testing.T, body []byte) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("request is not JSON: %v", err)
	}
	if err := chatRequestSchema(t).Validate(inst); err != nil {
		t.Errorf("request does not validate against CreateChatCompletionRequest: %v\n%s", err, body)
	}
}

// scenarioTools are two functions: weather with an optional argument (so
// strict conversion shows) and a no-argument clock.
var scenarioTools = []llm.ToolSpec{
	{
		Name: "weather", Description: "Current weather for a city.", Strict: true,
		Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"City name"},"unit":{"type":"string","description":"Temperature unit","enum":["celsius","fahrenheit"]}},"required":["city"],"additionalProperties":false}`),
	},
	{
		Name: "clock", Description: "The current time.", Strict: true,
		Parameters: json.RawMessage(`{"type":"object","properties":{},"required":[],"additionalProperties":false}`),
	},
}

func scenarioProviders() map[string]llm.Provider {
	openai := llm.KindOpenAI.Provider("gpt-4o", "", "k")
	return map[string]llm.Provider{
		"openai":      openai,
		"groq":        llm.KindGroq.Provider("moonshotai/kimi-k2-instruct", "", "k"),
		"huggingface": llm.KindHuggingFace.Provider("moonshotai/Kimi-K2-Instruct-0905:groq", "", "k"),
		"ollama":      llm.KindOllama.Provider("gpt-oss:20b", "", ""),
	}
}

// sse frames chunks as a Chat Completions stream.
func sse(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString("data: " + c + "\n\n")
	}
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// scriptServer answers every request with the next script entry.
func scriptServer(t *testing.T, script ...string) (*httptest.Server, *[][]byte) {
	t.Helper()
	var mu sync.Mutex
	var bodies [][]byte
	i := 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(r.Body)
		mu.Lock()
		bodies = append(bodies, buf.Bytes())
		n := i
		i++
		mu.Unlock()
		if n >= len(script) {
			http.Error(w, "script exhausted", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(script[n]))
	}))
	t.Cleanup(ts.Close)
	return ts, &bodies
}

func sequentialIDs() func() string {
	n := 0
	return func() string {
		n++
		return fmt.Sprintf("call_%032d", n)
	}
}

const (
	reasoningChunk = `{"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"The user wants the weather."}}]}`
	oneCallChunk   = `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_w1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Florence\"}"}}]}}]}`
	twoCallsChunk  = `{"choices":[{"index":0,"delta":{"content":"Checking both.","tool_calls":[{"index":0,"id":"call_w1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Florence\"}"}},{"index":1,"id":"call_c2","type":"function","function":{"name":"clock","arguments":""}}]}}]}`
	badCallsChunk  = `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"type":"function","function":{"name":"weather","arguments":"{\"city\":\"Rome\"}"}},{"index":1,"id":"call_b2","type":"function","function":{"name":"weather","arguments":"[1,2]"}},{"index":2,"id":"call_b3","type":"function","function":{"name":"get weather!","arguments":"{}"}}]}}]}`
	finishChunk    = `{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`
)

// scenario builds the request body of one scenario for one provider.
func scenario(t *testing.T, name string, p llm.Provider) []byte {
	t.Helper()
	req := llm.Request{
		System:   "You are Steward's test assistant.",
		Messages: []llm.Message{{Role: llm.RoleUser, Text: "How warm is it in Florence?"}},
		Tools:    scenarioTools,
		Extra:    map[string]any{"temperature": 0.2, "parallel_tool_calls": true, "stream": false},
	}
	var script []string
	switch name {
	case "first-with-tools", "no-tools":
	case "follow-up-with-results", "final-round":
		script = []string{sse(reasoningChunk, oneCallChunk, finishChunk)}
	case "parallel-calls":
		script = []string{sse(twoCallsChunk, finishChunk)}
	case "error-results":
		script = []string{sse(badCallsChunk, finishChunk)}
	default:
		t.Fatalf("unknown scenario %s", name)
	}
	if name == "no-tools" {
		req.Tools = nil
	}
	ts, _ := scriptServer(t, script...)
	p.BaseURL = ts.URL + "/v1/"
	a := NewWithOptions(p, req, &llm.Transport{Client: ts.Client(), MaxAttempts: 1}, Options{NewCallID: sequentialIDs(), Logger: quietLogger})
	ro := llm.RoundOptions{IncludeTools: true}
	if len(script) > 0 {
		round, err := a.Round(context.Background(), ro, nil)
		if err != nil {
			t.Fatal(err)
		}
		a.RecordAssistantTurn()
		for i, c := range round.Calls {
			switch {
			case !c.Valid:
				a.RecordToolResult(c.ID, "The tool call was invalid.", true)
			case name == "error-results":
				a.RecordToolResult(c.ID, "Tool execution failed: the weather service answered 503.", true)
			case i == 1:
				a.RecordToolResult(c.ID, `{"time":"14:05","zone":"Europe/Rome"}`, false)
			default:
				a.RecordToolResult(c.ID, `{"city":"Florence","celsius":31,"sky":"clear <sunny> & dry"}`, false)
			}
		}
	}
	if name == "final-round" {
		ro = llm.RoundOptions{IncludeTools: false, FinalInstruction: "The maximum of 15 tool calls has been reached. No more tools are available."}
	}
	body, err := a.BuildBody(ro)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

var scenarios = []string{"first-with-tools", "follow-up-with-results", "parallel-calls", "error-results", "no-tools", "final-round"}

// TestRequestsMatchGoldenAndSpec builds one request per scenario and host,
// validates it against OpenAI's CreateChatCompletionRequest and compares it
// with its golden file (go test -run Golden -update rewrites them).
func TestRequestsMatchGoldenAndSpec(t *testing.T) {
	validated := 0
	for host, p := range scenarioProviders() {
		for _, sc := range scenarios {
			t.Run(host+"/"+sc, func(t *testing.T) {
				body := scenario(t, sc, p)
				validateRequest(t, body)
				validated++
				var pretty bytes.Buffer
				if err := json.Indent(&pretty, body, "", "  "); err != nil {
					t.Fatal(err)
				}
				pretty.WriteByte('\n')
				golden := filepath.Join("testdata", "golden", host+"_"+sc+".json")
				if *update {
					if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, pretty.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run with -update to create it)", err)
				}
				if !bytes.Equal(want, pretty.Bytes()) {
					t.Errorf("request differs from %s:\n got %s\nwant %s", golden, pretty.Bytes(), want)
				}
			})
		}
	}
	t.Logf("%d request bodies validated against CreateChatCompletionRequest", validated)
}

// TestSpecValidatorHasTeeth makes sure the compiled schema rejects what the
// API rejects, so the validation above can fail.
func TestSpecValidatorHasTeeth(t *testing.T) {
	bad := []struct{ name, body string }{
		{"no messages", `{"model":"gpt-4o","messages":[]}`},
		{"unknown role", `{"model":"gpt-4o","messages":[{"role":"robot","content":"hi"}]}`},
		{"tool result without id", `{"model":"gpt-4o","messages":[{"role":"tool","content":"x"}]}`},
		{"function without name", `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"parameters":{}}}]}`},
		{"parallel flag as string", `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"parallel_tool_calls":"no"}`},
		{"call without arguments", `{"model":"gpt-4o","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f"}}]}]}`},
	}
	s := chatRequestSchema(t)
	for _, tc := range bad {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		if s.Validate(inst) == nil {
			t.Errorf("%s: the schema accepted %s", tc.name, tc.body)
		}
	}
	good := `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`
	inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(good))
	if err := s.Validate(inst); err != nil {
		t.Errorf("the schema rejected a minimal request: %v", err)
	}
}
