package loop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stewardhq/steward/llm"
	"github.com/stewardhq/steward/loop"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
)

func TestRunTextAndSeparators(t *testing.T) {
	echo := textTool("echo", "ok")
	tests := []struct {
		name  string
		steps []step
		want  string
		stop  loop.StopReason
	}{
		{
			name:  "answer without tools",
			steps: []step{{deltas: []string{"Hel", "lo"}}},
			want:  "Hello",
			stop:  loop.StopAnswered,
		},
		{
			name: "preamble before a call, then the answer after a blank line",
			steps: []step{
				{deltas: []string{"Let me look."}, calls: []llm.Call{call("c1", "echo", `{}`)}},
				{deltas: []string{"Found it."}},
			},
			want: "Let me look.\n\nFound it.",
			stop: loop.StopAnswered,
		},
		{
			name: "a whitespace-only round does not count as speaking",
			steps: []step{
				{deltas: []string{" \n"}, calls: []llm.Call{call("c1", "echo", `{}`)}},
				{deltas: []string{"Answer"}},
			},
			want: " \nAnswer",
			stop: loop.StopAnswered,
		},
		{
			name: "leading whitespace deltas of a later round come before the separator",
			steps: []step{
				{deltas: []string{"One."}, calls: []llm.Call{call("c1", "echo", `{}`)}},
				{deltas: []string{"\n", "Two."}},
			},
			want: "One.\n\n\nTwo.",
			stop: loop.StopAnswered,
		},
		{
			name: "a silent middle round adds no separator of its own",
			steps: []step{
				{deltas: []string{"One."}, calls: []llm.Call{call("c1", "echo", `{}`)}},
				{calls: []llm.Call{call("c2", "echo", `{}`)}},
				{deltas: []string{"Three."}},
			},
			want: "One.\n\nThree.",
			stop: loop.StopAnswered,
		},
		{
			name: "no text after the calls",
			steps: []step{
				{deltas: []string{"Looking."}, calls: []llm.Call{call("c1", "echo", `{}`)}},
				{},
			},
			want: "Looking." + loop.NoAnswerAfterCallText,
			stop: loop.StopNoAnswer,
		},
		{
			name: "a round answered only in Round.Text ends the run",
			steps: []step{
				{text: "hidden"},
			},
			want: "",
			stop: loop.StopAnswered,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := newScripted(t, tc.steps...)
			res, _, err := runLoop(t, context.Background(), a, loop.RunContext{Tools: offer(echo)})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.Text != tc.want {
				t.Errorf("text %q, want %q", res.Text, tc.want)
			}
			if res.Stop != tc.stop {
				t.Errorf("stop %q, want %q", res.Stop, tc.stop)
			}
			if a.next != len(tc.steps) {
				t.Errorf("ran %d rounds, the script has %d", a.next, len(tc.steps))
			}
			a.checkPaired()
		})
	}
}

func TestRunSilentFirstRoundNamesProvider(t *testing.T) {
	a := newScripted(t, step{deltas: []string{"  "}})
	res, rec, err := runLoop(t, context.Background(), a, loop.RunContext{ProviderName: "Acme Cloud"})
	if !errors.Is(err, loop.ErrInvalidResponse) {
		t.Fatalf("error %v, want ErrInvalidResponse", err)
	}
	if !strings.Contains(err.Error(), "'Acme Cloud'") {
		t.Errorf("error %q does not name the provider", err)
	}
	if res.Stop != loop.StopError {
		t.Errorf("stop %q", res.Stop)
	}
	if !slices.Contains(rec.types(), loop.EventError) {
		t.Errorf("no error event in %v", rec.types())
	}
}

func TestRunRoundErrorIsAnError(t *testing.T) {
	boom := &llm.HTTPError{StatusCode: 500, Message: "stream broke"}
	a := newScripted(t, step{deltas: []string{"partial"}, err: boom})
	res, rec, err := runLoop(t, context.Background(), a, loop.RunContext{})
	if !errors.As(err, new(*llm.HTTPError)) {
		t.Fatalf("error %v, want the round's error wrapped", err)
	}
	if res.Stop != loop.StopError || res.Text != "partial" {
		t.Errorf("stop %q text %q", res.Stop, res.Text)
	}
	want := []loop.EventType{loop.EventText, loop.EventError, loop.EventDone}
	if !slices.Equal(rec.types(), want) {
		t.Errorf("events %v, want %v", rec.types(), want)
	}
}

