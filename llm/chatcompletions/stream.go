package chatcompletions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/stewardhq/steward/llm"
)

// ErrEmptyStream is returned when an answer held no readable chunk.
var ErrEmptyStream = errors.New("the provider's answer held no readable chat completion chunk")

// StreamError is an error the provider reported inside a 200 answer: an
// "event: error", or an "error" object in a chunk.
type StreamError struct {
	Message string
	Code    string
}

func (e *StreamError) Error() string {
	if e.Code != "" {
		return fmt.Sprintf("provider reported an error in its stream (%s): %s", e.Code, e.Message)
	}
	return "provider reported an error in its stream: " + e.Message
}

// accumulated is one answer put together from its chunks.
type accumulated struct {
	text             strings.Builder
	reasoningContent strings.Builder
	reasoningText    strings.Builder
	details          detailsAcc
	calls            []*callAcc
	byIndex          map[int]*callAcc
	byID             map[string]*callAcc
	last             *callAcc
	usage            llm.Usage
	sources          []llm.Citation
	finishReason     string
	readable         int
}

// callAcc is one tool call being put together.
type callAcc struct {
	id           string
	typ          string
	name         string
	args         strings.Builder
	extraContent json.RawMessage
}

// wire shapes, decoded leniently: fields whose type varies between hosts
// stay raw.
type wireChunk struct {
	Object        string          `json:"object"`
	Type          string          `json:"type"`
	Choices       []wireChoice    `json:"choices"`
	Usage         *wireUsage      `json:"usage"`
	XGroq         *wireXGroq      `json:"x_groq"`
	Error         json.RawMessage `json:"error"`
	Citations     []string        `json:"citations"`
	SearchResults []wireSearch    `json:"search_results"`
}

type wireXGroq struct {
	Usage *wireUsage `json:"usage"`
}

type wireSearch struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

type wireChoice struct {
	Index        int             `json:"index"`
	Delta        *wireDelta      `json:"delta"`
	Message      *wireDelta      `json:"message"`
	FinishReason *string         `json:"finish_reason"`
	Error        json.RawMessage `json:"error"`
}

type wireDelta struct {
	Content          contentValue      `json:"content"`
	ReasoningContent lenientString     `json:"reasoning_content"`
	Reasoning        lenientString     `json:"reasoning"`
	ReasoningDetails []json.RawMessage `json:"reasoning_details"`
	ToolCalls        []wireToolDelta   `json:"tool_calls"`
	Annotations      []wireAnnotation  `json:"annotations"`
}

type wireToolDelta struct {
	Index        *int            `json:"index"`
	ID           lenientString   `json:"id"`
	Type         lenientString   `json:"type"`
	Function     *wireFunction   `json:"function"`
	ExtraContent json.RawMessage `json:"extra_content"`
}

type wireFunction struct {
	Name      lenientString `json:"name"`
	Arguments argsValue     `json:"arguments"`
}

type wireAnnotation struct {
	Type        string `json:"type"`
	URLCitation *struct {
		URL   string `json:"url"`
		Title string `json:"title"`
	} `json:"url_citation"`
}

type wireUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// rawString returns the JSON string in raw, or "" for null, absent or any
// other type.
func rawString(raw json.RawMessage) string {
	if len(raw) == 0 || raw[0] != '"' {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// lenientString decodes a JSON string; null and any other type read as
// "", so one odd field never makes a whole chunk unreadable.
type lenientString string

func (s *lenientString) UnmarshalJSON(b []byte) error {
	*s = lenientString(quotedString(b))
	return nil
}

// quotedString returns the string a JSON string literal stands for, or ""
// for anything else. Literals without escapes are taken as they are.
func quotedString(b []byte) string {
	if len(b) < 2 || b[0] != '"' {
		return ""
	}
	if bytes.IndexByte(b, '\\') < 0 && utf8.Valid(b) {
		return string(b[1 : len(b)-1])
	}
	var v string
	if json.Unmarshal(b, &v) != nil {
		return ""
	}
	return v
}

// argsValue reads tool call arguments: a string, or an object or array some
// hosts send instead, kept as JSON text.
type argsValue string

func (a *argsValue) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) > 0 && b[0] == '"':
		*a = argsValue(quotedString(b))
	case len(b) > 0 && (b[0] == '{' || b[0] == '['):
		*a = argsValue(b)
	default:
		*a = ""
	}
	return nil
}

// contentValue reads a delta's content: a string, or a list of parts whose
// text parts count (Mistral sends content chunks).
type contentValue string

func (c *contentValue) UnmarshalJSON(b []byte) error {
	*c = contentValue(contentText(b))
	return nil
}

func contentText(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		return quotedString(raw)
	case '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(raw, &parts) != nil {
			return ""
		}
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" || p.Type == "" {
				b.WriteString(p.Text)
			}
		}
		return b.String()
	}
	return ""
}

