package chatcompletions

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/stewardhq/steward/llm"
	"github.com/stewardhq/steward/tool"
)

// DefaultIdleTimeout ends a round whose stream sent nothing for this long.
const DefaultIdleTimeout = 120 * time.Second

// InvalidToolName replaces a malformed function name when the call goes
// back in the history: vLLM rejects a whole request over one bad name.
const InvalidToolName = "invalid_tool_call"

// Options tune an adapter; the zero value is the default.
type Options struct {
	// IdleTimeout ends a round with an error when the provider sends
	// nothing for this long, waiting for the answer's headers included;
	// 0 means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// NewCallID supplies the ID of a call that came without one; nil means
	// "call_" + 32 random hex digits.
	NewCallID func() string
	// Logger receives warnings (reasons only, never content); nil means
	// slog.Default().
	Logger *slog.Logger
}

// Adapter speaks Chat Completions for one run.
type Adapter struct {
	p    llm.Provider
	req  llm.Request
	tr   *llm.Transport
	opts Options

	// names maps an offered function name to itself, for canonicalizing
	// names that came with stray whitespace.
	names map[string]string
	// history is the internal tool conversation, encoded.
	history []json.RawMessage
	texts   []string
	last    *turn
	// wireTools are the offered functions in wire shape, built once.
	wireTools []wireTool
}

// turn is what one round produced, kept until it is recorded.
type turn struct {
	text      string
	reasoning string // reasoning_content, else reasoning
	details   json.RawMessage
	calls     []wireCall
	recorded  bool
}

// wireCall is a call as it goes back in the history.
type wireCall struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	Function     wireCallFunc    `json:"function"`
	ExtraContent json.RawMessage `json:"extra_content,omitempty"`
}

type wireCallFunc struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

var _ llm.Adapter = (*Adapter)(nil)

// New returns a Chat Completions adapter for one run with default options.
func New(p llm.Provider, req llm.Request, tr *llm.Transport) llm.Adapter {
	return NewWithOptions(p, req, tr, Options{})
}

// NewWithOptions returns a Chat Completions adapter for one run.
func NewWithOptions(p llm.Provider, req llm.Request, tr *llm.Transport, o Options) *Adapter {
	if tr == nil {
		tr = &llm.Transport{}
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.NewCallID == nil {
		o.NewCallID = randomCallID
		if llm.Kind(p.Kind) == llm.KindMistral {
			// Mistral refuses tool call ids other than 9 characters of
			// a-z, A-Z, 0-9 ("Tool call id was … but must be a-z, A-Z,
			// 0-9, with a length of 9").
			o.NewCallID = randomMistralCallID
		}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	a := &Adapter{p: p, req: req, tr: tr, opts: o, names: map[string]string{}}
	for _, t := range req.Tools {
		a.names[t.Name] = t.Name
	}
	return a
}

func randomCallID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}

func randomMistralCallID() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var b [9]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:])
}

// reserved are the body keys the adapter sets itself; configured extra
// parameters cannot override them. tool_choice is reserved too: a forced
// choice would defeat the limits, and without tools it is a 400.
var reserved = map[string]bool{
	"model": true, "messages": true, "stream": true, "stream_options": true,
	"tools": true, "parallel_tool_calls": true, "tool_choice": true,
	"functions": true, "function_call": true, "n": true,
}

// sendsStreamOptions reports whether the host takes stream_options. Mistral
// and Perplexity do not document it, and Mistral refuses unknown fields.
func sendsStreamOptions(kind string) bool {
	switch llm.Kind(kind) {
	case llm.KindMistral, llm.KindPerplexity:
		return false
	}
	return true
}

