package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/stewardhq/steward/llm"
)

type usage struct {
	InputTokens   int `json:"input_tokens"`
	OutputTokens  int `json:"output_tokens"`
	CacheCreation int `json:"cache_creation_input_tokens"`
	CacheRead     int `json:"cache_read_input_tokens"`
}

// toLLM counts cached input as input too: Anthropic's input_tokens leaves
// out what was read from or written to the cache.
func (u usage) toLLM() llm.Usage {
	return llm.Usage{
		InputTokens:  u.InputTokens + u.CacheCreation + u.CacheRead,
		OutputTokens: u.OutputTokens,
		CachedTokens: u.CacheRead,
	}
}

// result is what one answer came to.
type result struct {
	// blocks are the content blocks in index order, as they go back.
	blocks  []json.RawMessage
	calls   []llm.Call
	text    strings.Builder
	texts   []string
	sources []llm.Citation
	seen    map[string]bool
	usage   llm.Usage
}

func newResult() *result { return &result{seen: map[string]bool{}} }

func (r *result) round() *llm.Round {
	return &llm.Round{Text: r.text.String(), Calls: r.calls, Sources: r.sources, Usage: r.usage}
}

// block is a content block while it streams.
type block struct {
	start      json.RawMessage
	typ        string
	touched    bool
	text       strings.Builder
	thinking   strings.Builder
	partial    strings.Builder
	signature  *string
	citations  []json.RawMessage
	sawPartial bool
}

type delta struct {
	Type        string          `json:"type"`
	Text        string          `json:"text"`
	PartialJSON string          `json:"partial_json"`
	Thinking    string          `json:"thinking"`
	Signature   string          `json:"signature"`
	Citation    json.RawMessage `json:"citation"`
	StopReason  *string         `json:"stop_reason"`
}

