package responses

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/stewardhq/steward/llm"
)

// result is what one answer came to before it is turned into a round.
type result struct {
	// output are the response's output items, raw, in order.
	output []json.RawMessage
	// usage is nil when the response carried none.
	usage *llm.Usage
	// streamed is the text that went out as deltas.
	streamed strings.Builder
	// citations came as annotation events.
	citations []llm.Citation
}

// event is the union of the stream events Steward reads.
type event struct {
	Type        string          `json:"type"`
	Delta       string          `json:"delta"`
	OutputIndex *int            `json:"output_index"`
	Item        json.RawMessage `json:"item"`
	Response    json.RawMessage `json:"response"`
	Annotation  json.RawMessage `json:"annotation"`
	Message     string          `json:"message"`
	Error       json.RawMessage `json:"error"`
}

type annotation struct {
	Type  string `json:"type"`
	URL   string `json:"url"`
	Title string `json:"title"`
}

// wanted reports whether parseStream reads events of type t; others are
// skipped unread.
func wanted(t string) bool {
	switch t {
	case "response.output_text.delta", "response.refusal.delta", "response.output_text.annotation.added",
		"response.output_item.done", "response.completed", "response.incomplete",
		"response.failed", "error":
		return true
	}
	return false
}

// peekType reads the event type when it is the first member, as OpenAI
// writes it; ok is false when it is not, and the event is then decoded.
func peekType(data []byte) (string, bool) {
	const prefix = `{"type":"`
	if !bytes.HasPrefix(data, []byte(prefix)) {
		return "", false
	}
	rest := data[len(prefix):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return "", false
	}
	return string(rest[:end]), true
}

// parseStream reads a Responses event stream until response.completed.
// Text deltas go to onText as they arrive. An error event, a failed
// response, or a stream that ends with nothing to show is an error.
func parseStream(r io.Reader, onText func(string)) (*result, error) {
	sse := llm.NewSSEReader(r)
	res := &result{}
	// done are the output_item.done events, counted only to say how far a
	// stream that ends without response.completed got.
	var done [][]byte
	for {
		msg, err := sse.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, llm.ErrSSELineTooLong) {
				return nil, fmt.Errorf("reading the Responses stream: %w", err)
			}
			return nil, fmt.Errorf("%w: reading the Responses stream failed: %w", llm.ErrIncomplete, err)
		}
		data := bytes.TrimSpace(msg.Data)
		if len(data) == 0 || bytes.Equal(data, []byte("[DONE]")) {
			continue
		}
		if t, ok := peekType(data); ok {
			switch {
			case !wanted(t):
				// Most events (the echoes of the request in
				// response.created, argument deltas, part bookkeeping)
				// carry nothing the round needs; the whole output comes
				// again in response.completed.
				continue
			case t == "response.output_item.done":
				done = append(done, data)
				continue
			case t == "response.completed" || t == "response.incomplete":
				if err := res.completeEvent(data); err != nil {
					return nil, err
				}
				return res, nil
			}
		}
		var ev event
		if err := json.Unmarshal(data, &ev); err != nil {
			// A line Steward cannot read carries nothing it could use.
			continue
		}
		typ := ev.Type
		if typ == "" {
			typ = msg.Event
		}
		switch typ {
		case "response.output_text.delta", "response.refusal.delta":
			// A refusal is the model's answer too, and the user reads it.
			if ev.Delta != "" {
				res.streamed.WriteString(ev.Delta)
				onText(ev.Delta)
			}
		case "response.output_text.annotation.added":
			var an annotation
			if json.Unmarshal(ev.Annotation, &an) == nil && an.Type == "url_citation" && an.URL != "" {
				res.citations = append(res.citations, llm.Citation{Title: an.Title, URL: an.URL})
			}
		case "response.output_item.done":
			done = append(done, data)
		case "response.completed", "response.incomplete":
			if err := res.completeEvent(data); err != nil {
				return nil, err
			}
			return res, nil
		case "response.failed":
			return nil, fmt.Errorf("the provider reported that the response failed: %s", failedMessage(ev.Response, data))
		case "error":
			return nil, fmt.Errorf("the provider reported an error in the stream: %s", eventError(ev, data))
		default:
			if typ == "" && len(ev.Error) > 0 && !bytes.Equal(ev.Error, []byte("null")) {
				// A Chat Completions style error object.
				return nil, fmt.Errorf("the provider reported an error in the stream: %s", llm.ErrorMessage(data))
			}
		}
	}
	// Without response.completed the output items that were done are no
	// whole answer: the model may have had more to say or more to call.
	if len(done) == 0 && res.streamed.Len() == 0 {
		return nil, fmt.Errorf("%w: the Responses stream ended without response.completed, and without any output", llm.ErrIncomplete)
	}
	return nil, fmt.Errorf("%w: the Responses stream ended without response.completed, after %d output items", llm.ErrIncomplete, len(done))
}

