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
// A surface may add chat before a run and filter events between them.
const (
	// EventChat names the chat a run belongs to; `steward ask --json`
	// writes it first.
	EventChat EventType = "chat"
	// EventFilter reports what the prompt-injection filter removed from
	// fetched content, or could not check, once per tool call or
	// attachment that brought such content in.
	EventFilter EventType = "filter"
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
	// Chat is the chat of an EventChat.
	Chat *ChatInfo `json:"chat,omitempty"`
	// Filter is the report of an EventFilter.
	Filter *FilterReport `json:"filter,omitempty"`
}

// ChatInfo identifies the chat of a run.
type ChatInfo struct {
	// ID is the chat's full ID; `steward ask --chat ID` continues it.
	ID string `json:"id"`
	// Stored is false when the chat is not kept (--no-save).
	Stored bool `json:"stored"`
	// Continued is true when the run continues a stored chat.
	Continued bool `json:"continued"`
}

// FilterReport is what the prompt-injection filter did to the content one
// action brought in.
type FilterReport struct {
	// Sources are the sources something was removed from, each once.
	Sources []FilteredSource `json:"sources"`
	// Warning says that some sources could not be checked by the
	// classifier; empty otherwise.
	Warning string `json:"warning,omitempty"`
}

// FilteredSource is one source and what was removed from it.
type FilteredSource struct {
	// Kind is the kind of content, e.g. "WEB_CONTENT" or "MAIL_CONTENT".
	Kind string `json:"kind"`
	// Label names the source: a page's address, a mailbox and mail.
	Label string `json:"label"`
	// Fields are the parts of the source that had findings.
	Fields []string `json:"fields"`
	// Findings are what was neutralized, by rule and category.
	Findings []FilterFinding `json:"findings"`
}

// FilterFinding is one neutralized span.
type FilterFinding struct {
	Rule     string `json:"rule"`
	Category string `json:"category"`
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