// streamErrorFrom reads an error object or string; ok is false for null or
// an empty value.
func streamErrorFrom(raw json.RawMessage) (*StreamError, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "{}" || string(raw) == `""` {
		return nil, false
	}
	if raw[0] == '"' {
		return &StreamError{Message: rawString(raw)}, true
	}
	var e struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return &StreamError{Message: llm.ErrorMessage(raw)}, true
	}
	code := rawString(e.Code)
	if code == "" && len(e.Code) > 0 && string(e.Code) != "null" {
		code = string(e.Code)
	}
	if code == "" {
		code = e.Type
	}
	msg := e.Message
	if msg == "" {
		msg = llm.ErrorMessage(raw)
	}
	return &StreamError{Message: msg, Code: code}, true
}

// eventError reads the data of an "event: error".
func eventError(data []byte) *StreamError {
	var wrapper struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &wrapper) == nil {
		if e, ok := streamErrorFrom(wrapper.Error); ok {
			return e
		}
	}
	if e, ok := streamErrorFrom(data); ok {
		return e
	}
	return &StreamError{Message: "(no details)"}
}

// addChunk folds one decoded data payload into the answer. It returns an
// error the provider reported in it.
func (a *accumulated) addChunk(data []byte, onText func(string), nonStreaming bool) error {
	var c wireChunk
	if len(data) == 0 || data[0] != '{' {
		return nil // unreadable lines are skipped
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return nil // unreadable lines are skipped
	}
	if c.Choices == nil && c.Usage == nil && c.XGroq == nil && len(c.Error) == 0 && c.Type != "error" && c.Citations == nil && c.SearchResults == nil {
		return nil // a ping or another object that is no chunk
	}
	a.readable++
	if e, ok := streamErrorFrom(c.Error); ok {
		return e
	}
	if c.Type == "error" {
		return eventError(data)
	}
	if u := c.Usage; u != nil {
		a.setUsage(u)
	} else if c.XGroq != nil && c.XGroq.Usage != nil {
		a.setUsage(c.XGroq.Usage)
	}
	for _, u := range c.Citations {
		a.addSource("", u)
	}
	for _, s := range c.SearchResults {
		a.addSource(s.Title, s.URL)
	}
	if len(c.Choices) == 0 {
		return nil
	}
	// Only the first choice counts.
	ch := c.Choices[0]
	for _, x := range c.Choices {
		if x.Index == 0 {
			ch = x
			break
		}
	}
	if e, ok := streamErrorFrom(ch.Error); ok {
		return e
	}
	if ch.FinishReason != nil && *ch.FinishReason != "" {
		a.finishReason = *ch.FinishReason
	}
	d := ch.Delta
	if d == nil {
		d = ch.Message
		nonStreaming = true
	}
	if d == nil {
		return nil
	}
	if t := string(d.Content); t != "" {
		a.text.WriteString(t)
		if onText != nil {
			onText(t)
		}
	}
	a.reasoningContent.WriteString(string(d.ReasoningContent))
	a.reasoningText.WriteString(string(d.Reasoning))
	for _, rd := range d.ReasoningDetails {
		a.details.add(rd)
	}
	for _, an := range d.Annotations {
		if an.URLCitation != nil {
			a.addSource(an.URLCitation.Title, an.URLCitation.URL)
		}
	}
	for i, td := range d.ToolCalls {
		if nonStreaming && td.Index == nil {
			// A whole message lists whole calls; their position is their
			// index.
			idx := i
			td.Index = &idx
		}
		a.addToolDelta(td)
	}
	return nil
}

func (a *accumulated) setUsage(u *wireUsage) {
	n := llm.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
	if u.PromptTokensDetails != nil {
		n.CachedTokens = u.PromptTokensDetails.CachedTokens
	}
	if u.CompletionTokensDetails != nil {
		n.ReasoningTokens = u.CompletionTokensDetails.ReasoningTokens
	}
	if n != (llm.Usage{}) {
		a.usage = n
	}
}

func (a *accumulated) addSource(title, url string) {
	url = strings.TrimSpace(url)
	if url == "" {
		return
	}
	for i, s := range a.sources {
		if s.URL == url {
			if s.Title == "" {
				a.sources[i].Title = title
			}
			return
		}
	}
	a.sources = append(a.sources, llm.Citation{Title: title, URL: url})
}