func TestRunTwoCallsInOneResponse(t *testing.T) {
	var order []string
	mk := func(name string) *fakeTool {
		return newTool(name, policy.NoOutbound, func(_ context.Context, args json.RawMessage, ec tool.ExecContext) (tool.Result, error) {
			order = append(order, name+":"+ec.CallID)
			return tool.Result{Text: name + " result"}, nil
		})
	}
	a1, b1 := mk("alpha"), mk("beta")
	a := newScripted(t,
		step{calls: []llm.Call{call("c1", "beta", `{}`), call("c2", "alpha", `{}`)}, usage: llm.Usage{InputTokens: 10, OutputTokens: 2}},
		step{deltas: []string{"done"}, usage: llm.Usage{InputTokens: 30, OutputTokens: 5}},
	)
	res, rec, err := runLoop(t, context.Background(), a, loop.RunContext{Tools: offer(a1, b1)})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(order, []string{"beta:c1", "alpha:c2"}) {
		t.Errorf("execution order %v", order)
	}
	a.checkPaired()
	got := a.results()
	if len(got) != 2 || got[0].content != "beta result" || got[1].content != "alpha result" || got[0].isError || got[1].isError {
		t.Errorf("results %+v", got)
	}
	if len(res.Traces) != 2 || res.Traces[0].Order != 1 || res.Traces[1].Order != 2 || res.Traces[0].Name != "beta" {
		t.Errorf("traces %+v", res.Traces)
	}
	if res.Usage != (llm.Usage{InputTokens: 40, OutputTokens: 7}) || res.Rounds != 2 {
		t.Errorf("usage %+v over %d rounds, want the sum over 2", res.Usage, res.Rounds)
	}
	for i, o := range a.opts {
		if !o.IncludeTools || o.FinalInstruction != "" {
			t.Errorf("round %d options %+v", i+1, o)
		}
	}
	want := []loop.EventType{loop.EventToolCall, loop.EventTrace, loop.EventToolCall, loop.EventTrace, loop.EventText, loop.EventUsage, loop.EventDone}
	if !slices.Equal(rec.types(), want) {
		t.Errorf("events %v, want %v", rec.types(), want)
	}
}

func TestRunCallsLimit(t *testing.T) {
	echo := textTool("echo", "ok")
	calls := func(prefix string, n int) []llm.Call {
		var out []llm.Call
		for _, id := range ids(n, prefix) {
			out = append(out, call(id, "echo", `{}`))
		}
		return out
	}
	tests := []struct {
		name     string
		steps    []step
		executed int
		// limited are the call IDs that get the instruction instead of a run.
		limited []string
	}{
		{
			name: "one call per round for 15 rounds",
			steps: func() []step {
				var s []step
				for i := range loop.MaxToolCalls {
					s = append(s, step{calls: []llm.Call{call(fmt.Sprint("c", i), "echo", `{}`)}})
				}
				return append(s, step{deltas: []string{"final"}})
			}(),
			executed: 15,
		},
		{
			name:     "17 calls in one round",
			steps:    []step{{calls: calls("c", 17)}, {deltas: []string{"final"}}},
			executed: 15,
			limited:  []string{"c16", "c17"},
		},
		{
			name:     "the limit is reached in the middle of the second round",
			steps:    []step{{calls: calls("a", 10)}, {calls: calls("b", 8)}, {deltas: []string{"final"}}},
			executed: 15,
			limited:  []string{"b6", "b7", "b8"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			echo.seen = nil
			a := newScripted(t, tc.steps...)
			res, _, err := runLoop(t, context.Background(), a, loop.RunContext{Tools: offer(echo)})
			if err != nil {
				t.Fatal(err)
			}
			a.checkPaired()
			if echo.calls() != tc.executed || res.Calls != tc.executed || len(res.Traces) != tc.executed {
				t.Errorf("executed %d, counted %d, traced %d; want %d", echo.calls(), res.Calls, len(res.Traces), tc.executed)
			}
			var limited []string
			for _, e := range a.results() {
				if e.content == loop.CallsLimitInstruction {
					if e.isError {
						t.Errorf("limit instruction for %s recorded as an error", e.callID)
					}
					limited = append(limited, e.callID)
				}
			}
			if !slices.Equal(limited, tc.limited) {
				t.Errorf("limited calls %v, want %v", limited, tc.limited)
			}
			last := a.opts[len(a.opts)-1]
			if last.IncludeTools || last.FinalInstruction != loop.CallsLimitInstruction {
				t.Errorf("final round options %+v", last)
			}
			for _, o := range a.opts[:len(a.opts)-1] {
				if !o.IncludeTools || o.FinalInstruction != "" {
					t.Errorf("an earlier round ran with %+v", o)
				}
			}
			if res.Stop != loop.StopLimit || res.Text != "final" {
				t.Errorf("stop %q text %q", res.Stop, res.Text)
			}
		})
	}
}

