package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/stewardhq/steward/llm"
)

// Version is the anthropic-version header Steward speaks.
const Version = "2023-06-01"

// DefaultMaxTokens caps an answer when the request does not say.
const DefaultMaxTokens = 4096

// Options tune an adapter beyond what the provider and the request say.
type Options struct {
	// IdleTimeout cuts a stream that sends nothing for this long; 0 means
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
	// Logger receives warnings (never content); nil means slog.Default().
	Logger *slog.Logger
}

// New returns the Anthropic Messages adapter for one run of p with the
// request base req. tr sends the requests; nil means a zero llm.Transport.
func New(p llm.Provider, req llm.Request, tr *llm.Transport) llm.Adapter {
	return NewWithOptions(p, req, tr, Options{})
}

// NewWithOptions is New with options.
func NewWithOptions(p llm.Provider, req llm.Request, tr *llm.Transport, o Options) llm.Adapter {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &adapter{p: p, req: req, tr: tr, opts: o}
}

// reserved reports whether the adapter sets the top-level parameter k
// itself; extra parameters from configuration never override those.
func reserved(k string) bool {
	switch k {
	case "model", "messages", "system", "stream", "tools":
		return true
	}
	return false
}

type adapter struct {
	p    llm.Provider
	req  llm.Request
	tr   *llm.Transport
	opts Options

	// messages are the messages recorded during the run, in order.
	messages []json.RawMessage
	// last are the content blocks of the last round, as received.
	last      []json.RawMessage
	lastTexts []string
	recorded  bool
	// pending are the results of the last round, flushed together into one
	// user message when the next round starts.
	pending []json.RawMessage
	texts   []string
	// noStrict is set once the host refused strict tools.
	noStrict bool
	// toolBlocks is set once the conversation holds tool_use and
	// tool_result blocks.
	toolBlocks bool
}

// rejectsStrict reports whether err is a bad request about strict tools,
// sent with a body that asked for them.
func rejectsStrict(err error, body []byte) bool {
	var he *llm.HTTPError
	return errors.As(err, &he) && he.StatusCode == http.StatusBadRequest &&
		strings.Contains(strings.ToLower(he.Message), "strict") &&
		bytes.Contains(body, []byte(`"strict":true`))
}

func (a *adapter) model() string {
	if a.req.Model != "" {
		return a.req.Model
	}
	return a.p.Model
}

type tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
	Strict      bool            `json:"strict,omitempty"`
}

type message struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

// buildBody writes the request of one round.
func (a *adapter) buildBody(opts llm.RoundOptions) ([]byte, error) {
	body := make(map[string]any, len(a.req.Extra)+6)
	for k, v := range a.req.Extra {
		if !reserved(k) {
			body[k] = v
		}
	}
	body["model"] = a.model()
	if a.req.MaxTokens > 0 {
		body["max_tokens"] = a.req.MaxTokens
	} else if _, ok := body["max_tokens"]; !ok {
		body["max_tokens"] = DefaultMaxTokens
	}
	body["stream"] = true
	system, specs := opts.Effective(a.req)
	if opts.FinalInstruction != "" {
		if system != "" {
			system += "\n\n"
		}
		system += opts.FinalInstruction
	}
	if system != "" {
		body["system"] = system
	}
	msgs, err := a.messageList()
	if err != nil {
		return nil, err
	}
	body["messages"] = msgs
	switch {
	case len(specs) == 0 && a.toolBlocks && len(a.req.Tools) > 0:
		// Nothing is offered any more (the chat's requirements
		// tightened), but the conversation holds tool blocks, which
		// Anthropic refuses without tool definitions. The definitions go
		// along with tool_choice none, so the model cannot call any.
		body["tools"] = a.tools(a.req.Tools)
		body["tool_choice"] = map[string]string{"type": "none"}
	case len(specs) == 0:
		delete(body, "tool_choice")
	case opts.IncludeTools:
		body["tools"] = a.tools(specs)
	case a.toolBlocks:
		// Anthropic refuses a conversation holding tool_use or
		// tool_result blocks without tool definitions ("Requests which
		// include tool_use or tool_result blocks must define tools"). So
		// the tools go along, and tool_choice none keeps the model from
		// calling any of them.
		body["tools"] = a.tools(specs)
		body["tool_choice"] = map[string]string{"type": "none"}
	default:
		// A tool choice without tools is a bad request.
		delete(body, "tool_choice")
	}
	return llm.EncodeJSON(body)
}

// tools writes the function definitions.
func (a *adapter) tools(specs []llm.ToolSpec) []tool {
	tools := make([]tool, 0, len(specs))
	for _, spec := range specs {
		schema := spec.Parameters
		if len(bytes.TrimSpace(schema)) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		// Anthropic reads the schema as written and binds the input to it
		// in strict mode, with no conversion; strict is kept only where
		// the host binds.
		strict := spec.Strict && a.p.Caps.EnforcesStrictToolSchemas && !a.noStrict
		tools = append(tools, tool{Name: spec.Name, Description: spec.Description, InputSchema: schema, Strict: strict})
	}
	return tools
}

