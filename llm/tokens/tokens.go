package tokens

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer"

	"github.com/stewardhq/steward/llm"
)

// The encodings a model may be counted with.
const (
	O200kBase  = "o200k_base"
	Cl100kBase = "cl100k_base"
)

// The codecs are immutable once built and safe for concurrent use; building
// one costs some milliseconds, so each is built once, on first use.
var (
	o200k  = sync.OnceValues(func() (tokenizer.Codec, error) { return tokenizer.Get(tokenizer.O200kBase) })
	cl100k = sync.OnceValues(func() (tokenizer.Codec, error) { return tokenizer.Get(tokenizer.Cl100kBase) })
)

// o200kFamilies are the prefixes of OpenAI model IDs tokenized with
// o200k_base; cl100kFamilies those tokenized with cl100k_base. Order
// matters: "gpt-4o" must be tried before "gpt-4".
var (
	o200kFamilies  = []string{"gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "gpt-oss", "chatgpt-4o", "o1", "o3", "o4", "codex-"}
	cl100kFamilies = []string{"gpt-4", "gpt-3.5", "gpt-35"}
)

// Encoding returns the encoding a model is counted with, and whether the
// count is exact: true only for OpenAI models whose tokenizer is known.
// Other models are counted with o200k_base as an estimate. A routing prefix
// such as "openai/" (OpenRouter) is ignored.
func Encoding(model string) (name string, exact bool) {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	for _, p := range o200kFamilies {
		if hasFamily(m, p) {
			return O200kBase, true
		}
	}
	for _, p := range cl100kFamilies {
		if hasFamily(m, p) {
			return Cl100kBase, true
		}
	}
	return O200kBase, false
}

// hasFamily reports whether model is family itself or a variant of it
// ("o1", "o1-mini", "gpt-4o-2024-08-06"), but not another family sharing
// its first letters ("o10", "gpt-40").
func hasFamily(model, family string) bool {
	if !strings.HasPrefix(model, family) {
		return false
	}
	rest := model[len(family):]
	if rest == "" || strings.HasSuffix(family, "-") {
		return true
	}
	c := rest[0]
	return c == '-' || c == '.' || c == ':' || c == '@' || c == '_'
}

// Codec returns the tokenizer a model is counted with (see Encoding); it is
// safe for concurrent use.
func Codec(model string) (tokenizer.Codec, error) { return codecFor(model) }

func codecFor(model string) (tokenizer.Codec, error) {
	name, _ := Encoding(model)
	if name == Cl100kBase {
		return cl100k()
	}
	return o200k()
}

// Count returns the number of tokens of text as the model's tokenizer (or
// the estimate's) splits it.
func Count(model, text string) (int, error) {
	c, err := codecFor(model)
	if err != nil {
		return 0, fmt.Errorf("loading the tokenizer: %w", err)
	}
	n, err := c.Count(text)
	if err != nil {
		return 0, fmt.Errorf("counting tokens: %w", err)
	}
	return n, nil
}

// toolText is the function as it travels in a request, without the wire
// API's envelope: name, description and the parameter schema.
type toolText struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// CountTools returns the number of tokens the offered tools and their
// system prompt instructions add to a request for model: each function's
// name, description and parameter schema as compact JSON, plus the
// instructions with the blank line that joins them to the system prompt.
// Providers wrap functions in an envelope of their own (a few tokens per
// tool), which is not counted; use Encoding to learn whether the
// tokenization itself is exact for model.
func CountTools(model string, specs []llm.ToolSpec, instructions string) (int, error) {
	c, err := codecFor(model)
	if err != nil {
		return 0, fmt.Errorf("loading the tokenizer: %w", err)
	}
	total := 0
	for _, s := range specs {
		params := json.RawMessage(nil)
		if len(strings.TrimSpace(string(s.Parameters))) > 0 {
			var buf strings.Builder
			if err := compact(&buf, s.Parameters); err != nil {
				return 0, fmt.Errorf("tool %q: its parameters are not valid JSON (%v); they must be a JSON Schema object", s.Name, err)
			}
			params = json.RawMessage(buf.String())
		}
		b, err := marshalNoEscape(toolText{Name: s.Name, Description: s.Description, Parameters: params})
		if err != nil {
			return 0, fmt.Errorf("tool %q: %w", s.Name, err)
		}
		n, err := c.Count(b)
		if err != nil {
			return 0, fmt.Errorf("counting tool %q: %w", s.Name, err)
		}
		total += n
	}
	if strings.TrimSpace(instructions) != "" {
		n, err := c.Count("\n\n" + instructions)
		if err != nil {
			return 0, fmt.Errorf("counting the tool instructions: %w", err)
		}
		total += n
	}
	return total, nil
}

// compact writes raw, a JSON object, without insignificant space.
func compact(b *strings.Builder, raw json.RawMessage) error {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	if _, ok := v.(map[string]any); !ok {
		return errors.New("not an object")
	}
	s, err := marshalNoEscape(raw)
	if err != nil {
		return err
	}
	b.WriteString(s)
	return nil
}

// marshalNoEscape writes v as compact JSON, escaping only what JSON
// requires, the way request bodies carry it.
func marshalNoEscape(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}
