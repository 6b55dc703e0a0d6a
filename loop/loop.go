package loop

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/stewardhq/steward/llm"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
)

// The limits of one run.
const (
	// MaxToolCalls is the number of tool calls a run may make.
	MaxToolCalls = 15
	// MaxToolResultChars is the total length of all results of a run, in
	// UTF-16 code units (what the reference implementation counts).
	MaxToolResultChars = 300_000
)

// The texts the loop gives the model and the user.
const (
	// CharsLimitInstruction ends the tools once the results grew too long.
	CharsLimitInstruction = "The results of the tool calls in this request have passed the limit of 300000 characters in total. " +
		"Make no further tool calls. Give the user the best final answer you can from the tool results you already have."
	// CallsLimitInstruction ends the tools once 15 calls were made.
	CallsLimitInstruction = "This request has reached its limit of 15 tool calls, and no more tools are available. " +
		"Give the user the best final answer you can from the tool results you already have."
	// InvalidCallText answers an invalid call, and ends a run whose call
	// cannot be answered.
	InvalidCallText = "The tool call was invalid."
	// NoAnswerAfterCallText is shown when the model stopped after its calls
	// without a final text.
	NoAnswerAfterCallText = "The model finished its tool calls but gave no final answer."
	// NoAnswerAfterLimitText is shown when the final round brought no text.
	NoAnswerAfterLimitText = "The model gave no final answer after using the tool calls available to it."
	// CancelledCallText answers a call that could not run, or did not
	// finish, because the run was cancelled.
	CancelledCallText = "The tool call was cancelled before it finished."
	// separator goes between the texts of two rounds.
	separator = "\n\n"
	// invalidCallStatus is the status message of an invalid call's trace.
	invalidCallStatus = "Invalid tool call"
)

// ErrInvalidResponse is wrapped by the error of a run whose provider
// answered its first round with neither text nor a tool call.
var ErrInvalidResponse = errors.New("invalid tool calling response")

// Loop runs the rounds of one answer. Implementations may differ (an agent
// mode); the adapters stay the same.
type Loop interface {
	// Run asks the model through a until it answers, running its tool calls
	// in between, and reports what happens to sink as it happens. The
	// returned error is set when a round failed, the provider's answer was
	// unusable, or ctx was cancelled; the adapter's history then holds no
	// tool call without its result.
	Run(ctx context.Context, a llm.Adapter, rc RunContext, sink Sink) (Result, error)
}

// Options configure the standard loop. The zero value is ready to use.
type Options struct{}

// New returns the standard loop: sequential calls in the model's order,
// with MaxToolCalls and MaxToolResultChars checked per call.
func New(opts Options) Loop { return &standard{opts: opts} }

// Result is what a run came to.
type Result struct {
	// Text is the answer as shown: the deltas of every round with the
	// separators between rounds, and any closing text of the loop.
	Text string
	// Sources are the provider's citations and the tools' sources, without
	// duplicates; RenderSources writes them.
	Sources []Source
	// Traces record every counted call, in order.
	Traces []Trace
	// Usage is the sum of the usage of every round of the run.
	Usage llm.Usage
	// Rounds is the number of model requests that completed.
	Rounds int
	// Calls is the number of counted calls.
	Calls int
	// ResultChars is the total length of the results, in UTF-16 code units.
	ResultChars int
	// Stop says why the run ended.
	Stop StopReason
}

type standard struct {
	opts Options
}

type discard struct{}

func (discard) Emit(Event) {}

// run holds the state of one Run.
type run struct {
	a       llm.Adapter
	rc      RunContext
	sink    Sink
	text    strings.Builder
	sources sourceSet
	res     Result
	// shown is true once a round showed non-whitespace text.
	shown bool
	// spoke is true once the current round showed non-whitespace text.
	spoke bool
	// offered are the chat's requirements the current offer was made for.
	offered requirements
	// offer replaces the adapter's system prompt and tools once the
	// requirements tightened; nil until then.
	offer *llm.Offer
}

// requirements are what a chat demands of the rest of a run.
type requirements struct {
	confidence policy.Confidence
	security   policy.DataSecurity
	outbound   policy.OutboundRequirement
}

func requirementsOf(c Chat) requirements {
	return requirements{confidence: c.RequiredConfidence(), security: c.DataSecurity(), outbound: c.OutboundRequirement()}
}