// messageList is the chat so far plus the messages recorded during the run.
func (a *adapter) messageList() ([]json.RawMessage, error) {
	var out []json.RawMessage
	for _, m := range a.req.Messages {
		if strings.TrimSpace(m.Text) == "" {
			// Anthropic refuses empty text; an empty message says nothing.
			continue
		}
		role := string(llm.RoleUser)
		if m.Role == llm.RoleAssistant {
			role = string(llm.RoleAssistant)
		}
		b, err := llm.EncodeJSON(message{Role: role, Content: m.Text})
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return append(out, a.messages...), nil
}

func (a *adapter) header() http.Header {
	h := http.Header{}
	for k, v := range a.p.Header {
		h.Set(k, v)
	}
	if a.p.APIKey != "" {
		h.Set("x-api-key", a.p.APIKey)
	}
	h.Set("anthropic-version", Version)
	return h
}

// flush moves the buffered results of the last round into one user
// message.
func (a *adapter) flush() error {
	if len(a.pending) == 0 {
		return nil
	}
	b, err := llm.EncodeJSON(message{Role: string(llm.RoleUser), Content: a.pending})
	if err != nil {
		return err
	}
	a.messages = append(a.messages, b)
	a.pending = nil
	return nil
}

// Round sends one request and streams the answer.
func (a *adapter) Round(ctx context.Context, opts llm.RoundOptions, onText func(string)) (*llm.Round, error) {
	if onText == nil {
		onText = func(string) {}
	}
	if err := a.flush(); err != nil {
		return nil, fmt.Errorf("writing the tool results: %w", err)
	}
	res, err := llm.RetryEarlyEnd(ctx, a.tr, onText, func(onText func(string)) (*result, error) {
		return llm.PostRound(ctx, a.tr, llm.RoundIO[*result]{
			API:    "Messages",
			URL:    a.p.BaseURL + "messages",
			Header: a.header(),
			Idle:   a.opts.idle(),
			Build:  func() ([]byte, error) { return a.buildBody(opts) },
			Retry: func(err error, body []byte) bool {
				if a.noStrict || !rejectsStrict(err, body) {
					return false
				}
				// An older model refuses strict tools: ask again without
				// strict mode, for the whole run. The schemas are the same
				// either way.
				a.opts.Logger.Warn("the model refuses strict tools; asking without strict mode", "model", a.model())
				a.noStrict = true
				return true
			},
			Whole: func(r io.Reader) (*result, error) {
				// A host which ignores stream:true answers with the whole
				// message.
				res, err := decodeWhole(r)
				if err == nil && res.text.Len() > 0 {
					onText(res.text.String())
				}
				return res, err
			},
			Stream: func(r io.Reader) (*result, error) { return parseStream(r, onText) },
		})
	})
	if err != nil {
		return nil, err
	}
	a.last, a.lastTexts, a.recorded = res.blocks, res.texts, false
	return res.round(), nil
}

// RecordAssistantTurn records the model's turn of the last round, its
// blocks exactly as received, once.
func (a *adapter) RecordAssistantTurn() {
	if a.recorded || len(a.last) == 0 {
		return
	}
	a.recorded = true
	b, _ := llm.EncodeJSON(message{Role: string(llm.RoleAssistant), Content: a.last})
	a.messages = append(a.messages, b)
	a.texts = append(a.texts, a.lastTexts...)
}

type toolResult struct {
	Type      string `json:"type"`
	ToolUseID string `json:"tool_use_id"`
	Content   string `json:"content"`
	IsError   bool   `json:"is_error,omitempty"`
}

// RecordToolResult buffers one result; the next round sends all results of
// this round together. is_error is written only when true.
func (a *adapter) RecordToolResult(callID, content string, isError bool) {
	b, _ := llm.EncodeJSON(toolResult{Type: "tool_result", ToolUseID: callID, Content: content, IsError: isError})
	a.pending = append(a.pending, b)
	a.toolBlocks = true
	a.texts = append(a.texts, content)
}

// RecordedTexts returns the texts the recorded items add to later requests.
func (a *adapter) RecordedTexts() []string { return append([]string(nil), a.texts...) }

// decodeWhole reads a complete, non-streamed message.
func decodeWhole(r io.Reader) (*result, error) {
	b, err := io.ReadAll(io.LimitReader(r, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the Messages answer: %w", err)
	}
	var m struct {
		Type       string            `json:"type"`
		Content    []json.RawMessage `json:"content"`
		StopReason string            `json:"stop_reason"`
		Usage      *usage            `json:"usage"`
		Error      *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("the provider's answer is not a Messages object: %w", err)
	}
	if m.Type == "error" || m.Error != nil {
		return nil, fmt.Errorf("the provider reported an error: %s", llm.ErrorMessage(b))
	}
	res := newResult()
	if m.Usage != nil {
		res.usage = m.Usage.toLLM()
	}
	for _, raw := range m.Content {
		res.addWhole(raw)
	}
	return res, nil
}
