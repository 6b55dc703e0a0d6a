package responses

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
	"github.com/stewardhq/steward/tool"
)

// Options tune an adapter beyond what the provider and the request say.
type Options struct {
	// IdleTimeout cuts a stream that sends nothing for this long; 0 means
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
	// Logger receives warnings (never content); nil means slog.Default().
	Logger *slog.Logger
}

// New returns the Responses adapter for one run of p with the request base
// req. tr sends the requests; nil means a zero llm.Transport.
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

// includeEncrypted asks for the reasoning in encrypted form, so that a
// reasoning item can be sent back although nothing is stored (store:false).
// Models that do not reason reject it, hence only for those that do.
const includeEncrypted = "reasoning.encrypted_content"

// reserved reports whether the adapter sets the top-level parameter k
// itself; extra parameters from configuration never override those.
func reserved(k string) bool {
	switch k {
	case "model", "input", "stream", "store", "tools", "parallel_tool_calls":
		return true
	}
	return false
}

type adapter struct {
	p    llm.Provider
	req  llm.Request
	tr   *llm.Transport
	opts Options

	// items are the conversation items recorded during the run, in order.
	items []json.RawMessage
	// last is the output of the last round, as it is replayed.
	last      []json.RawMessage
	lastTexts []string
	recorded  bool
	texts     []string
	// noInclude is set once the host refused encrypted reasoning.
	noInclude bool
}

// rejectsEncrypted reports whether err is OpenAI's refusal of encrypted
// reasoning for a model that does not reason ("Encrypted content is not
// supported with this model.").
func rejectsEncrypted(err error) bool {
	var he *llm.HTTPError
	return errors.As(err, &he) && he.StatusCode == http.StatusBadRequest &&
		strings.Contains(strings.ToLower(he.Message), "encrypted content")
}

// reasons reports whether the model emits reasoning items. The catalogue
// marks every Responses provider so; for OpenAI's own models the
// catalogue's API choice tells the reasoning ones (Responses by default)
// from the others (gpt-4o, gpt-4.1…), which reject encrypted reasoning.
func (a *adapter) reasons() bool {
	if a.p.Caps.Reasoning != llm.ReasoningResponsesItems {
		return false
	}
	if llm.Kind(a.p.Kind) == llm.KindOpenAI {
		return llm.OpenAIAPIForModel(a.model()) == llm.Responses
	}
	return true
}

func (a *adapter) model() string {
	if a.req.Model != "" {
		return a.req.Model
	}
	return a.p.Model
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
	system, specs := opts.Effective(a.req)
	input, err := a.input(system, opts.FinalInstruction)
	if err != nil {
		return nil, err
	}
	body["input"] = input
	body["stream"] = true
	body["store"] = false
	tools := []any{}
	if opts.IncludeTools {
		for _, spec := range specs {
			tools = append(tools, a.functionTool(spec))
		}
	}
	body["tools"] = tools
	if len(tools) == 0 {
		// A tool choice without tools is a bad request.
		delete(body, "tool_choice")
	}
	if a.reasons() && !a.noInclude {
		body["include"] = mergeInclude(body["include"], includeEncrypted)
	}
	return llm.EncodeJSON(body)
}

func mergeInclude(v any, add string) []any {
	var out []any
	switch x := v.(type) {
	case []any:
		out = append(out, x...)
	case []string:
		for _, s := range x {
			out = append(out, s)
		}
	case string:
		out = append(out, x)
	}
	for _, e := range out {
		if e == add {
			return out
		}
	}
	return append(out, add)
}

type functionTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