// reoffer asks for a new offer when the chat's requirements changed since
// the current one was made. Requirements only tighten, so a change is a
// tightening.
func (r *run) reoffer(ctx context.Context) error {
	now := requirementsOf(r.rc.Chat)
	if now == r.offered || r.rc.Reoffer == nil {
		return nil
	}
	off, err := r.rc.Reoffer(ctx)
	if err != nil {
		return fmt.Errorf("offering the tools again after the chat's requirements tightened: %w", err)
	}
	r.rc.logger().Info("tools offered again: the chat's requirements tightened",
		"before", len(r.rc.Tools), "after", len(off.Tools), "restriction", now.outbound.Effective().String())
	r.offered = now
	// A tool offered before and no longer is refused with the reason when
	// the model calls it anyway, not answered as unknown.
	for _, t := range r.rc.Tools {
		if _, still := findTool(off.Tools, t.Function.Name); !still {
			if _, had := findTool(r.rc.Withdrawn, t.Function.Name); !had {
				r.rc.Withdrawn = append(r.rc.Withdrawn, t)
			}
		}
	}
	r.rc.Tools = off.Tools
	r.offer = &llm.Offer{System: off.System, Tools: ToolSpecs(off.Tools)}
	return nil
}

func (r *run) emitText(s string) {
	if s == "" {
		return
	}
	r.text.WriteString(s)
	r.sink.Emit(Event{Type: EventText, Text: s})
}

// onDelta streams a delta, putting the separator before the first
// non-whitespace delta of a round that follows a round which showed text.
func (r *run) onDelta(d string) {
	if !r.spoke && strings.TrimSpace(d) != "" {
		if r.shown {
			r.emitText(separator)
		}
		r.spoke = true
	}
	r.emitText(d)
}

func (r *run) trace(t Trace) {
	r.res.Traces = append(r.res.Traces, t)
	tc := t
	r.sink.Emit(Event{Type: EventTrace, Trace: &tc})
}

func (r *run) limitInstruction() string {
	switch {
	case r.res.ResultChars > MaxToolResultChars:
		return CharsLimitInstruction
	case r.res.Calls >= MaxToolCalls:
		return CallsLimitInstruction
	}
	return ""
}

// finish closes a run that ended normally.
func (r *run) finish(stop StopReason) (Result, error) {
	r.res.Stop = stop
	r.res.Text = r.text.String()
	r.res.Sources = r.sources.list
	if len(r.res.Sources) > 0 {
		r.sink.Emit(Event{Type: EventSources, Sources: r.res.Sources})
	}
	u := r.res.Usage
	r.sink.Emit(Event{Type: EventUsage, Usage: &u, Rounds: r.res.Rounds})
	r.sink.Emit(Event{Type: EventDone, Stop: stop})
	return r.res, nil
}

// fail closes a run that failed or was cancelled.
func (r *run) fail(err error) (Result, error) {
	stop := StopError
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		stop = StopCancelled
	}
	r.res.Stop = stop
	r.res.Text = r.text.String()
	r.res.Sources = r.sources.list
	if r.res.Rounds > 0 {
		// The rounds that completed were paid for.
		u := r.res.Usage
		r.sink.Emit(Event{Type: EventUsage, Usage: &u, Rounds: r.res.Rounds})
	}
	r.sink.Emit(Event{Type: EventError, Error: err.Error()})
	r.sink.Emit(Event{Type: EventDone, Stop: stop})
	return r.res, err
}

