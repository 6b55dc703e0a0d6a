package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"testing"

	anthropicsdk "github.com/anthropics/anthropic-sdk-go/v2"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	openaioption "github.com/openai/openai-go/v3/option"
	openairesponses "github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/stewardhq/steward/llm"
	"github.com/stewardhq/steward/llm/anthropic"
	"github.com/stewardhq/steward/llm/chatcompletions"
	"github.com/stewardhq/steward/llm/responses"
)

// The decoders are given a loopback base URL, but no connection is ever
// made: an in-memory transport answers every request with the recording.
const (
	baseURL      = "http://127.0.0.1:9/v1/"
	systemPrompt = "You are helpful."
	userPrompt   = "What is the weather in Florence?"
)

// The request both sides send: one user message and one tool. The recorded
// answer does not depend on it; building and sending it is part of a round
// on both sides.
var (
	toolName    = "weather"
	toolDesc    = "Gives the current weather of a city."
	toolSchema  = json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`)
	toolProps   = map[string]any{"location": map[string]any{"type": "string"}}
	toolReqired = []string{"location"}
)

// memTransport answers every request with the same recorded body, like a
// server would, without any connection.
type memTransport struct{ body []byte }

func (m *memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	return &http.Response{
		Status:        "200 OK",
		StatusCode:    http.StatusOK,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"text/event-stream"}},
		Body:          io.NopCloser(bytes.NewReader(m.body)),
		ContentLength: int64(len(m.body)),
		Request:       r,
	}, nil
}

// decoded is what a decoder made of one stream: the text (also streamed to
// the callback as it arrived) and the tool calls.
type decoded struct {
	Text     string
	Streamed string
	Calls    []decodedCall
}

type decodedCall struct {
	ID, Name string
	Args     any // arguments parsed as JSON, so spacing does not count
}

func parseArgs(s string) any {
	if strings.TrimSpace(s) == "" {
		s = "{}"
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return "invalid JSON: " + s
	}
	return v
}

// decoder decodes one recorded stream per call of decode.
type decoder interface {
	decode(ctx context.Context, onText func(string)) (decoded, error)
}

// --- Steward ---

type stewardCC struct {
	p   llm.Provider
	req llm.Request
	tr  *llm.Transport
}

func newStewardCC(body []byte) *stewardCC {
	p := llm.KindOpenAI.Provider("test-model", baseURL, "test-key")
	p.Caps.API = llm.ChatCompletions
	p.Caps.ToolCalling = true
	req := llm.Request{Model: "test-model", System: systemPrompt, Messages: []llm.Message{{Role: llm.RoleUser, Text: userPrompt}},
		Tools: []llm.ToolSpec{{Name: toolName, Description: toolDesc, Parameters: toolSchema}}}
	return &stewardCC{p: p, req: req, tr: &llm.Transport{Client: &http.Client{Transport: &memTransport{body: body}}, MaxAttempts: 1}}
}

func (s *stewardCC) decode(ctx context.Context, onText func(string)) (decoded, error) {
	return stewardRound(ctx, chatcompletions.New(s.p, s.req, s.tr), onText)
}

type stewardAnthropic struct {
	p   llm.Provider
	req llm.Request
	tr  *llm.Transport
}

func newStewardAnthropic(body []byte) *stewardAnthropic {
	p := llm.KindAnthropic.Provider("claude-sonnet-4", baseURL, "test-key")
	p.Caps.ToolCalling = true
	req := llm.Request{Model: "claude-sonnet-4", System: systemPrompt, Messages: []llm.Message{{Role: llm.RoleUser, Text: userPrompt}},
		Tools: []llm.ToolSpec{{Name: toolName, Description: toolDesc, Parameters: toolSchema}}}
	return &stewardAnthropic{p: p, req: req, tr: &llm.Transport{Client: &http.Client{Transport: &memTransport{body: body}}, MaxAttempts: 1}}
}

func (s *stewardAnthropic) decode(ctx context.Context, onText func(string)) (decoded, error) {
	return stewardRound(ctx, anthropic.New(s.p, s.req, s.tr), onText)
}

func stewardRound(ctx context.Context, a llm.Adapter, onText func(string)) (decoded, error) {
	r, err := a.Round(ctx, llm.RoundOptions{IncludeTools: true}, onText)
	if err != nil {
		return decoded{}, err
	}
	d := decoded{Text: r.Text}
	for _, c := range r.Calls {
		d.Calls = append(d.Calls, decodedCall{ID: c.ID, Name: c.Name, Args: parseArgs(string(c.Arguments))})
	}
	return d, nil
}

type stewardResponses struct {
	p   llm.Provider
	req llm.Request
	tr  *llm.Transport
}

func newStewardResponses(body []byte) *stewardResponses {
	p := llm.KindOpenAI.Provider("gpt-4o", baseURL, "test-key")
	p.Caps.API = llm.Responses
	p.Caps.ToolCalling = true
	req := llm.Request{Model: "gpt-4o", System: systemPrompt, Messages: []llm.Message{{Role: llm.RoleUser, Text: userPrompt}},
		Tools: []llm.ToolSpec{{Name: toolName, Description: toolDesc, Parameters: toolSchema}}}
	return &stewardResponses{p: p, req: req, tr: &llm.Transport{Client: &http.Client{Transport: &memTransport{body: body}}, MaxAttempts: 1}}
}

func (s *stewardResponses) decode(ctx context.Context, onText func(string)) (decoded, error) {
	return stewardRound(ctx, responses.NewWithOptions(s.p, s.req, s.tr, responses.Options{Logger: quiet}), onText)
}

// quiet drops the adapters' warnings (a reasoning item without encrypted
// content is left out of the next request, and says so on every round).
var quiet = slog.New(slog.DiscardHandler)

// --- openai-go: ssestream + ChatCompletionAccumulator ---

type openaiCC struct {
	client openai.Client
	params openai.ChatCompletionNewParams
}

func newOpenAICC(body []byte) *openaiCC {
	client := openai.NewClient(openaioption.WithBaseURL(baseURL), openaioption.WithAPIKey("test-key"), openaioption.WithMaxRetries(0),
		openaioption.WithHTTPClient(&http.Client{Transport: &memTransport{body: body}}))
	params := openai.ChatCompletionNewParams{
		Model:    "test-model",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(systemPrompt), openai.UserMessage(userPrompt)},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: toolName, Description: openai.String(toolDesc), Parameters: shared.FunctionParameters{"type": "object", "properties": toolProps, "required": toolReqired},
		})},
		ParallelToolCalls: openai.Bool(false),
		StreamOptions:     openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	return &openaiCC{client: client, params: params}
}

func (o *openaiCC) decode(ctx context.Context, onText func(string)) (decoded, error) {
	st := o.client.Chat.Completions.NewStreaming(ctx, o.params)
	defer st.Close()
	var acc openai.ChatCompletionAccumulator
	for st.Next() {
		ch := st.Current()
		acc.AddChunk(ch)
		for _, c := range ch.Choices {
			if c.Index == 0 && c.Delta.Content != "" {
				onText(c.Delta.Content)
			}
		}
	}
	if err := st.Err(); err != nil {
		return decoded{}, err
	}
	var d decoded
	if len(acc.Choices) == 0 {
		return d, fmt.Errorf("openai-go: no choice accumulated")
	}
	m := acc.Choices[0].Message
	d.Text = m.Content
	for _, tc := range m.ToolCalls {
		d.Calls = append(d.Calls, decodedCall{ID: tc.ID, Name: tc.Function.Name, Args: parseArgs(tc.Function.Arguments)})
	}
	return d, nil
}

// --- openai-go Responses: ssestream of ResponseStreamEventUnion ---
//
// openai-go has no accumulator for Responses streams; text is collected
// from response.output_text.delta events and calls from the function_call
// items of response.output_item.done events, as its streaming examples do.

type openaiResponses struct {
	client openai.Client
	params openairesponses.ResponseNewParams
}

func newOpenAIResponses(body []byte) *openaiResponses {
	client := openai.NewClient(openaioption.WithBaseURL(baseURL), openaioption.WithAPIKey("test-key"), openaioption.WithMaxRetries(0),
		openaioption.WithHTTPClient(&http.Client{Transport: &memTransport{body: body}}))
	fn := openairesponses.ToolParamOfFunction(toolName, map[string]any{"type": "object", "properties": toolProps, "required": toolReqired}, false)
	fn.OfFunction.Description = openai.String(toolDesc)
	params := openairesponses.ResponseNewParams{
		Model:             "gpt-4o",
		Instructions:      openai.String(systemPrompt),
		Input:             openairesponses.ResponseNewParamsInputUnion{OfString: openai.String(userPrompt)},
		Tools:             []openairesponses.ToolUnionParam{fn},
		ParallelToolCalls: openai.Bool(false),
		Store:             openai.Bool(false),
	}
	return &openaiResponses{client: client, params: params}
}

func (o *openaiResponses) decode(ctx context.Context, onText func(string)) (decoded, error) {
	st := o.client.Responses.NewStreaming(ctx, o.params)
	defer st.Close()
	var d decoded
	var text strings.Builder
	completed := false
	for st.Next() {
		ev := st.Current()
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
			onText(ev.Delta)
		case "response.output_item.done":
			if ev.Item.Type == "function_call" {
				d.Calls = append(d.Calls, decodedCall{ID: ev.Item.CallID, Name: ev.Item.Name, Args: parseArgs(ev.Item.Arguments.OfString)})
			}
		case "response.completed":
			completed = true
		case "response.failed", "error":
			return decoded{}, fmt.Errorf("openai-go: the stream reported %s", ev.Type)
		}
	}
	if err := st.Err(); err != nil {
		return decoded{}, err
	}
	if !completed {
		return decoded{}, fmt.Errorf("openai-go: the stream ended without response.completed")
	}
	d.Text = text.String()
	return d, nil
}

// --- anthropic-sdk-go: ssestream + Message.Accumulate ---

type anthropicSDK struct {
	client anthropicsdk.Client
	params anthropicsdk.MessageNewParams
}

func newAnthropicSDK(body []byte) *anthropicSDK {
	client := anthropicsdk.NewClient(anthropicoption.WithBaseURL(strings.TrimSuffix(baseURL, "v1/")), anthropicoption.WithAPIKey("test-key"), anthropicoption.WithMaxRetries(0),
		anthropicoption.WithHTTPClient(&http.Client{Transport: &memTransport{body: body}}))
	params := anthropicsdk.MessageNewParams{
		Model:     "claude-sonnet-4",
		MaxTokens: 4096,
		System:    []anthropicsdk.TextBlockParam{{Text: systemPrompt}},
		Messages:  []anthropicsdk.MessageParam{anthropicsdk.NewUserMessage(anthropicsdk.NewTextBlock(userPrompt))},
		Tools: []anthropicsdk.ToolUnionParam{{OfTool: &anthropicsdk.ToolParam{
			Name: toolName, Description: anthropicsdk.String(toolDesc),
			InputSchema: anthropicsdk.ToolInputSchemaParam{Properties: toolProps, Required: toolReqired},
		}}},
	}
	return &anthropicSDK{client: client, params: params}
}

func (a *anthropicSDK) decode(ctx context.Context, onText func(string)) (decoded, error) {
	st := a.client.Messages.NewStreaming(ctx, a.params)
	defer st.Close()
	var msg anthropicsdk.Message
	for st.Next() {
		ev := st.Current()
		if err := msg.Accumulate(ev); err != nil {
			return decoded{}, err
		}
		if ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" {
			onText(ev.Delta.Text)
		}
	}
	if err := st.Err(); err != nil {
		return decoded{}, err
	}
	var d decoded
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			d.Text += b.Text
		case "tool_use":
			d.Calls = append(d.Calls, decodedCall{ID: b.ID, Name: b.Name, Args: parseArgs(string(b.Input))})
		}
	}
	return d, nil
}

// --- cases ---

// pair is one recording with the two decoders compared on it.
type pair struct {
	name             string
	size             int
	steward, sdk     decoder
	sdkName, skipped string
}

func pairs(tb testing.TB, api string) []pair {
	var out []pair
	for _, s := range streams(tb, api) {
		p := pair{name: s.Name, size: len(s.Body)}
		switch api {
		case "chat-completions":
			p.steward, p.sdk, p.sdkName = newStewardCC(s.Body), newOpenAICC(s.Body), "openai-go"
		case "anthropic-messages":
			p.steward, p.sdk, p.sdkName = newStewardAnthropic(s.Body), newAnthropicSDK(s.Body), "anthropic-sdk-go"
		case "responses":
			p.steward, p.sdk, p.sdkName = newStewardResponses(s.Body), newOpenAIResponses(s.Body), "openai-go"
		}
		out = append(out, p)
	}
	return out
}

func run(ctx context.Context, d decoder) (decoded, error) {
	var sb strings.Builder
	r, err := d.decode(ctx, func(s string) { sb.WriteString(s) })
	r.Streamed = sb.String()
	return r, err
}

// agree decodes the recording with both decoders and checks that they came
// to the same text and calls and that the text streamed equals the text
// returned. A recording that either decoder refuses (an error inside the
// stream) is marked skipped: there is nothing alike to compare.
func (p *pair) agree(tb testing.TB) {
	tb.Helper()
	ctx := context.Background()
	st, errS := run(ctx, p.steward)
	sdk, errK := run(ctx, p.sdk)
	switch {
	case errS != nil || errK != nil:
		p.skipped = fmt.Sprintf("steward: %v; %s: %v", errS, p.sdkName, errK)
		return
	case st.Text != sdk.Text:
		tb.Errorf("%s: steward's text %q, %s's %q", p.name, st.Text, p.sdkName, sdk.Text)
	case st.Streamed != st.Text || sdk.Streamed != sdk.Text:
		tb.Errorf("%s: streamed text differs from the result (steward %q/%q, %s %q/%q)", p.name, st.Streamed, st.Text, p.sdkName, sdk.Streamed, sdk.Text)
	case !reflect.DeepEqual(st.Calls, sdk.Calls):
		tb.Errorf("%s: steward's calls %+v, %s's %+v", p.name, st.Calls, p.sdkName, sdk.Calls)
	}
}

// TestDecodersAgree checks, for every streamed recording, that Steward's
// adapter and the SDK's decoder come to the same text and tool calls, so
// the benchmarks compare like with like.
func TestDecodersAgree(t *testing.T) {
	for _, api := range []string{"chat-completions", "anthropic-messages", "responses"} {
		compared := 0
		for _, p := range pairs(t, api) {
			p.agree(t)
			if p.skipped != "" {
				t.Logf("%s %s: not compared, a decoder refused it: %s", api, p.name, p.skipped)
				continue
			}
			compared++
		}
		t.Logf("%s: %d streamed recordings decoded alike", api, compared)
		if compared == 0 {
			t.Errorf("%s: no recording both decoders read", api)
		}
	}
}

// benchDecode benchmarks both decoders on every recording of api that both
// read, and on all of them in a row ("all", the headline figure).
func benchDecode(b *testing.B, api string) {
	var ok []pair
	total := 0
	for _, p := range pairs(b, api) {
		p.agree(b)
		if p.skipped == "" {
			ok = append(ok, p)
			total += p.size
		}
	}
	if b.Failed() {
		b.FailNow()
	}
	ctx := context.Background()
	discard := func(string) {}
	one := func(d decoder) error {
		_, err := d.decode(ctx, discard)
		return err
	}
	for _, impl := range []string{"steward", "sdk"} {
		pick := func(p pair) decoder {
			if impl == "steward" {
				return p.steward
			}
			return p.sdk
		}
		b.Run("rec=all/impl="+impl, func(b *testing.B) {
			b.SetBytes(int64(total))
			b.ReportAllocs()
			for b.Loop() {
				for _, p := range ok {
					if err := one(pick(p)); err != nil {
						b.Fatalf("%s: %v", p.name, err)
					}
				}
			}
		})
	}
	for _, p := range ok {
		name := shortName(p.name)
		for _, impl := range []string{"steward", "sdk"} {
			d := p.steward
			if impl == "sdk" {
				d = p.sdk
			}
			b.Run("rec="+name+"/impl="+impl, func(b *testing.B) {
				b.SetBytes(int64(p.size))
				b.ReportAllocs()
				for b.Loop() {
					if err := one(d); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkDecodeChatCompletions compares Steward's Chat Completions adapter
// round with openai-go's NewStreaming and ChatCompletionAccumulator on the
// recorded streams. impl=sdk is openai-go.
func BenchmarkDecodeChatCompletions(b *testing.B) { benchDecode(b, "chat-completions") }

// BenchmarkDecodeAnthropic compares Steward's Anthropic Messages adapter
// round with anthropic-sdk-go's NewStreaming and Message.Accumulate on the
// recorded streams. impl=sdk is anthropic-sdk-go.
func BenchmarkDecodeAnthropic(b *testing.B) { benchDecode(b, "anthropic-messages") }

// shortName names a recording in benchmark output by its source, its
// folder and its file: "fantasy.openai-gpt-4o.tool_streaming_1".
func shortName(path string) string {
	parts := strings.Split(path, "/")
	if len(parts) > 3 {
		parts = []string{parts[0], parts[len(parts)-2], parts[len(parts)-1]}
	}
	return strings.NewReplacer("#", "_", ".chunks.txt", "", ".yaml", "").Replace(strings.Join(parts, "."))
}

// BenchmarkDecodeResponses compares Steward's Responses adapter round with
// openai-go's Responses NewStreaming on the recorded streams, the SDK side
// collecting text deltas and finished function_call items. impl=sdk is
// openai-go.
func BenchmarkDecodeResponses(b *testing.B) { benchDecode(b, "responses") }