// responseBody is what Steward reads of a response object.
type responseBody struct {
	Status string            `json:"status"`
	Output []json.RawMessage `json:"output"`
	Error  json.RawMessage   `json:"error"`
	Usage  *struct {
		InputTokens        int `json:"input_tokens"`
		OutputTokens       int `json:"output_tokens"`
		InputTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"input_tokens_details"`
		OutputTokensDetails struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"output_tokens_details"`
	} `json:"usage"`
}

// complete reads a response object (a whole answer) into res.
func (res *result) complete(raw json.RawMessage) error {
	var resp responseBody
	if err := json.Unmarshal(raw, &resp); err != nil {
		return fmt.Errorf("the provider's response is not a Responses object: %w", err)
	}
	return res.take(resp, raw)
}

// completeEvent reads the response of a response.completed event into res,
// decoding the event once.
func (res *result) completeEvent(data []byte) error {
	var ev struct {
		Response responseBody `json:"response"`
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		return fmt.Errorf("the provider's completed response is not a Responses object: %w", err)
	}
	return res.take(ev.Response, data)
}

func (res *result) take(resp responseBody, raw []byte) error {
	if resp.Status == "failed" || (len(resp.Output) == 0 && len(resp.Error) > 0 && !bytes.Equal(resp.Error, []byte("null"))) {
		return fmt.Errorf("the provider reported that the response failed: %s", failedMessage(raw, raw))
	}
	res.output = resp.Output
	if resp.Usage != nil {
		res.usage = &llm.Usage{
			InputTokens:     resp.Usage.InputTokens,
			OutputTokens:    resp.Usage.OutputTokens,
			ReasoningTokens: resp.Usage.OutputTokensDetails.ReasoningTokens,
			CachedTokens:    resp.Usage.InputTokensDetails.CachedTokens,
		}
	}
	return nil
}