// addToolDelta matches a fragment to its call: by index, else by id (an
// unknown id opens a new call), else the last opened call. A known index
// that arrives with a different id opens a new call too: Ollama sends every
// call at index 0, each with its own id.
func (a *accumulated) addToolDelta(td wireToolDelta) {
	id := strings.TrimSpace(string(td.ID))
	var c *callAcc
	switch {
	case td.Index != nil:
		if k := a.byIndex[*td.Index]; k != nil && (id == "" || k.id == "" || k.id == id) {
			c = k
		} else {
			c = a.open()
			a.byIndex[*td.Index] = c
		}
	case id != "":
		if c = a.byID[id]; c == nil {
			c = a.open()
		}
	case a.last != nil:
		c = a.last
	default:
		c = a.open()
	}
	if c.id == "" && id != "" {
		c.id = id
		a.byID[id] = c
	}
	if c.typ == "" {
		c.typ = strings.TrimSpace(string(td.Type))
	}
	if len(c.extraContent) == 0 && len(td.ExtraContent) > 0 && string(td.ExtraContent) != "null" {
		c.extraContent = bytes.Clone(td.ExtraContent)
	}
	if f := td.Function; f != nil {
		if c.name == "" {
			c.name = strings.TrimSpace(string(f.Name))
		}
		c.args.WriteString(string(f.Arguments))
	}
}

func (a *accumulated) open() *callAcc {
	if a.byIndex == nil {
		a.byIndex = map[int]*callAcc{}
		a.byID = map[string]*callAcc{}
	}
	c := &callAcc{}
	a.calls = append(a.calls, c)
	a.last = c
	return c
}

// detailsAcc merges OpenRouter's reasoning_details fragments: entries with
// the same index (else the same type, when no index is given) are one
// detail; text, summary and data concatenate, other fields keep their first
// non-empty value. Unknown fields are kept.
type detailsAcc struct {
	items []map[string]json.RawMessage
	keys  []string
}

func (d *detailsAcc) add(raw json.RawMessage) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return
	}
	key := ""
	if idx, ok := m["index"]; ok && string(idx) != "null" {
		key = "i" + string(idx)
	} else {
		key = "t" + string(m["type"])
	}
	for i, k := range d.keys {
		if k != key {
			continue
		}
		cur := d.items[i]
		for f, v := range m {
			switch f {
			case "text", "summary", "data":
				if s := rawString(v); s != "" {
					joined, _ := json.Marshal(rawString(cur[f]) + s)
					cur[f] = joined
				}
			default:
				if old, ok := cur[f]; !ok || string(old) == "null" || string(old) == `""` {
					cur[f] = bytes.Clone(v)
				}
			}
		}
		return
	}
	c := make(map[string]json.RawMessage, len(m))
	for f, v := range m {
		c[f] = bytes.Clone(v)
	}
	d.items = append(d.items, c)
	d.keys = append(d.keys, key)
}

func (d *detailsAcc) marshal() json.RawMessage {
	if len(d.items) == 0 {
		return nil
	}
	b, err := json.Marshal(d.items)
	if err != nil {
		return nil
	}
	return b
}

// readSSE reads a streamed answer. The answer is complete once [DONE] or a
// finish_reason arrived; a stream that ends before either, or breaks off,
// is an error wrapping llm.ErrIncomplete.
func readSSE(r io.Reader, onText func(string)) (*accumulated, error) {
	a := &accumulated{}
	sr := llm.NewSSEReader(r)
	done := false
	for {
		ev, err := sr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if a.finishReason != "" {
				// The answer was complete; what broke after is of no
				// consequence.
				break
			}
			if errors.Is(err, llm.ErrSSELineTooLong) {
				return a, fmt.Errorf("reading the provider's stream: %w", err)
			}
			return a, fmt.Errorf("%w: reading the stream failed after %d chunks: %w", llm.ErrIncomplete, a.readable, err)
		}
		data := bytes.TrimSpace(ev.Data)
		if ev.Event == "error" {
			a.readable++
			return a, eventError(data)
		}
		if len(data) == 0 {
			continue
		}
		if string(data) == "[DONE]" {
			// The answer is complete; a host that keeps the connection open
			// afterwards must not hold the round.
			done = true
			break
		}
		if err := a.addChunk(data, onText, false); err != nil {
			return a, err
		}
	}
	if a.readable == 0 {
		if done {
			return a, ErrEmptyStream
		}
		return a, fmt.Errorf("%w: %w", ErrEmptyStream, llm.ErrIncomplete)
	}
	if !done && a.finishReason == "" {
		return a, fmt.Errorf("%w: no finish_reason and no [DONE] after %d chunks", llm.ErrIncomplete, a.readable)
	}
	return a, nil
}

// maxJSONAnswer caps a non-streamed answer.
const maxJSONAnswer = 32 << 20

// readJSON reads a host's non-streamed answer (one that ignored
// stream:true).
func readJSON(r io.Reader, onText func(string)) (*accumulated, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxJSONAnswer+1))
	if err != nil {
		return nil, fmt.Errorf("reading the provider's answer: %w", err)
	}
	if len(b) > maxJSONAnswer {
		return nil, fmt.Errorf("the provider's answer is larger than %d MiB", maxJSONAnswer>>20)
	}
	a := &accumulated{}
	if err := a.addChunk(bytes.TrimSpace(b), onText, true); err != nil {
		return a, err
	}
	if a.readable == 0 {
		return a, ErrEmptyStream
	}
	return a, nil
}