func TestRunCharsLimit(t *testing.T) {
	big := func(n int) *fakeTool {
		return newTool("big", policy.NoOutbound, func(context.Context, json.RawMessage, tool.ExecContext) (tool.Result, error) {
			return tool.Result{Text: strings.Repeat("x", n)}, nil
		})
	}
	// A rune outside the BMP counts as two UTF-16 code units.
	wide := newTool("big", policy.NoOutbound, func(context.Context, json.RawMessage, tool.ExecContext) (tool.Result, error) {
		return tool.Result{Text: strings.Repeat("😀", 75_000)}, nil // 150,000 units
	})
	tests := []struct {
		name     string
		tl       *fakeTool
		steps    []step
		executed int
		limited  []string
		final    bool
	}{
		{
			name:     "exceeded within one round",
			tl:       big(200_000),
			steps:    []step{{calls: []llm.Call{call("c1", "big", `{}`), call("c2", "big", `{}`), call("c3", "big", `{}`)}}, {deltas: []string{"final"}}},
			executed: 2,
			limited:  []string{"c3"},
			final:    true,
		},
		{
			name:     "exceeded across rounds",
			tl:       big(160_000),
			steps:    []step{{calls: []llm.Call{call("c1", "big", `{}`)}}, {calls: []llm.Call{call("c2", "big", `{}`)}}, {deltas: []string{"final"}}},
			executed: 2,
			final:    true,
		},
		{
			name:     "exactly 300,000 is not over the limit",
			tl:       big(150_000),
			steps:    []step{{calls: []llm.Call{call("c1", "big", `{}`), call("c2", "big", `{}`)}}, {deltas: []string{"answer"}}},
			executed: 2,
		},
		{
			name:     "UTF-16 code units are counted",
			tl:       wide,
			steps:    []step{{calls: []llm.Call{call("c1", "big", `{}`), call("c2", "big", `{}`), call("c3", "big", `{}`)}}, {deltas: []string{"final"}}},
			executed: 3,
			final:    true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := newScripted(t, tc.steps...)
			res, _, err := runLoop(t, context.Background(), a, loop.RunContext{Tools: offer(tc.tl)})
			if err != nil {
				t.Fatal(err)
			}
			a.checkPaired()
			if tc.tl.calls() != tc.executed {
				t.Errorf("executed %d, want %d", tc.tl.calls(), tc.executed)
			}
			var limited []string
			for _, e := range a.results() {
				if e.content == loop.CharsLimitInstruction {
					limited = append(limited, e.callID)
				}
			}
			if !slices.Equal(limited, tc.limited) {
				t.Errorf("limited %v, want %v", limited, tc.limited)
			}
			last := a.opts[len(a.opts)-1]
			if tc.final {
				if last.IncludeTools || last.FinalInstruction != loop.CharsLimitInstruction || res.Stop != loop.StopLimit {
					t.Errorf("final round options %+v, stop %q", last, res.Stop)
				}
			} else if !last.IncludeTools || last.FinalInstruction != "" || res.Stop != loop.StopAnswered {
				t.Errorf("last round options %+v, stop %q", last, res.Stop)
			}
		})
	}
}

func TestRunCharsLimitTakesPrecedence(t *testing.T) {
	// With both limits reached, the characters' instruction is the one given.
	var steps []step
	for i := range 15 {
		steps = append(steps, step{calls: []llm.Call{call(fmt.Sprint("c", i), "big", `{}`)}})
	}
	steps = append(steps, step{})
	big := newTool("big", policy.NoOutbound, func(context.Context, json.RawMessage, tool.ExecContext) (tool.Result, error) {
		return tool.Result{Text: strings.Repeat("y", 21_000)}, nil // 15 × 21,000 = 315,000
	})
	a := newScripted(t, steps...)
	res, _, err := runLoop(t, context.Background(), a, loop.RunContext{Tools: offer(big)})
	if err != nil {
		t.Fatal(err)
	}
	if got := a.opts[len(a.opts)-1].FinalInstruction; got != loop.CharsLimitInstruction {
		t.Errorf("final instruction %q", got)
	}
	if res.Text != loop.NoAnswerAfterLimitText || res.Stop != loop.StopLimit {
		t.Errorf("a silent final round gave %q (%q)", res.Text, res.Stop)
	}
}

func TestRunFinalRoundIgnoresCalls(t *testing.T) {
	var steps []step
	for i := range 15 {
		steps = append(steps, step{calls: []llm.Call{call(fmt.Sprint("c", i), "echo", `{}`)}})
	}
	steps = append(steps, step{deltas: []string{"sure"}, calls: []llm.Call{call("late", "echo", `{}`)}})
	echo := textTool("echo", "ok")
	a := newScripted(t, steps...)
	res, _, err := runLoop(t, context.Background(), a, loop.RunContext{Tools: offer(echo)})
	if err != nil {
		t.Fatal(err)
	}
	if echo.calls() != 15 || res.Text != "sure" || res.Stop != loop.StopLimit {
		t.Errorf("calls %d text %q stop %q", echo.calls(), res.Text, res.Stop)
	}
	a.checkPaired()
}

func TestRunInvalidCall(t *testing.T) {
	echo := textTool("echo", "ok")
	a := newScripted(t,
		step{calls: []llm.Call{
			{ID: "c1", Name: "echo", Arguments: json.RawMessage(`[1,2]`), Valid: false},
			call("c2", "echo", `{}`),
		}},
		step{deltas: []string{"ok then"}},
	)
	res, _, err := runLoop(t, context.Background(), a, loop.RunContext{Tools: offer(echo)})
	if err != nil {
		t.Fatal(err)
	}
	a.checkPaired()
	got := a.results()
	if got[0].content != loop.InvalidCallText || !got[0].isError {
		t.Errorf("invalid call answered %+v", got[0])
	}
	if echo.calls() != 1 || res.Calls != 2 {
		t.Errorf("executed %d, counted %d", echo.calls(), res.Calls)
	}
	tr := res.Traces[0]
	if tr.Status != loop.StatusError || tr.StatusMessage != "Invalid tool call" || tr.Order != 1 || tr.Executed || tr.Arguments != nil {
		t.Errorf("invalid trace %+v", tr)
	}
	if res.ResultChars != len(loop.InvalidCallText)+2 || len(loop.InvalidCallText) != 26 {
		t.Errorf("result chars %d", res.ResultChars)
	}
}