// Run implements Loop.
func (l *standard) Run(ctx context.Context, a llm.Adapter, rc RunContext, sink Sink) (Result, error) {
	if sink == nil {
		sink = discard{}
	}
	r := &run{a: a, rc: rc, sink: sink}
	for _, s := range rc.DataSourceSources {
		r.sources.add(s.Title, s.URL, OriginDataSource)
	}
	if rc.Chat == nil {
		return r.fail(errors.New("loop: RunContext.Chat is required"))
	}
	r.offered = requirementsOf(rc.Chat)
	for {
		if err := ctx.Err(); err != nil {
			return r.fail(err)
		}
		if err := r.reoffer(ctx); err != nil {
			if ctx.Err() != nil {
				return r.fail(ctx.Err())
			}
			return r.fail(err)
		}
		instr := r.limitInstruction()
		final := instr != ""
		r.spoke = false
		round, err := a.Round(ctx, llm.RoundOptions{FinalInstruction: instr, IncludeTools: !final, Offer: r.offer}, r.onDelta)
		if r.spoke {
			r.shown = true
		}
		if err != nil {
			if ctx.Err() != nil {
				return r.fail(ctx.Err())
			}
			return r.fail(fmt.Errorf("the request to the provider failed: %w", err))
		}
		if round == nil {
			return r.fail(fmt.Errorf("the adapter returned no round and no error"))
		}
		r.res.Rounds++
		r.res.Usage = r.res.Usage.Add(round.Usage)
		answered := r.spoke || strings.TrimSpace(round.Text) != ""
		r.sources.addCitations(round.Sources)

		// A call without an ID cannot be answered in any API, so it ends the
		// run before anything of this round is recorded.
		for _, c := range round.Calls {
			if strings.TrimSpace(c.ID) == "" {
				r.res.Calls++
				r.trace(r.invalidTrace(c))
				r.emitText(InvalidCallText)
				return r.finish(StopInvalidCall)
			}
		}
		if final {
			if !answered {
				r.emitText(NoAnswerAfterLimitText)
			}
			return r.finish(StopLimit)
		}
		if len(round.Calls) == 0 {
			switch {
			case answered:
				return r.finish(StopAnswered)
			case r.res.Calls > 0:
				r.emitText(NoAnswerAfterCallText)
				return r.finish(StopNoAnswer)
			default:
				return r.fail(fmt.Errorf("%w: the provider '%s' answered with neither text nor a tool call; check its tool calling configuration and see the log for details",
					ErrInvalidResponse, r.rc.ProviderName))
			}
		}
		if err := r.runCalls(ctx, round.Calls); err != nil {
			return r.fail(err)
		}
	}
}

// runCalls records the model's turn and answers every call of it, in order.
// On cancellation every call not yet answered gets the cancellation text, so
// the history never holds a call without its result.
func (r *run) runCalls(ctx context.Context, calls []llm.Call) error {
	r.a.RecordAssistantTurn()
	for i, c := range calls {
		if err := ctx.Err(); err != nil {
			r.cancelRest(calls[i:])
			return err
		}
		if !c.Valid {
			r.res.Calls++
			r.trace(r.invalidTrace(c))
			r.res.ResultChars += tool.UTF16Len(InvalidCallText)
			r.a.RecordToolResult(c.ID, InvalidCallText, true)
			continue
		}
		if instr := r.limitInstruction(); instr != "" {
			// Neither traced nor counted: the call never ran.
			r.a.RecordToolResult(c.ID, instr, false)
			continue
		}
		r.res.Calls++
		order := r.res.Calls
		toolID := ""
		if off, ok := findTool(r.rc.Tools, c.Name); ok {
			toolID = off.Definition.ID
		}
		r.sink.Emit(Event{Type: EventToolCall, Call: &CallStart{Order: order, CallID: c.ID, Name: c.Name, ToolID: toolID}})
		out, err := Execute(ctx, c, order, r.rc)
		if err != nil {
			r.cancelRest(calls[i:])
			return err
		}
		r.res.ResultChars += tool.UTF16Len(out.Content)
		if !out.IsError() {
			r.sources.addTool(out.Sources)
		}
		r.trace(out.Trace)
		r.a.RecordToolResult(c.ID, out.Content, out.IsError())
	}
	return nil
}

func (r *run) cancelRest(calls []llm.Call) {
	for _, c := range calls {
		r.a.RecordToolResult(c.ID, CancelledCallText, true)
	}
}

func (r *run) invalidTrace(c llm.Call) Trace {
	var sensitive []string
	toolID := ""
	if off, ok := findTool(r.rc.Tools, c.Name); ok && off.Tool != nil {
		sensitive = off.Tool.SensitiveArguments()
		toolID = off.Definition.ID
	}
	return Trace{
		Order:         r.res.Calls,
		ToolID:        toolID,
		Name:          c.Name,
		CallID:        c.ID,
		Status:        StatusError,
		StatusMessage: invalidCallStatus,
		Arguments:     MaskArguments(c.Arguments, sensitive),
		Result:        InvalidCallText,
	}
}
