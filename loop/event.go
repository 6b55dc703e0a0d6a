package loop

import (
	"strings"

	"github.com/stewardhq/steward/llm"
)

// EventType names what an Event reports. The JSON values are a stable
// interface: `steward ask --json` writes one Event per line.
type EventType string

// The event types, in the order they may occur within a run: text deltas,
// tool calls and traces interleave; a run that ends normally closes with
// sources (when there are any), usage and done; a run that fails or is
// cancelled closes with usage (when a round completed), error and done.
const (
	// EventText carries a piece of the answer's text, as it arrives.
	EventText EventType = "text"
	// EventToolCall says a tool call is about to run.
	EventToolCall EventType = "tool_call"
	// EventTrace reports how a call ended.
	EventTrace EventType = "trace"
	// EventSources carries every source of the answer, once, at the end.
	EventSources EventType = "sources"
	// EventUsage carries the token usage of the whole run (the sum over its
	// completed rounds), once, at the end.
	EventUsage EventType = "usage"
	// EventError reports why the run failed or was cancelled.
	EventError EventType = "error"
	// EventDone is always the last event of a run.
	EventDone EventType = "done"
)

// Event is one thing that happened during a run. Exactly the field that
// belongs to Type is set.
type Event struct {
	Type EventType `json:"type"`
	// Text is the delta of an EventText.
	Text string `json:"text,omitempty"`
	// Call is the call of an EventToolCall.
	Call *CallStart `json:"call,omitempty"`
	// Trace is the trace of an EventTrace.
	Trace *Trace `json:"trace,omitempty"`
	// Sources are the sources of an EventSources.
	Sources []Source `json:"sources,omitempty"`
	// Usage is the summed usage of an EventUsage; Rounds says over how many
	// model requests it was summed.
	Usage  *llm.Usage `json:"usage,omitempty"`
	Rounds int        `json:"rounds,omitempty"`
	// Error is the message of an EventError.
	Error string `json:"error,omitempty"`
	// Stop says why the run ended, in an EventDone.
	Stop StopReason `json:"stop,omitempty"`
}

// CallStart identifies a tool call that is about to run.
type CallStart struct {
	// Order is the call's number within the run, from 1.
	Order  int    `json:"order"`
	CallID string `json:"call_id"`
	// Name is the function name the model called.
	Name string `json:"name"`
	// ToolID is the ID of the tool that will run it.
	ToolID string `json:"tool_id"`
}

// Sink receives the events of a run as they happen, from the goroutine that
// called Run. It must not block for long: the stream waits for it.
type Sink interface {
	Emit(Event)
}

// SinkFunc adapts a function to a Sink.
type SinkFunc func(Event)

// Emit calls f.
func (f SinkFunc) Emit(e Event) { f(e) }

// StopReason says why a run ended.
type StopReason string

// The reasons a run ends.
const (
	// StopAnswered: the model answered without asking for more calls.
	StopAnswered StopReason = "answered"
	// StopLimit: a limit ended the tools and the final round ran.
	StopLimit StopReason = "limit"
	// StopInvalidCall: a call without an ID could not be answered.
	StopInvalidCall StopReason = "invalid_call"
	// StopNoAnswer: the model stopped after tool calls without a final text.
	StopNoAnswer StopReason = "no_answer"
	// StopError: a round failed or the provider gave an unusable answer.
	StopError StopReason = "error"
	// StopCancelled: the context was cancelled.
	StopCancelled StopReason = "cancelled"
)

// UsingTools is the status line shown while calls run: "Using tool: X" for
// one name, "Using tools: X, Y" for several, "" for none.
func UsingTools(names ...string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return "Using tool: " + names[0]
	}
	return "Using tools: " + strings.Join(names, ", ")
}