func TestRunCallWithoutIDEnds(t *testing.T) {
	echo := textTool("echo", "ok")
	for _, id := range []string{"", "  "} {
		a := newScripted(t, step{
			deltas:  []string{"Checking"},
			calls:   []llm.Call{call("c1", "echo", `{}`), call(id, "echo", `{"q":"x"}`)},
			sources: []llm.Citation{{Title: "Doc", URL: "https://example.org/doc"}},
		})
		res, rec, err := runLoop(t, context.Background(), a, loop.RunContext{Tools: offer(echo)})
		if err != nil {
			t.Fatal(err)
		}
		if len(a.history) != 0 {
			t.Errorf("the round was recorded: %+v", a.history)
		}
		if echo.calls() != 0 {
			t.Errorf("a tool ran")
		}
		if res.Text != "Checking"+loop.InvalidCallText || res.Stop != loop.StopInvalidCall {
			t.Errorf("text %q stop %q", res.Text, res.Stop)
		}
		if res.Calls != 1 || len(res.Traces) != 1 || res.Traces[0].Status != loop.StatusError {
			t.Errorf("calls %d traces %+v", res.Calls, res.Traces)
		}
		if len(res.Sources) != 1 || !slices.Contains(rec.types(), loop.EventSources) {
			t.Errorf("sources %+v not attached", res.Sources)
		}
	}
}

func TestRunExecutorOutcomes(t *testing.T) {
	blocked := newTool("locked", policy.NoOutbound, func(context.Context, json.RawMessage, tool.ExecContext) (tool.Result, error) {
		return tool.Result{}, tool.Blocked("The page is on the organization's block list.")
	})
	failing := newTool("flaky", policy.NoOutbound, func(context.Context, json.RawMessage, tool.ExecContext) (tool.Result, error) {
		return tool.Result{}, fmt.Errorf("reading the index: %w", errors.New("disk full"))
	})
	panicking := newTool("crashy", policy.NoOutbound, func(context.Context, json.RawMessage, tool.ExecContext) (tool.Result, error) {
		panic("secret internal state")
	})
	// A tool's own deadline is a failure, not a cancellation of the run.
	ownTimeout := newTool("slow", policy.NoOutbound, func(context.Context, json.RawMessage, tool.ExecContext) (tool.Result, error) {
		return tool.Result{}, fmt.Errorf("fetching: %w", context.DeadlineExceeded)
	})
	jsonTool := newTool("json", policy.NoOutbound, func(context.Context, json.RawMessage, tool.ExecContext) (tool.Result, error) {
		return tool.Result{Text: "ignored", JSON: map[string]any{"a": "<ä&>"}}, nil
	})
	tests := []struct {
		name    string
		tl      *fakeTool
		call    llm.Call
		content string
		status  loop.Status
		execed  bool
	}{
		{"blocked", blocked, call("c1", "locked", `{}`), "The page is on the organization's block list.", loop.StatusBlocked, true},
		{"failing", failing, call("c1", "flaky", `{}`), "Tool execution failed: reading the index: disk full", loop.StatusError, true},
		{"panicking", panicking, call("c1", "crashy", `{}`), "Tool execution failed: the tool stopped with an internal error", loop.StatusError, true},
		{"own timeout", ownTimeout, call("c1", "slow", `{}`), "Tool execution failed: fetching: context deadline exceeded", loop.StatusError, true},
		{"unknown tool", blocked, call("c1", "nosuch", `{}`), "Tool 'nosuch' is not available.", loop.StatusBlocked, false},
		{"json content", jsonTool, call("c1", "json", `{}`), `{"a":"<ä&>"}`, loop.StatusSuccess, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := newScripted(t, step{calls: []llm.Call{tc.call}}, step{deltas: []string{"ok"}})
			chat := &fakeChat{}
			res, _, err := runLoop(t, context.Background(), a, loop.RunContext{Tools: offer(tc.tl), Chat: chat})
			if err != nil {
				t.Fatal(err)
			}
			a.checkPaired()
			r := a.results()[0]
			if r.content != tc.content {
				t.Errorf("content %q, want %q", r.content, tc.content)
			}
			if r.isError != (tc.status != loop.StatusSuccess) {
				t.Errorf("isError %v for %s", r.isError, tc.status)
			}
			tr := res.Traces[0]
			if tr.Status != tc.status || tr.Executed != tc.execed || tr.Result != tc.content {
				t.Errorf("trace %+v", tr)
			}
			if tc.status != loop.StatusSuccess && tr.StatusMessage == "" {
				t.Errorf("no status message on %s", tc.status)
			}
			if strings.Contains(r.content, "secret internal state") {
				t.Errorf("the panic value reached the model")
			}
		})
	}
}

