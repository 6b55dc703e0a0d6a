package loop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stewardhq/steward/llm"
	"github.com/stewardhq/steward/loop"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
)

// step is one scripted model response.
type step struct {
	deltas  []string
	text    string // Round.Text; defaults to the joined deltas
	calls   []llm.Call
	sources []llm.Citation
	usage   llm.Usage
	err     error
	// during runs after the deltas, before the round completes (e.g. to
	// cancel the run mid-stream); a non-nil error fails the round.
	during func(ctx context.Context) error
}

// entry is one item of the fake adapter's recorded history.
type entry struct {
	assistant bool
	calls     []llm.Call
	callID    string
	content   string
	isError   bool
}

// failer is what the fakes need of a test: *testing.T or *rapid.T.
type failer interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// scripted is a fake llm.Adapter that plays a script and records what the
// loop records, checking the contract as it goes.
type scripted struct {
	t       failer
	steps   []step
	next    int
	opts    []llm.RoundOptions
	history []entry
	last    *llm.Round
	turnRec bool
}

func newScripted(t *testing.T, steps ...step) *scripted {
	return &scripted{t: t, steps: steps}
}

func (s *scripted) Round(ctx context.Context, o llm.RoundOptions, onText func(string)) (*llm.Round, error) {
	if s.next >= len(s.steps) {
		s.t.Fatalf("the loop asked for round %d, the script has %d", s.next+1, len(s.steps))
	}
	st := s.steps[s.next]
	s.next++
	s.opts = append(s.opts, o)
	s.last, s.turnRec = nil, false
	for _, d := range st.deltas {
		onText(d)
	}
	if st.during != nil {
		if err := st.during(ctx); err != nil {
			return nil, err
		}
	}
	if st.err != nil {
		return nil, st.err
	}
	text := st.text
	if text == "" {
		text = strings.Join(st.deltas, "")
	}
	s.last = &llm.Round{Text: text, Calls: st.calls, Sources: st.sources, Usage: st.usage}
	return s.last, nil
}

func (s *scripted) RecordAssistantTurn() {
	if s.last == nil {
		s.t.Errorf("RecordAssistantTurn without a completed round")
		return
	}
	if s.turnRec {
		s.t.Errorf("RecordAssistantTurn twice in one round")
	}
	s.turnRec = true
	s.history = append(s.history, entry{assistant: true, calls: s.last.Calls})
}

func (s *scripted) RecordToolResult(callID, content string, isError bool) {
	if !s.turnRec {
		s.t.Errorf("RecordToolResult(%q) before RecordAssistantTurn", callID)
	}
	s.history = append(s.history, entry{callID: callID, content: content, isError: isError})
}

func (s *scripted) RecordedTexts() []string { return nil }

// results returns the recorded results in order.
func (s *scripted) results() []entry {
	var out []entry
	for _, e := range s.history {
		if !e.assistant {
			out = append(out, e)
		}
	}
	return out
}

// checkPaired fails the test unless every recorded assistant turn is
// followed by exactly one result per call, in the calls' order.
func (s *scripted) checkPaired() {
	s.t.Helper()
	h := s.history
	for i := 0; i < len(h); {
		if !h[i].assistant {
			s.t.Fatalf("history item %d is a result without an assistant turn", i)
		}
		calls := h[i].calls
		i++
		for _, c := range calls {
			if i >= len(h) || h[i].assistant {
				s.t.Fatalf("call %q has no result in the history", c.ID)
			}
			if h[i].callID != c.ID {
				s.t.Fatalf("result for %q where %q was expected", h[i].callID, c.ID)
			}
			i++
		}
	}
}

// fakeChat is a loop.Chat in memory.
type fakeChat struct {
	mu         sync.Mutex
	confidence policy.Confidence
	security   policy.DataSecurity
	outbound   policy.OutboundRequirement
	addresses  []string
}