func failedMessage(response json.RawMessage, data []byte) string {
	var r struct {
		Error *struct {
			Code    any    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		IncompleteDetails *struct {
			Reason string `json:"reason"`
		} `json:"incomplete_details"`
	}
	if json.Unmarshal(response, &r) == nil {
		if r.Error != nil && r.Error.Message != "" {
			return r.Error.Message
		}
	}
	return llm.ErrorMessage(data)
}

func eventError(ev event, data []byte) string {
	if ev.Message != "" {
		return ev.Message
	}
	return llm.ErrorMessage(data)
}

// item is what Steward reads of an output item; the item itself travels on
// raw.
type item struct {
	Type             string  `json:"type"`
	ID               string  `json:"id"`
	CallID           string  `json:"call_id"`
	Name             string  `json:"name"`
	Arguments        string  `json:"arguments"`
	Role             string  `json:"role"`
	EncryptedContent *string `json:"encrypted_content"`
	Content          []struct {
		Type        string       `json:"type"`
		Text        string       `json:"text"`
		Refusal     string       `json:"refusal"`
		Annotations []annotation `json:"annotations"`
	} `json:"content"`
	Summary []struct {
		Text string `json:"text"`
	} `json:"summary"`
}

func (it item) text() string {
	var b strings.Builder
	for _, c := range it.Content {
		switch c.Type {
		case "output_text":
			b.WriteString(c.Text)
		case "refusal":
			b.WriteString(c.Refusal)
		}
	}
	return b.String()
}

func outputText(output []json.RawMessage) string {
	var b strings.Builder
	for _, raw := range output {
		var it item
		if json.Unmarshal(raw, &it) == nil && it.Type == "message" {
			b.WriteString(it.text())
		}
	}
	return b.String()
}

// finish turns a result into the round for the loop, the items to replay
// when the turn is recorded, and their texts.
func (a *adapter) finish(res *result) (*llm.Round, []json.RawMessage, []string) {
	round := &llm.Round{}
	var text strings.Builder
	usageCounts := true
	seen := map[string]bool{}
	addSource := func(c llm.Citation) {
		if c.URL == "" || seen[c.URL] {
			return
		}
		seen[c.URL] = true
		round.Sources = append(round.Sources, c)
	}
	for _, c := range res.citations {
		addSource(c)
	}
	parsed := make([]item, len(res.output))
	droppedReasoning := false
	for i, raw := range res.output {
		var it item
		if err := json.Unmarshal(raw, &it); err != nil {
			usageCounts = false
			continue
		}
		parsed[i] = it
		switch it.Type {
		case "message":
			text.WriteString(it.text())
			for _, c := range it.Content {
				for _, an := range c.Annotations {
					if an.Type == "url_citation" {
						addSource(llm.Citation{Title: an.Title, URL: an.URL})
					}
				}
			}
		case "function_call":
			round.Calls = append(round.Calls, toCall(it))
		case "reasoning":
			if it.EncryptedContent == nil || *it.EncryptedContent == "" {
				droppedReasoning = true
			}
		default:
			usageCounts = false
		}
	}
	round.Text = text.String()
	if round.Text == "" {
		round.Text = res.streamed.String()
	}
	if res.usage != nil && usageCounts {
		round.Usage = *res.usage
	}
	replay, texts := a.replayItems(res.output, parsed, droppedReasoning)
	return round, replay, texts
}

func toCall(it item) llm.Call {
	args := strings.TrimSpace(it.Arguments)
	if args == "" {
		// A function without parameters may come with no arguments at all.
		args = "{}"
	}
	c := llm.Call{ID: it.CallID, Name: it.Name}
	if json.Valid([]byte(args)) {
		c.Arguments = json.RawMessage(args)
	} else {
		// Keep what the model wrote, as a JSON string, for the trace.
		b, _ := json.Marshal(it.Arguments)
		c.Arguments = b
	}
	c.Valid = strings.TrimSpace(it.Name) != "" && args[0] == '{' && json.Valid([]byte(args))
	return c
}

// replayItems returns the output items as the next request carries them:
// all of them, raw, in order, reasoning included. A reasoning item without
// encrypted content can only be resolved from server-side storage, which
// store:false rules out: the server would answer 404. Such items are left
// out, and the round's other items are sent by value (without their ids,
// which point at the missing reasoning).
func (a *adapter) replayItems(raw []json.RawMessage, parsed []item, droppedReasoning bool) ([]json.RawMessage, []string) {
	var out []json.RawMessage
	var texts []string
	for i, r := range raw {
		it := parsed[i]
		switch it.Type {
		case "message":
			if t := it.text(); t != "" {
				texts = append(texts, t)
			}
		case "function_call":
			texts = append(texts, it.Name, it.Arguments)
		case "reasoning":
			for _, s := range it.Summary {
				if s.Text != "" {
					texts = append(texts, s.Text)
				}
			}
		}
		if !droppedReasoning {
			out = append(out, r)
			continue
		}
		switch it.Type {
		case "reasoning":
			if it.EncryptedContent == nil || *it.EncryptedContent == "" {
				a.opts.Logger.Warn("a reasoning item came without encrypted content and cannot be sent back statelessly; leaving it out")
				continue
			}
			out = append(out, r)
		case "message":
			if t := it.text(); t != "" {
				b, _ := llm.EncodeJSON(inputMessage{Role: "assistant", Content: t})
				out = append(out, b)
			}
		case "function_call":
			b, _ := llm.EncodeJSON(struct {
				Type      string `json:"type"`
				CallID    string `json:"call_id"`
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			}{"function_call", it.CallID, it.Name, it.Arguments})
			out = append(out, b)
		default:
			out = append(out, r)
		}
	}
	return out, texts
}