type streamEvent struct {
	Type         string          `json:"type"`
	Index        *int            `json:"index"`
	ContentBlock json.RawMessage `json:"content_block"`
	Delta        *delta          `json:"delta"`
	Message      *struct {
		Usage *usage `json:"usage"`
	} `json:"message"`
	Usage *struct {
		InputTokens   *int `json:"input_tokens"`
		OutputTokens  *int `json:"output_tokens"`
		CacheCreation *int `json:"cache_creation_input_tokens"`
		CacheRead     *int `json:"cache_read_input_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// parseStream reads a Messages event stream. Text deltas go to onText as
// they arrive. The message ends on message_stop; a stream without it is an
// error wrapping llm.ErrIncomplete. An error event is an error too.
func parseStream(r io.Reader, onText func(string)) (*result, error) {
	sse := llm.NewSSEReader(r)
	blocks := map[int]*block{}
	var u usage
	done := false
	for {
		msg, err := sse.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, llm.ErrSSELineTooLong) {
				return nil, fmt.Errorf("reading the Messages stream: %w", err)
			}
			return nil, fmt.Errorf("%w: reading the Messages stream failed: %w", llm.ErrIncomplete, err)
		}
		data := bytes.TrimSpace(msg.Data)
		if len(data) == 0 {
			continue
		}
		if bytes.HasPrefix(data, []byte(`{"type":"ping"`)) || bytes.HasPrefix(data, []byte(`{"type":"content_block_stop"`)) {
			// Nothing to read in these.
			continue
		}
		var ev streamEvent
		if err := json.Unmarshal(data, &ev); err != nil {
			// A line Steward cannot read carries nothing it could use.
			continue
		}
		typ := ev.Type
		if typ == "" {
			typ = msg.Event
		}
		switch typ {
		case "message_start":
			if ev.Message != nil && ev.Message.Usage != nil {
				u = *ev.Message.Usage
			}
		case "content_block_start":
			if ev.Index == nil || !json.Valid(ev.ContentBlock) {
				continue
			}
			var head struct {
				Type string `json:"type"`
			}
			_ = json.Unmarshal(ev.ContentBlock, &head)
			blocks[*ev.Index] = &block{start: bytes.Clone(ev.ContentBlock), typ: head.Type}
		case "content_block_delta":
			if ev.Index == nil || ev.Delta == nil {
				continue
			}
			d := *ev.Delta
			b := blocks[*ev.Index]
			if b == nil {
				if d.Type != "text_delta" {
					// Only text can stand without its start.
					continue
				}
				b = &block{start: json.RawMessage(`{"type":"text","text":""}`), typ: "text"}
				blocks[*ev.Index] = b
			}
			b.apply(d, onText)
		case "message_delta":
			if ev.Usage != nil {
				set := func(dst *int, v *int) {
					if v != nil && *v > 0 {
						*dst = *v
					}
				}
				set(&u.OutputTokens, ev.Usage.OutputTokens)
				set(&u.InputTokens, ev.Usage.InputTokens)
				set(&u.CacheCreation, ev.Usage.CacheCreation)
				set(&u.CacheRead, ev.Usage.CacheRead)
			}
		case "message_stop":
			done = true
		case "error":
			return nil, fmt.Errorf("the provider reported an error in the stream: %s", llm.ErrorMessage(data))
		case "":
			if len(ev.Error) > 0 && !bytes.Equal(ev.Error, []byte("null")) {
				// An error object without an event name.
				return nil, fmt.Errorf("the provider reported an error in the stream: %s", llm.ErrorMessage(data))
			}
		}
		if typ == "message_stop" {
			break
		}
	}
	if !done {
		return nil, fmt.Errorf("%w: the Messages stream ended without message_stop", llm.ErrIncomplete)
	}
	res := newResult()
	res.usage = u.toLLM()
	idx := make([]int, 0, len(blocks))
	for i := range blocks {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		raw, invalid := blocks[i].finish()
		res.add(raw, invalid)
	}
	return res, nil
}

func (b *block) apply(d delta, onText func(string)) {
	switch d.Type {
	case "text_delta":
		if d.Text != "" {
			b.touched = true
			b.text.WriteString(d.Text)
			onText(d.Text)
		}
	case "input_json_delta":
		// Empty fragments are normal (the first one usually is).
		b.touched = true
		b.sawPartial = true
		b.partial.WriteString(d.PartialJSON)
	case "thinking_delta":
		b.touched = true
		b.thinking.WriteString(d.Thinking)
	case "signature_delta":
		b.touched = true
		s := d.Signature
		b.signature = &s
	case "citations_delta":
		if len(d.Citation) > 0 && json.Valid(d.Citation) {
			b.touched = true
			b.citations = append(b.citations, bytes.Clone(d.Citation))
		}
	}
}

// finish returns the block as it goes back, and whether its tool input was
// not a JSON object. A block nothing was added to keeps its bytes.
func (b *block) finish() (json.RawMessage, bool) {
	if !b.touched && b.typ != "tool_use" && b.typ != "thinking" {
		return b.start, false
	}
	fields := map[string]json.RawMessage{}
	if json.Unmarshal(b.start, &fields) != nil {
		fields = map[string]json.RawMessage{"type": mustString(b.typ)}
	}
	invalid := false
	switch b.typ {
	case "text":
		if b.text.Len() > 0 {
			fields["text"] = mustString(stringField(fields, "text") + b.text.String())
		}
	case "thinking":
		if b.thinking.Len() > 0 {
			fields["thinking"] = mustString(stringField(fields, "thinking") + b.thinking.String())
		}
		if b.signature != nil {
			fields["signature"] = mustString(*b.signature)
		} else if _, ok := fields["signature"]; !ok {
			// A thinking block always carries a signature, even empty.
			fields["signature"] = mustString("")
		}
	}
	if b.sawPartial || b.typ == "tool_use" {
		input := json.RawMessage(bytes.TrimSpace([]byte(b.partial.String())))
		if len(input) == 0 {
			input = fields["input"]
		}
		if !isObject(input) {
			input = json.RawMessage(`{}`)
			invalid = true
		}
		fields["input"] = input
	}
	if len(b.citations) > 0 {
		var cites []json.RawMessage
		_ = json.Unmarshal(fields["citations"], &cites)
		fields["citations"], _ = llm.EncodeJSON(append(cites, b.citations...))
	}
	raw, err := llm.EncodeJSON(fields)
	if err != nil {
		// Only invalid JSON in a field can get here; the start block is
		// the best Steward has.
		return b.start, invalid
	}
	return raw, invalid
}

// addWhole adds a block of a non-streamed message.
func (r *result) addWhole(raw json.RawMessage) {
	var head struct {
		Type      string          `json:"type"`
		Input     json.RawMessage `json:"input"`
		Signature *string         `json:"signature"`
	}
	_ = json.Unmarshal(raw, &head)
	invalid := false
	fix := func(key string, val json.RawMessage) {
		fields := map[string]json.RawMessage{}
		if json.Unmarshal(raw, &fields) == nil {
			fields[key] = val
			if b, err := llm.EncodeJSON(fields); err == nil {
				raw = b
			}
		}
	}
	switch {
	case head.Type == "tool_use" && !isObject(head.Input):
		invalid = true
		fix("input", json.RawMessage(`{}`))
	case head.Type == "thinking" && head.Signature == nil:
		fix("signature", mustString(""))
	}
	r.add(raw, invalid)
}

// add appends a finished block and reads what the loop needs from it.
func (r *result) add(raw json.RawMessage, invalid bool) {
	r.blocks = append(r.blocks, raw)
	var b struct {
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		Thinking  string          `json:"thinking"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
		Citations []struct {
			URL   string `json:"url"`
			Title string `json:"title"`
		} `json:"citations"`
	}
	if json.Unmarshal(raw, &b) != nil {
		return
	}
	switch b.Type {
	case "text":
		r.text.WriteString(b.Text)
		if b.Text != "" {
			r.texts = append(r.texts, b.Text)
		}
		for _, c := range b.Citations {
			if c.URL != "" && !r.seen[c.URL] {
				r.seen[c.URL] = true
				r.sources = append(r.sources, llm.Citation{Title: c.Title, URL: c.URL})
			}
		}
	case "thinking":
		if b.Thinking != "" {
			r.texts = append(r.texts, b.Thinking)
		}
	case "tool_use":
		r.texts = append(r.texts, b.Name, string(b.Input))
		if b.ID == "" || b.Name == "" {
			// It cannot be answered; it stays in the turn, as received.
			return
		}
		r.calls = append(r.calls, llm.Call{ID: b.ID, Name: b.Name, Arguments: b.Input, Valid: !invalid})
	}
}

func isObject(b json.RawMessage) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

func mustString(s string) json.RawMessage {
	b, _ := llm.EncodeJSON(s)
	return b
}

func stringField(fields map[string]json.RawMessage, key string) string {
	var s string
	_ = json.Unmarshal(fields[key], &s)
	return s
}