func TestExecuteContextAndRequirements(t *testing.T) {
	var got tool.ExecContext
	tl := newTool("mail", policy.NoOutbound, func(_ context.Context, _ json.RawMessage, ec tool.ExecContext) (tool.Result, error) {
		got = ec
		return tool.Result{
			Text:                 "see https://example.org/a and https://example.org/b",
			Sources:              []tool.Source{{Title: "A", URL: "https://example.org/a"}},
			RequiredConfidence:   policy.High,
			RequiredDataSecurity: policy.SelfHosted,
			RequiredOutbound:     policy.OutboundRequirement{Set: true, Restriction: policy.OnlyLinksFromChat, MailboxID: "m1", MailboxName: "Work"},
		}, nil
	})
	chat := &fakeChat{confidence: policy.Low}
	var finderArgs json.RawMessage
	rc := loop.RunContext{
		Tools: offer(tl), Chat: chat, ProviderConfidence: policy.Medium, ProviderTrusted: true,
		ReturnedAddresses: func(content string, args json.RawMessage) []string {
			finderArgs = args
			return []string{"https://example.org:443/a"}
		},
	}
	out, err := loop.Execute(context.Background(), call("id-7", "mail", `{"q":"x"}`), 3, rc)
	if err != nil {
		t.Fatal(err)
	}
	if got.CallID != "id-7" || got.ProviderConfidence != policy.Medium || !got.ProviderTrusted || got.Settings["k"] != "v" || got.Definition.ID != "mail" || got.Chat != chat {
		t.Errorf("exec context %+v", got)
	}
	if chat.confidence != policy.High || chat.security != policy.SelfHosted || chat.outbound.Restriction != policy.OnlyLinksFromChat || !chat.outbound.Set {
		t.Errorf("chat not tightened: %+v", chat)
	}
	if !slices.Equal(chat.addresses, []string{"https://example.org:443/a"}) || string(finderArgs) != `{"q":"x"}` {
		t.Errorf("ledger %v, finder saw args %s", chat.addresses, finderArgs)
	}
	if out.Trace.Order != 3 || out.Trace.ToolID != "mail" || out.IsError() || len(out.Sources) != 1 {
		t.Errorf("outcome %+v", out)
	}

	// Blocked and failed calls demand nothing of the chat.
	fresh := &fakeChat{}
	failing := newTool("mail", policy.NoOutbound, func(context.Context, json.RawMessage, tool.ExecContext) (tool.Result, error) {
		return tool.Result{RequiredConfidence: policy.High, Sources: []tool.Source{{URL: "https://x.example/"}}}, errors.New("no")
	})
	out, err = loop.Execute(context.Background(), call("c", "mail", `{}`), 1, loop.RunContext{Tools: offer(failing), Chat: fresh, ReturnedAddresses: rc.ReturnedAddresses})
	if err != nil {
		t.Fatal(err)
	}
	if fresh.confidence != policy.None || len(fresh.addresses) != 0 || len(out.Sources) != 0 || !out.IsError() {
		t.Errorf("a failed call changed the chat: %+v, outcome %+v", fresh, out)
	}
}

func TestRunOutboundTighteningBlocksNextCall(t *testing.T) {
	mk := func(removed bool) (loop.RunContext, *fakeTool, *fakeTool) {
		mail := newTool("search_mails", policy.NoOutbound, func(context.Context, json.RawMessage, tool.ExecContext) (tool.Result, error) {
			return tool.Result{Text: "3 mails", RequiredOutbound: policy.OutboundRequirement{
				Set: true, Restriction: policy.OnlyConfiguredServices, MailboxID: "mb-1", MailboxName: "Old name",
			}}, nil
		})
		web := textTool("web_search", "results")
		web.outbound = policy.ThirdPartyQueries
		wiki := textTool("wiki", "page")
		wiki.outbound = policy.ConfiguredService
		reader := textTool("read_web_page", "page")
		reader.outbound = policy.ModelChosenAddresses
		reader.enforces = true
		rc := loop.RunContext{
			Tools: offer(mail, web, wiki, reader),
			Mailboxes: func(id string) (string, bool) {
				if id != "mb-1" || removed {
					return "", false
				}
				return "Support inbox", true
			},
		}
		return rc, mail, web
	}
	for _, removed := range []bool{false, true} {
		t.Run(fmt.Sprint("removed=", removed), func(t *testing.T) {
			rc, _, web := mk(removed)
			rc.Chat = &fakeChat{}
			a := newScripted(t,
				step{calls: []llm.Call{
					call("c0", "web_search", `{}`),
					call("c1", "search_mails", `{}`),
					call("c2", "web_search", `{}`),
					call("c3", "wiki", `{}`),
					call("c4", "read_web_page", `{}`),
				}},
				step{deltas: []string{"answer"}},
			)
			res, _, err := runLoop(t, context.Background(), a, rc)
			if err != nil {
				t.Fatal(err)
			}
			a.checkPaired()
			if web.calls() != 1 {
				t.Errorf("web_search ran %d times, want once (before the mails were read)", web.calls())
			}
			statuses := []loop.Status{}
			for _, tr := range res.Traces {
				statuses = append(statuses, tr.Status)
			}
			want := []loop.Status{loop.StatusSuccess, loop.StatusSuccess, loop.StatusBlocked, loop.StatusSuccess, loop.StatusSuccess}
			if !slices.Equal(statuses, want) {
				t.Errorf("statuses %v, want %v", statuses, want)
			}
			msg := a.results()[2].content
			if !a.results()[2].isError || res.Traces[2].Executed {
				t.Errorf("the blocked call is not an error or ran")
			}
			if !strings.Contains(msg, "Only configured services") || !strings.Contains(msg, "Where a chat may send data after reading mails") {
				t.Errorf("message %q does not name the level and setting", msg)
			}
			if removed {
				if !strings.Contains(msg, "removed") || strings.Contains(msg, "Old name") {
					t.Errorf("removed-mailbox message %q", msg)
				}
			} else if !strings.Contains(msg, "'Support inbox'") {
				t.Errorf("message %q does not name the mailbox by its current name", msg)
			}
		})
	}
}