func (c *fakeChat) IsWebAddressGiven(string) bool { return false }
func (c *fakeChat) OutboundRequirement() policy.OutboundRequirement {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.outbound
}
func (c *fakeChat) RequiredConfidence() policy.Confidence {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.confidence
}
func (c *fakeChat) RequireConfidence(x policy.Confidence) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.confidence = policy.Max(c.confidence, x)
}
func (c *fakeChat) RequireDataSecurity(d policy.DataSecurity) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.security = policy.TightenDataSecurity(c.security, d)
}
func (c *fakeChat) DataSecurity() policy.DataSecurity {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.security
}
func (c *fakeChat) RequireOutbound(r policy.OutboundRequirement) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.outbound = c.outbound.Tighten(r)
}
func (c *fakeChat) AddToolAddresses(keys ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.addresses = append(c.addresses, keys...)
}

// fakeTool is a tool whose behaviour a test sets.
type fakeTool struct {
	tool.Base
	outbound  policy.OutboundData
	enforces  bool
	sensitive []string
	exec      func(ctx context.Context, args json.RawMessage, ec tool.ExecContext) (tool.Result, error)
	mu        sync.Mutex
	seen      []tool.ExecContext
}

func (f *fakeTool) OutboundData() policy.OutboundData { return f.outbound }
func (f *fakeTool) EnforcesOutboundRestriction() bool { return f.enforces }
func (f *fakeTool) SensitiveArguments() []string      { return f.sensitive }
func (f *fakeTool) Execute(ctx context.Context, args json.RawMessage, ec tool.ExecContext) (tool.Result, error) {
	f.mu.Lock()
	f.seen = append(f.seen, ec)
	f.mu.Unlock()
	return f.exec(ctx, args, ec)
}

func (f *fakeTool) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.seen)
}

func newTool(name string, outbound policy.OutboundData, exec func(ctx context.Context, args json.RawMessage, ec tool.ExecContext) (tool.Result, error)) *fakeTool {
	return &fakeTool{
		Base:     tool.Base{Def: tool.Definition{ID: name, Function: tool.Function{Name: name, Parameters: json.RawMessage(`{"type":"object"}`)}}},
		outbound: outbound,
		exec:     exec,
	}
}

func textTool(name, text string) *fakeTool {
	return newTool(name, policy.NoOutbound, func(context.Context, json.RawMessage, tool.ExecContext) (tool.Result, error) {
		return tool.Result{Text: text}, nil
	})
}

func offer(tools ...*fakeTool) []tool.Offered {
	out := make([]tool.Offered, len(tools))
	for i, t := range tools {
		out[i] = tool.Offered{Definition: t.Def, Function: t.Def.Function, Tool: t, Settings: tool.Settings{"k": "v"}}
	}
	return out
}

func call(id, name, args string) llm.Call {
	return llm.Call{ID: id, Name: name, Arguments: json.RawMessage(args), Valid: true}
}

// recorder is a Sink that keeps every event.
type recorder struct {
	events []loop.Event
}

func (r *recorder) Emit(e loop.Event) { r.events = append(r.events, e) }

func (r *recorder) text() string {
	var b strings.Builder
	for _, e := range r.events {
		if e.Type == loop.EventText {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

func (r *recorder) types() []loop.EventType {
	var out []loop.EventType
	for _, e := range r.events {
		out = append(out, e.Type)
	}
	return out
}

func (r *recorder) last() loop.Event {
	if len(r.events) == 0 {
		return loop.Event{}
	}
	return r.events[len(r.events)-1]
}

func runLoop(t *testing.T, ctx context.Context, a llm.Adapter, rc loop.RunContext) (loop.Result, *recorder, error) {
	t.Helper()
	rec := &recorder{}
	if rc.Chat == nil {
		rc.Chat = &fakeChat{}
	}
	if rc.ProviderName == "" {
		rc.ProviderName = "Test Provider"
	}
	res, err := loop.New(loop.Options{}).Run(ctx, a, rc, rec)
	if rec.last().Type != loop.EventDone {
		t.Errorf("the last event is %q, want done", rec.last().Type)
	}
	if res.Text != rec.text() {
		t.Errorf("Result.Text %q differs from the streamed text %q", res.Text, rec.text())
	}
	return res, rec, err
}

func ids(n int, prefix string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i+1)
	}
	return out
}
