package llm

import (
	"context"
	"encoding/json"
)

// Adapter translates between one provider API's wire format and the loop.
// It is stateful and serves one run: it holds the request base and the tool
// conversation recorded so far.
type Adapter interface {
	// Round sends one request and streams the answer. Text deltas go to
	// onText as they arrive. finalInstruction, when not empty, is appended
	// to this round's system prompt after a blank line. includeTools false
	// sends the request without tools.
	//
	// An error means the round failed (HTTP error, stream error, a stream
	// that ended without completing); it is never an empty answer.
	Round(ctx context.Context, opts RoundOptions, onText func(string)) (*Round, error)
	// RecordAssistantTurn records the model's turn of the last round, once,
	// before any result of that round.
	RecordAssistantTurn()
	// RecordToolResult records the result of one call of the last round.
	// isError marks failed, blocked and invalid calls where the API has a
	// flag for it.
	RecordToolResult(callID, content string, isError bool)
	// RecordedTexts returns the texts recorded items add to later requests,
	// for live token counts.
	RecordedTexts() []string
}

// RoundOptions steer one round.
type RoundOptions struct {
	FinalInstruction string
	IncludeTools     bool
	// Offer, when not nil, replaces the system prompt and the tools the
	// adapter was built with, for this round. The loop sets it once the
	// chat's requirements tightened during the run, so that a tool that can
	// no longer run is no longer offered and its instructions are gone.
	Offer *Offer
}

// Offer is what a round offers the model: the effective system prompt and
// the functions.
type Offer struct {
	System string
	Tools  []ToolSpec
}

// Effective returns the system prompt and the tools of a round: the
// offer's when one is set, otherwise those of req.
func (o RoundOptions) Effective(req Request) (system string, tools []ToolSpec) {
	if o.Offer != nil {
		return o.Offer.System, o.Offer.Tools
	}
	return req.System, req.Tools
}

// Round is what one model response came to.
type Round struct {
	// Text is the whole text output; it only tells an answered round from a
	// silent one, the deltas already carried it.
	Text string
	// Calls are the tool calls in the model's order. Invalid calls are
	// carried through, never dropped.
	Calls []Call
	// Sources are citations the provider attached.
	Sources []Citation
	// Usage is the token usage the provider reported, if any.
	Usage Usage
}

// Call is one tool call the model asked for.
type Call struct {
	// ID is empty when the call cannot be answered (Responses without
	// call_id).
	ID        string
	Name      string
	Arguments json.RawMessage
	// Valid is false for a malformed name or arguments that are not a JSON
	// object.
	Valid bool
}

// Citation is a source the provider itself attached to an answer.
type Citation struct {
	Title string
	URL   string
}

// Usage counts tokens.
type Usage struct {
	InputTokens     int `json:"input_tokens"`
	OutputTokens    int `json:"output_tokens"`
	ReasoningTokens int `json:"reasoning_tokens,omitempty"`
	CachedTokens    int `json:"cached_tokens,omitempty"`
}

// Add sums two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		InputTokens:     u.InputTokens + o.InputTokens,
		OutputTokens:    u.OutputTokens + o.OutputTokens,
		ReasoningTokens: u.ReasoningTokens + o.ReasoningTokens,
		CachedTokens:    u.CachedTokens + o.CachedTokens,
	}
}

// Request is the provider-neutral base of every request of a run.
type Request struct {
	Model string
	// System is the effective system prompt, tool instructions included.
	System string
	// Messages is the chat so far, oldest first, ending with the user's
	// message.
	Messages []Message
	// Tools are the functions offered; empty means no tools.
	Tools []ToolSpec
	// MaxTokens caps the answer where the API needs it (Anthropic).
	MaxTokens int
	// Extra are additional API parameters from configuration, written at the
	// top level of the body. They can never override what the adapter sets
	// itself (model, messages, stream, tools, parallel_tool_calls…).
	Extra map[string]any
}

// Role of a chat message.
type Role string

// The roles of chat messages.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one earlier message of the chat.
type Message struct {
	Role Role
	Text string
}

// ToolSpec is a function as offered to a provider, before any wire shape.
type ToolSpec struct {
	Name        string
	Description string
	// Parameters is the canonical JSON Schema, as written.
	Parameters json.RawMessage
	// Strict is the definition's strict flag; an adapter keeps strict mode
	// only where the host binds the model's output to the schema.
	Strict bool
}