func TestMaskArguments(t *testing.T) {
	tests := []struct {
		name      string
		args      string
		sensitive []string
		want      []loop.Argument
	}{
		{"blank counts as empty object", "  ", nil, []loop.Argument{}},
		{"strings raw, others JSON, order kept", `{"q":"a \"b\"","n":3,"flag":true,"list":[1,"x"],"obj":{"k":null}}`, nil,
			[]loop.Argument{{"q", `a "b"`}, {"n", "3"}, {"flag", "true"}, {"list", `[1,"x"]`}, {"obj", `{"k":null}`}}},
		{"sensitive masked whatever its type", `{"user":"ann","password":"hunter2","pin":1234}`, []string{"password", "pin"},
			[]loop.Argument{{"user", "ann"}, {"password", "*****"}, {"pin", "*****"}}},
		{"names compare exactly", `{"Password":"x"}`, []string{"password"}, []loop.Argument{{"Password", "x"}}},
		{"large numbers keep their digits", `{"n":12345678901234567890}`, nil, []loop.Argument{{"n", "12345678901234567890"}}},
		{"array root", `[1,2]`, nil, nil},
		{"string root", `"x"`, nil, nil},
		{"unparsable", `{"q":`, nil, nil},
		{"trailing garbage", `{"q":"x"} {`, nil, nil},
		{"trailing object", `{"q":"x"}{"r":1}`, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := loop.MaskArguments(json.RawMessage(tc.args), tc.sensitive)
			if (got == nil) != (tc.want == nil) || !slices.Equal(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestTraceMaskingAndNotPersisted(t *testing.T) {
	tl := textTool("login", "token=abc")
	tl.sensitive = []string{"password"}
	a := newScripted(t, step{calls: []llm.Call{call("c1", "login", `{"user":"ann","password":"hunter2"}`)}}, step{deltas: []string{"ok"}})
	res, rec, err := runLoop(t, context.Background(), a, loop.RunContext{Tools: offer(tl)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Traces[0].Result != "token=abc" {
		t.Errorf("the trace lost its in-memory result")
	}
	for _, e := range rec.events {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "hunter2") || strings.Contains(string(b), "token=abc") {
			t.Errorf("event %s leaks a sensitive argument or a result", b)
		}
	}
	b, _ := json.Marshal(res.Traces[0])
	want := `{"order":1,"tool_id":"login","name":"login","call_id":"c1","status":"SUCCESS","executed":true,"arguments":[{"name":"user","value":"ann"},{"name":"password","value":"*****"}]}`
	if string(b) != want {
		t.Errorf("trace JSON\n%s\nwant\n%s", b, want)
	}
}

func TestRunSources(t *testing.T) {
	seq := 0
	src := newTool("read", policy.NoOutbound, func(_ context.Context, args json.RawMessage, _ tool.ExecContext) (tool.Result, error) {
		seq++
		var a struct{ Title, URL, Fail string }
		if err := json.Unmarshal(args, &a); err != nil {
			return tool.Result{}, err
		}
		switch a.Fail {
		case "error":
			return tool.Result{Sources: []tool.Source{{Title: "Failed", URL: "https://fail.example/"}}}, errors.New("down")
		case "blocked":
			return tool.Result{Sources: []tool.Source{{Title: "Blocked", URL: "https://blocked.example/"}}}, tool.Blocked("not allowed")
		}
		if a.URL == "" {
			return tool.Result{Text: "empty"}, nil
		}
		return tool.Result{Text: "page", Sources: []tool.Source{{Title: a.Title, URL: a.URL}}}, nil
	})
	a := newScripted(t,
		step{
			calls: []llm.Call{
				call("c1", "read", `{"Title":"Alpha","URL":"https://a.example/"}`),
				call("c2", "read", `{"Title":"Alpha again","URL":"https://a.example/"}`),
				call("c3", "read", `{"Title":"Alpha","URL":"https://a.example/other"}`),
				call("c4", "read", `{"Fail":"error"}`),
				call("c5", "read", `{"Fail":"blocked"}`),
				call("c6", "read", `{}`),
			},
			sources: []llm.Citation{{Title: "Cited", URL: "https://cited.example/"}},
		},
		step{
			calls: []llm.Call{
				call("d1", "read", `{"Title":"Beta","URL":"https://b.example/"}`),
				call("d2", "read", `{"Title":"Cited","URL":"https://c.example/"}`),
				call("d3", "read", `{"Title":"","URL":"https://d.example/"}`),
				call("d4", "read", `{"Title":"","URL":"https://e.example/"}`),
			},
		},
		step{deltas: []string{"answer"}, sources: []llm.Citation{{Title: "Beta", URL: "https://other.example/"}, {Title: "Gamma", URL: "https://g.example/"}}},
	)
	res, rec, err := runLoop(t, context.Background(), a, loop.RunContext{Tools: offer(src)})
	if err != nil {
		t.Fatal(err)
	}
	want := []loop.Source{
		{Title: "Cited", URL: "https://cited.example/", Origin: loop.OriginProvider},
		{Title: "Alpha", URL: "https://a.example/", Origin: loop.OriginTool},
		{Title: "Beta", URL: "https://b.example/", Origin: loop.OriginTool},
		{Title: "", URL: "https://d.example/", Origin: loop.OriginTool},
		{Title: "", URL: "https://e.example/", Origin: loop.OriginTool},
		{Title: "Gamma", URL: "https://g.example/", Origin: loop.OriginProvider},
	}
	if !slices.Equal(res.Sources, want) {
		t.Errorf("sources\n%+v\nwant\n%+v", res.Sources, want)
	}
	var events int
	for _, e := range rec.events {
		if e.Type == loop.EventSources {
			events++
			if !slices.Equal(e.Sources, want) {
				t.Errorf("sources event %+v", e.Sources)
			}
		}
	}
	if events != 1 {
		t.Errorf("%d sources events, want 1", events)
	}
	if got := loop.ToolSources(res.Sources); len(got) != 4 || got[0].Title != "Alpha" {
		t.Errorf("tool sources %+v", got)
	}
}

func TestRenderSources(t *testing.T) {
	tests := []struct {
		name    string
		sources []loop.Source
		want    string
	}{
		{"none", nil, ""},
		{"tools only", []loop.Source{
			{Title: "Alpha [draft]", URL: "https://a.example/x y", Origin: loop.OriginTool},
			{URL: "https://b.example/(1)", Origin: loop.OriginTool},
		}, "\n\n## Sources used by tools\n\n- [Alpha \\[draft\\]](https://a.example/x%20y)\n- <https://b.example/%281%29>"},
		{"both, provider first", []loop.Source{
			{Title: "T", URL: "https://t.example/", Origin: loop.OriginTool},
			{Title: "P", URL: "https://p.example/", Origin: loop.OriginProvider},
		}, "\n\n## Sources\n\n- [P](https://p.example/)\n\n## Sources used by tools\n\n- [T](https://t.example/)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := loop.RenderSources(tc.sources); got != tc.want {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestRunCancelMidStream(t *testing.T) {
	echo := textTool("echo", "ok")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := newScripted(t,
		step{calls: []llm.Call{call("c1", "echo", `{}`)}, usage: llm.Usage{InputTokens: 4}},
		step{deltas: []string{"partial"}, during: func(ctx context.Context) error {
			cancel()
			<-ctx.Done()
			return fmt.Errorf("reading the stream: %w", ctx.Err())
		}},
	)
	res, rec, err := runLoop(t, ctx, a, loop.RunContext{Tools: offer(echo)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want cancellation", err)
	}
	a.checkPaired()
	if res.Stop != loop.StopCancelled || res.Text != "partial" {
		t.Errorf("stop %q text %q", res.Stop, res.Text)
	}
	ty := rec.types()
	if want := []loop.EventType{loop.EventUsage, loop.EventError, loop.EventDone}; len(ty) < 3 || !slices.Equal(ty[len(ty)-3:], want) {
		t.Errorf("events %v, want them to end with %v", ty, want)
	}
}

func TestRunCancelMidTool(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	echo := textTool("echo", "ok")
	waiter := newTool("wait", policy.NoOutbound, func(ctx context.Context, _ json.RawMessage, _ tool.ExecContext) (tool.Result, error) {
		cancel()
		<-ctx.Done()
		return tool.Result{}, fmt.Errorf("waiting: %w", ctx.Err())
	})
	a := newScripted(t, step{calls: []llm.Call{call("c1", "echo", `{}`), call("c2", "wait", `{}`), call("c3", "echo", `{}`)}})
	res, _, err := runLoop(t, ctx, a, loop.RunContext{Tools: offer(echo, waiter)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want cancellation", err)
	}
	a.checkPaired()
	got := a.results()
	if got[0].content != "ok" || got[1].content != loop.CancelledCallText || got[2].content != loop.CancelledCallText || !got[1].isError {
		t.Errorf("results %+v", got)
	}
	if echo.calls() != 1 || res.Stop != loop.StopCancelled {
		t.Errorf("echo ran %d times, stop %q", echo.calls(), res.Stop)
	}
}

func TestRunEventJSON(t *testing.T) {
	echo := textTool("echo", "ok")
	a := newScripted(t,
		step{deltas: []string{"Hi"}, calls: []llm.Call{call("c1", "echo", `{"q":"x"}`)}, usage: llm.Usage{InputTokens: 5, OutputTokens: 1}},
		step{deltas: []string{"Bye"}, sources: []llm.Citation{{Title: "S", URL: "https://s.example/"}}, usage: llm.Usage{InputTokens: 9, OutputTokens: 2}},
	)
	_, rec, err := runLoop(t, context.Background(), a, loop.RunContext{Tools: offer(echo)})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range rec.events {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	want := []string{
		`{"type":"text","text":"Hi"}`,
		`{"type":"tool_call","call":{"order":1,"call_id":"c1","name":"echo","tool_id":"echo"}}`,
		`{"type":"trace","trace":{"order":1,"tool_id":"echo","name":"echo","call_id":"c1","status":"SUCCESS","executed":true,"arguments":[{"name":"q","value":"x"}]}}`,
		`{"type":"text","text":"\n\n"}`,
		`{"type":"text","text":"Bye"}`,
		`{"type":"sources","sources":[{"title":"S","url":"https://s.example/","origin":"provider"}]}`,
		`{"type":"usage","usage":{"input_tokens":14,"output_tokens":3},"rounds":2}`,
		`{"type":"done","stop":"answered"}`,
	}
	if !slices.Equal(lines, want) {
		t.Errorf("events\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

func TestRunRequiresChat(t *testing.T) {
	a := newScripted(t)
	_, err := loop.New(loop.Options{}).Run(context.Background(), a, loop.RunContext{}, nil)
	if err == nil || !strings.Contains(err.Error(), "Chat") {
		t.Errorf("error %v", err)
	}
}

func TestUsingTools(t *testing.T) {
	tests := []struct {
		names []string
		want  string
	}{
		{nil, ""},
		{[]string{"web_search"}, "Using tool: web_search"},
		{[]string{"web_search", "read_web_page"}, "Using tools: web_search, read_web_page"},
	}
	for _, tc := range tests {
		if got := loop.UsingTools(tc.names...); got != tc.want {
			t.Errorf("UsingTools(%v) = %q, want %q", tc.names, got, tc.want)
		}
	}
}

// BenchmarkLoopScripted10Rounds measures the loop alone, without HTTP or
// parsing: ten scripted rounds, nine with one tool call each.
func BenchmarkLoopScripted10Rounds(b *testing.B) {
	echo := textTool("echo", `{"temperature":21}`)
	tools := offer(echo)
	var steps []step
	for i := range 9 {
		steps = append(steps, step{deltas: []string{"Checking. "}, calls: []llm.Call{call(fmt.Sprint("c", i), "echo", `{"city":"Bern"}`)}, usage: llm.Usage{InputTokens: 100, OutputTokens: 10}})
	}
	steps = append(steps, step{deltas: strings.Fields(strings.Repeat("word ", 20)), usage: llm.Usage{InputTokens: 100, OutputTokens: 20}})
	l := loop.New(loop.Options{})
	b.ReportAllocs()
	for b.Loop() {
		a := &scripted{t: b, steps: steps}
		res, err := l.Run(context.Background(), a, loop.RunContext{Tools: tools, Chat: &fakeChat{}}, nil)
		if err != nil || res.Rounds != 10 {
			b.Fatalf("run: %v after %d rounds", err, res.Rounds)
		}
	}
}

func TestToolSpecs(t *testing.T) {
	if got := loop.ToolSpecs(nil); got != nil {
		t.Errorf("no tools gave %v", got)
	}
	a := tool.Offered{Function: tool.Function{Name: "a", Description: "Does a.", Parameters: json.RawMessage(`{"type":"object"}`)}}
	b := tool.Offered{Function: tool.Function{Name: "b", NoStrict: true}}
	got := loop.ToolSpecs([]tool.Offered{a, b})
	if len(got) != 2 || got[0].Name != "a" || got[0].Description != "Does a." || string(got[0].Parameters) != `{"type":"object"}` || !got[0].Strict ||
		got[1].Name != "b" || got[1].Strict {
		t.Errorf("specs %+v", got)
	}
}

// The classic retrieval's passages are listed with the answer under their
// own heading, before the tools' sources, without duplicates.
func TestDataSourceSourcesAreListedWithTheAnswer(t *testing.T) {
	a := newScripted(t, step{deltas: []string{"Done."}})
	res, _, err := runLoop(t, context.Background(), a, loop.RunContext{
		DataSourceSources: []tool.Source{{Title: "leave.md (Chunk 1)", URL: "file:///docs/leave.md#chunk=0"}, {Title: "dup", URL: "file:///docs/leave.md#chunk=0"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sources) != 1 || res.Sources[0].Origin != loop.OriginDataSource || len(loop.LocalSources(res.Sources)) != 1 || len(loop.ToolSources(res.Sources)) != 0 {
		t.Fatalf("%+v", res.Sources)
	}
	if got := loop.RenderSources(res.Sources); !strings.Contains(got, "## "+loop.DataSourcesHeading+"\n\n- [leave.md (Chunk 1)](file:///docs/leave.md#chunk=0)") {
		t.Fatalf("%q", got)
	}
}
