package loop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/stewardhq/steward/loop"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
)

// TestRunProperties drives the loop with random scripts (random texts,
// valid, invalid and ID-less calls, tools that succeed, fail, block, panic
// or return long results) and checks what must hold for every run.
func TestRunProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		sizes := []int{0, 10, 5_000, 45_000}
		mk := func(name string, behave int) *fakeTool {
			return newTool(name, policy.NoOutbound, func(context.Context, json.RawMessage, tool.ExecContext) (tool.Result, error) {
				switch behave {
				case 0:
					return tool.Result{}, errors.New("failed")
				case 1:
					return tool.Result{}, tool.Blocked("blocked")
				case 2:
					panic("boom")
				}
				return tool.Result{Text: strings.Repeat("r", sizes[behave-3])}, nil
			})
		}
		var tools []*fakeTool
		for i := range 7 {
			tools = append(tools, mk(fmt.Sprint("t", i), i))
		}
		offered := offer(tools...)
		// rapid leans towards small values; counting down from the maximum
		// makes long runs, which reach the limits, common.
		nRounds := 12 - rapid.IntRange(0, 11).Draw(rt, "rounds")
		var steps []step
		seq := 0
		for r := range nRounds {
			var st step
			for range rapid.IntRange(0, 2).Draw(rt, "deltas") {
				st.deltas = append(st.deltas, rapid.SampledFrom([]string{"", " ", "\n", "a", "Hello."}).Draw(rt, "delta"))
			}
			if r < nRounds-1 {
				for range 6 - rapid.IntRange(0, 6).Draw(rt, "calls") {
					seq++
					c := call(fmt.Sprint("c", seq), fmt.Sprint("t", rapid.IntRange(0, 7).Draw(rt, "tool")), `{}`)
					// Small values, which rapid prefers, are ordinary calls.
					switch rapid.IntRange(0, 40).Draw(rt, "kind") {
					case 40:
						c.ID = ""
					case 38, 39:
						c.Valid = false
					}
					st.calls = append(st.calls, c)
				}
			}
			steps = append(steps, st)
		}
		a := &scripted{t: rt, steps: steps}
		rec := &recorder{}
		res, err := loop.New(loop.Options{}).Run(context.Background(), a, loop.RunContext{Tools: offered, Chat: &fakeChat{}, ProviderName: "P"}, rec)

		if res.Text != rec.text() {
			rt.Fatalf("Result.Text %q differs from the stream %q", res.Text, rec.text())
		}
		if rec.last().Type != loop.EventDone || rec.last().Stop != res.Stop {
			rt.Fatalf("last event %+v, stop %q", rec.last(), res.Stop)
		}
		if err != nil && !errors.Is(err, loop.ErrInvalidResponse) {
			rt.Fatalf("unexpected error %v", err)
		}
		a.checkPaired()
		executed := 0
		for _, tl := range tools {
			executed += tl.calls()
		}
		if executed > loop.MaxToolCalls || res.Calls > loop.MaxToolCalls+5 {
			rt.Fatalf("%d tools ran, %d calls counted", executed, res.Calls)
		}
		if len(res.Traces) != res.Calls {
			rt.Fatalf("%d traces for %d counted calls", len(res.Traces), res.Calls)
		}
		for i, tr := range res.Traces {
			if tr.Order != i+1 {
				rt.Fatalf("trace %d has order %d", i, tr.Order)
			}
		}
		// Once a limit was passed, every later round must be the final one.
		for i, o := range a.opts {
			if o.IncludeTools == (o.FinalInstruction != "") {
				rt.Fatalf("round %d: tools %v with instruction %q", i+1, o.IncludeTools, o.FinalInstruction)
			}
			if o.FinalInstruction != "" && i != len(a.opts)-1 {
				rt.Fatalf("round %d was final but the run went on", i+1)
			}
		}
	})
}