// functionTool writes one function flat. Strict mode is a promise of the
// host: where it binds the output to the schema (OpenAI does, in both of
// its APIs) strict is kept as the definition says, with the schema
// converted for it; any other host gets the schema as written with
// strict:false.
func (a *adapter) functionTool(spec llm.ToolSpec) functionTool {
	params := spec.Parameters
	if len(bytes.TrimSpace(params)) == 0 {
		params = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	ft := functionTool{Type: "function", Name: spec.Name, Description: spec.Description, Parameters: params}
	if spec.Strict && a.p.Caps.EnforcesStrictToolSchemas {
		conv, err := tool.StrictSchema(params)
		if err != nil {
			// The schema as written still works; only the binding is lost.
			a.opts.Logger.Warn("tool schema cannot be sent in strict mode; sending it as written",
				"tool", spec.Name, "error", err)
		} else {
			ft.Parameters = conv
			ft.Strict = true
		}
	}
	return ft
}

type inputMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// input is the system message (with the final instruction), the chat so
// far and the items recorded during the run.
func (a *adapter) input(system, final string) ([]json.RawMessage, error) {
	var out []json.RawMessage
	if final != "" {
		if system != "" {
			system += "\n\n"
		}
		system += final
	}
	if system != "" {
		role := "system"
		if a.reasons() {
			// Reasoning models take their instructions as developer
			// messages.
			role = "developer"
		}
		b, err := llm.EncodeJSON(inputMessage{Role: role, Content: system})
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	for _, m := range a.req.Messages {
		role := string(m.Role)
		if role != string(llm.RoleAssistant) {
			role = string(llm.RoleUser)
		}
		b, err := llm.EncodeJSON(inputMessage{Role: role, Content: m.Text})
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return append(out, a.items...), nil
}

func (a *adapter) header() http.Header {
	h := http.Header{}
	for k, v := range a.p.Header {
		h.Set(k, v)
	}
	if a.p.APIKey != "" {
		h.Set("Authorization", "Bearer "+a.p.APIKey)
	}
	return h
}

// Round sends one request and streams the answer.
func (a *adapter) Round(ctx context.Context, opts llm.RoundOptions, onText func(string)) (*llm.Round, error) {
	if onText == nil {
		onText = func(string) {}
	}
	res, err := llm.RetryEarlyEnd(ctx, a.tr, onText, func(onText func(string)) (*result, error) {
		return llm.PostRound(ctx, a.tr, llm.RoundIO[*result]{
			API:    "Responses",
			URL:    a.p.BaseURL + "responses",
			Header: a.header(),
			Idle:   a.opts.idle(),
			Build:  func() ([]byte, error) { return a.buildBody(opts) },
			Retry: func(err error, _ []byte) bool {
				if !a.reasons() || a.noInclude || !rejectsEncrypted(err) {
					return false
				}
				// The catalogue took the model for one that reasons, and it
				// does not: ask again without the encrypted reasoning, for
				// the whole run.
				a.opts.Logger.Warn("the model does not offer encrypted reasoning; asking without it", "model", a.model())
				a.noInclude = true
				return true
			},
			Whole: func(r io.Reader) (*result, error) {
				// A host which ignores stream:true answers with the whole
				// response.
				res, err := decodeWhole(r)
				if err == nil {
					if t := outputText(res.output); t != "" {
						onText(t)
					}
				}
				return res, err
			},
			Stream: func(r io.Reader) (*result, error) { return parseStream(r, onText) },
		})
	})
	if err != nil {
		return nil, err
	}
	round, replay, texts := a.finish(res)
	a.last, a.lastTexts, a.recorded = replay, texts, false
	return round, nil
}

// decodeWhole reads a complete, non-streamed response object.
func decodeWhole(r io.Reader) (*result, error) {
	b, err := io.ReadAll(io.LimitReader(r, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the Responses answer: %w", err)
	}
	res := &result{}
	if err := res.complete(b); err != nil {
		return nil, err
	}
	return res, nil
}

// RecordAssistantTurn records the whole output of the last round, once.
func (a *adapter) RecordAssistantTurn() {
	if a.recorded {
		return
	}
	a.recorded = true
	a.items = append(a.items, a.last...)
	a.texts = append(a.texts, a.lastTexts...)
}

type callOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

// RecordToolResult records one result as a function_call_output item. The
// Responses API has no error flag; the content says what went wrong.
func (a *adapter) RecordToolResult(callID, content string, isError bool) {
	// Strings always marshal, so there is no error to handle.
	b, _ := llm.EncodeJSON(callOutput{Type: "function_call_output", CallID: callID, Output: content})
	a.items = append(a.items, b)
	a.texts = append(a.texts, content)
}

// RecordedTexts returns the texts the recorded items add to later requests.
func (a *adapter) RecordedTexts() []string { return append([]string(nil), a.texts...) }
