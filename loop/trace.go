package loop

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"

	"github.com/stewardhq/steward/chat"
)

// Status is how a tool call ended.
type Status string

// The trace statuses.
const (
	StatusSuccess Status = "SUCCESS"
	StatusError   Status = "ERROR"
	StatusBlocked Status = "BLOCKED"
)

// MaskedValue replaces the value of a sensitive argument in a trace.
const MaskedValue = "*****"

// Trace records one tool call for the user. Result is kept in memory only
// and never serialized, so a stored trace never holds what a tool returned.
type Trace struct {
	// Order is the call's number within the run, from 1.
	Order int `json:"order"`
	// ToolID is the ID of the tool that ran; empty when none matched.
	ToolID string `json:"tool_id,omitempty"`
	// Name is the function name the model called.
	Name   string `json:"name"`
	CallID string `json:"call_id"`
	Status Status `json:"status"`
	// Executed is true when the tool's Execute was reached.
	Executed bool `json:"executed"`
	// StatusMessage says why a call was blocked or failed.
	StatusMessage string `json:"status_message,omitempty"`
	// Arguments are the call's top-level arguments in the model's order,
	// sensitive ones masked. Empty when the arguments were not a JSON
	// object.
	Arguments []Argument `json:"arguments"`
	// Result is the content the model received. In memory only.
	Result string `json:"-"`
}

// Argument is one top-level argument of a call as a trace shows it: a
// string's raw value, anything else as its JSON text.
type Argument struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// MaskArguments returns the top-level arguments of args for a trace, in
// their order, with every argument named in sensitive replaced by
// MaskedValue. Blank args count as {}. Arguments that are not a JSON object
// give nil, and their content is never quoted.
func MaskArguments(args json.RawMessage, sensitive []string) []Argument {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 {
		return []Argument{}
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil
	}
	out := []Argument{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		name, ok := tok.(string)
		if !ok {
			return nil
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil
		}
		value := string(raw)
		var s string
		if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
			value = s
		}
		if slices.Contains(sensitive, name) {
			value = MaskedValue
		}
		out = append(out, Argument{Name: name, Value: value})
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil
	}
	// Trailing data after the object makes the arguments unparsable.
	if _, err := dec.Token(); err != io.EOF {
		return nil
	}
	return out
}

// Stored returns the trace as a chat message keeps it: without the result,
// the masked arguments written as one JSON object of strings in the model's
// order ("" when they were not a JSON object).
func (t Trace) Stored() chat.Trace {
	return chat.Trace{
		Order:         t.Order,
		ToolID:        t.ToolID,
		ToolName:      t.Name,
		CallID:        t.CallID,
		Status:        string(t.Status),
		Executed:      t.Executed,
		StatusMessage: t.StatusMessage,
		Arguments:     argumentsJSON(t.Arguments),
	}
}

func argumentsJSON(args []Argument) string {
	if args == nil {
		return ""
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, a := range args {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSONString(&b, a.Name)
		b.WriteByte(':')
		writeJSONString(&b, a.Value)
	}
	b.WriteByte('}')
	return b.String()
}

func writeJSONString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // a string always encodes
	b.Truncate(b.Len() - 1) // the encoder's newline
}