// BuildBody returns the request body of the next round.
func (a *Adapter) BuildBody(opts llm.RoundOptions) ([]byte, error) {
	body := make(map[string]any, len(a.req.Extra)+8)
	for k, v := range a.req.Extra {
		if reserved[strings.ToLower(strings.TrimSpace(k))] {
			continue
		}
		body[k] = v
	}
	model := strings.TrimSpace(a.req.Model)
	if model == "" {
		model = strings.TrimSpace(a.p.Model)
	}
	if model == "" {
		return nil, fmt.Errorf("no model is set for provider %q: name one in the configuration or with --model", a.p.ID)
	}
	body["model"] = model
	body["stream"] = true
	if sendsStreamOptions(a.p.Kind) {
		body["stream_options"] = map[string]any{"include_usage": true}
	}
	system, specs := opts.Effective(a.req)
	body["messages"] = a.messages(system, opts.FinalInstruction)
	if opts.IncludeTools && a.p.Caps.ToolCalling && len(specs) > 0 {
		wire := a.wireTools
		if opts.Offer != nil || wire == nil {
			tools, err := a.tools(specs)
			if err != nil {
				return nil, err
			}
			wire = tools
			if opts.Offer == nil {
				a.wireTools = tools
			}
		}
		body["tools"] = wire
		if a.p.Caps.AcceptsParallelToolCalls {
			body["parallel_tool_calls"] = false
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return nil, fmt.Errorf("encoding the chat completions request: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

type wireMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

func (a *Adapter) messages(system, final string) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(a.req.Messages)+len(a.history)+1)
	if f := strings.TrimSpace(final); f != "" {
		if strings.TrimSpace(system) == "" {
			system = final
		} else {
			system += "\n\n" + final
		}
	}
	if strings.TrimSpace(system) != "" {
		out = append(out, mustMarshal(wireMessage{Role: "system", Content: system}))
	}
	for _, m := range a.req.Messages {
		if m.Text == "" {
			continue
		}
		role := "user"
		if m.Role == llm.RoleAssistant {
			role = "assistant"
		}
		out = append(out, mustMarshal(wireMessage{Role: role, Content: m.Text}))
	}
	return append(out, a.history...)
}

type wireTool struct {
	Type     string       `json:"type"`
	Function wireToolFunc `json:"function"`
}

type wireToolFunc struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

func (a *Adapter) tools(specs []llm.ToolSpec) ([]wireTool, error) {
	out := make([]wireTool, 0, len(specs))
	for _, t := range specs {
		params := bytes.TrimSpace(t.Parameters)
		if len(params) == 0 || string(params) == "null" {
			params = emptyObjectSchema
		}
		if !json.Valid(params) {
			return nil, fmt.Errorf("tool %q: its parameter schema is not valid JSON", t.Name)
		}
		strict := false
		if t.Strict && a.p.Caps.EnforcesStrictToolSchemas {
			converted, err := tool.StrictSchema(params)
			if err != nil {
				// A schema strict mode cannot express goes as written.
				a.opts.Logger.Warn("tool schema kept out of strict mode", "tool", t.Name, "reason", err.Error())
			} else {
				params, strict = converted, true
			}
		}
		out = append(out, wireTool{Type: "function", Function: wireToolFunc{
			Name: t.Name, Description: t.Description, Parameters: params, Strict: strict,
		}})
	}
	return out, nil
}

func mustMarshal(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only plain strings and raw JSON validated before go in here.
		panic(fmt.Sprintf("chatcompletions: encoding a message: %v", err))
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

var errIdle = errors.New("idle stream")

// Round sends one request and streams the answer. A stream that ended
// early before any text was shown is asked for again.
func (a *Adapter) Round(ctx context.Context, opts llm.RoundOptions, onText func(string)) (*llm.Round, error) {
	return llm.RetryEarlyEnd(ctx, a.tr, onText, func(onText func(string)) (*llm.Round, error) {
		return a.round(ctx, opts, onText)
	})
}

func (a *Adapter) round(ctx context.Context, opts llm.RoundOptions, onText func(string)) (*llm.Round, error) {
	a.last = nil
	body, err := a.BuildBody(opts)
	if err != nil {
		return nil, err
	}
	base := a.p.BaseURL
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	header := http.Header{}
	if a.p.APIKey != "" {
		header.Set("Authorization", "Bearer "+a.p.APIKey)
	}
	for k, v := range a.p.Header {
		header.Set(k, v)
	}

	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	idle := newIdleTimer(a.opts.IdleTimeout, func() { cancel(errIdle) })
	defer idle.stop()

	resp, err := a.tr.PostJSON(rctx, base+"chat/completions", header, body)
	if err != nil {
		if context.Cause(rctx) == errIdle && ctx.Err() == nil {
			return nil, fmt.Errorf("the provider did not answer within %s", a.opts.IdleTimeout)
		}
		return nil, fmt.Errorf("chat completions request: %w", err)
	}
	defer resp.Body.Close()
	idle.reset()
	r := &idleReader{r: resp.Body, t: idle}

	var acc *accumulated
	br := bufio.NewReaderSize(r, 4096)
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "application/json" || startsWithObject(br) {
		// A host that ignored stream:true, whatever type it declared.
		acc, err = readJSON(br, onText)
	} else {
		acc, err = readSSE(br, onText)
	}
	if err != nil {
		if context.Cause(rctx) == errIdle && ctx.Err() == nil {
			return nil, fmt.Errorf("the provider's stream stalled: nothing arrived for %s", a.opts.IdleTimeout)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return a.finish(acc), nil
}

// Decode reads one answer, an event stream or the JSON object of a host
// that ignored stream:true, into a round without sending anything. Text
// deltas go to onText as they are read; calls without an ID get one. It is
// what Round does with a response body, for benchmarks and tools that hold
// a recorded answer.
func Decode(r io.Reader, onText func(string)) (*llm.Round, error) {
	br := bufio.NewReaderSize(r, 4096)
	var acc *accumulated
	var err error
	if startsWithObject(br) {
		acc, err = readJSON(br, onText)
	} else {
		acc, err = readSSE(br, onText)
	}
	if err != nil {
		return nil, err
	}
	a := NewWithOptions(llm.Provider{}, llm.Request{}, nil, Options{Logger: slog.New(slog.DiscardHandler)})
	return a.finish(acc), nil
}

// startsWithObject reports whether the answer's first non-blank byte opens
// a JSON object; an event stream starts with a field name or a comment.
func startsWithObject(br *bufio.Reader) bool {
	for n := 1; n <= 4096; n++ {
		b, err := br.Peek(n)
		if len(b) < n {
			return false
		}
		switch c := b[n-1]; c {
		case ' ', '\t', '\r', '\n':
			if err != nil {
				return false
			}
			continue
		case '{':
			return true
		default:
			return false
		}
	}
	return false
}

// finish turns an accumulated answer into the round and keeps its turn.
func (a *Adapter) finish(acc *accumulated) *llm.Round {
	t := &turn{text: acc.text.String(), details: acc.details.marshal()}
	t.reasoning = acc.reasoningContent.String()
	if t.reasoning == "" {
		t.reasoning = acc.reasoningText.String()
	}
	round := &llm.Round{Text: t.text, Sources: acc.sources, Usage: acc.usage}
	seen := make(map[string]bool, len(acc.calls))
	for _, c := range acc.calls {
		// Two calls under one id could not be told apart by their
		// results (Gemini behind some gateways repeats the tool name as
		// the id); the later one gets an id of its own.
		if c.id != "" && seen[c.id] {
			c.id = ""
		}
		call, wc := a.normalize(c)
		seen[call.ID] = true
		round.Calls = append(round.Calls, call)
		t.calls = append(t.calls, wc)
	}
	a.last = t
	return round
}

// normalize makes a call the loop can answer and the form it goes back in.
func (a *Adapter) normalize(c *callAcc) (llm.Call, wireCall) {
	id := c.id
	if id == "" {
		id = a.opts.NewCallID()
	}
	name := strings.TrimSpace(c.name)
	if canon, ok := a.names[name]; ok {
		name = canon
	}
	args := strings.TrimSpace(c.args.String())
	if args == "" {
		args = "{}"
	}
	nameOK := ValidFunctionName(name)
	argsOK := isJSONObject(args)
	if !nameOK {
		a.opts.Logger.Warn("tool call with a malformed function name")
	}
	if !argsOK {
		a.opts.Logger.Warn("tool call whose arguments are not a JSON object")
	}
	var raw json.RawMessage
	if json.Valid([]byte(args)) {
		raw = json.RawMessage(args)
	} else {
		raw = mustMarshal(args)
	}
	call := llm.Call{ID: id, Name: name, Arguments: raw, Valid: nameOK && argsOK}
	wc := wireCall{ID: id, Type: "function", Function: wireCallFunc{Name: name, Arguments: args}, ExtraContent: c.extraContent}
	if !nameOK {
		wc.Function.Name = InvalidToolName
	}
	if !argsOK {
		wc.Function.Arguments = "{}"
	}
	return call, wc
}

// ValidFunctionName reports whether name is 1–64 characters of A–Z, a–z,
// 0–9, "_" and "-".
func ValidFunctionName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func isJSONObject(s string) bool {
	var m map[string]json.RawMessage
	return strings.HasPrefix(s, "{") && json.Unmarshal([]byte(s), &m) == nil && m != nil
}

type wireAssistant struct {
	Role             string          `json:"role"`
	Content          *string         `json:"content"`
	ReasoningContent string          `json:"reasoning_content,omitempty"`
	Reasoning        string          `json:"reasoning,omitempty"`
	ReasoningDetails json.RawMessage `json:"reasoning_details,omitempty"`
	ToolCalls        []wireCall      `json:"tool_calls,omitempty"`
}

// RecordAssistantTurn records the model's turn of the last round, once.
func (a *Adapter) RecordAssistantTurn() {
	t := a.last
	if t == nil || t.recorded {
		return
	}
	t.recorded = true
	if t.text == "" && len(t.calls) == 0 {
		return
	}
	m := wireAssistant{Role: "assistant", ToolCalls: t.calls}
	if t.text != "" {
		text := t.text
		m.Content = &text
	}
	switch a.p.Caps.Reasoning {
	case llm.ReasoningContent:
		m.ReasoningContent = t.reasoning
	case llm.ReasoningText:
		m.Reasoning = t.reasoning
	case llm.ReasoningDetails:
		m.ReasoningDetails = t.details
		m.Reasoning = t.reasoning
	}
	a.history = append(a.history, mustMarshal(m))
	if t.text != "" {
		a.texts = append(a.texts, t.text)
	}
	if t.reasoning != "" {
		a.texts = append(a.texts, t.reasoning)
	}
	for _, c := range t.calls {
		a.texts = append(a.texts, c.Function.Name+c.Function.Arguments)
	}
}

type wireToolResult struct {
	Role       string `json:"role"`
	ToolCallID string `json:"tool_call_id"`
	Content    string `json:"content"`
}

// RecordToolResult records one result as a role "tool" message. Chat
// Completions has no error flag; isError is not sent.
func (a *Adapter) RecordToolResult(callID, content string, isError bool) {
	a.history = append(a.history, mustMarshal(wireToolResult{Role: "tool", ToolCallID: callID, Content: content}))
	a.texts = append(a.texts, content)
}

// RecordedTexts returns the texts the recorded turns and results add to
// later requests.
func (a *Adapter) RecordedTexts() []string {
	return append([]string(nil), a.texts...)
}

// idleTimer fires once nothing happened for d.
type idleTimer struct {
	mu sync.Mutex
	t  *time.Timer
	d  time.Duration
}

func newIdleTimer(d time.Duration, fire func()) *idleTimer {
	return &idleTimer{t: time.AfterFunc(d, fire), d: d}
}

func (i *idleTimer) reset() {
	i.mu.Lock()
	i.t.Reset(i.d)
	i.mu.Unlock()
}

func (i *idleTimer) stop() {
	i.mu.Lock()
	i.t.Stop()
	i.mu.Unlock()
}

// idleReader resets the idle timer whenever bytes arrive.
type idleReader struct {
	r interface{ Read([]byte) (int, error) }
	t *idleTimer
}

func (r *idleReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.t.reset()
	}
	return n, err
}
