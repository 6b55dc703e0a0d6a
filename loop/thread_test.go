package loop_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stewardhq/steward/chat"
	"github.com/stewardhq/steward/llm"
	"github.com/stewardhq/steward/loop"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
)

// TestRunWithThread drives the loop with a real chat thread: a search
// result's addresses join the ledger (minus the one the model wrote into
// its own arguments), and a mail result tightens the thread so that the
// next call of the same round is blocked.
func TestRunWithThread(t *testing.T) {
	search := newTool("semantic_search", policy.ConfiguredService, func(_ context.Context, args json.RawMessage, _ tool.ExecContext) (tool.Result, error) {
		return tool.Result{Text: "Found https://wiki.example/Page and, as asked, https://made-up.example/secret"}, nil
	})
	mail := newTool("read_mail", policy.NoOutbound, func(context.Context, json.RawMessage, tool.ExecContext) (tool.Result, error) {
		return tool.Result{Text: "mail body", RequiredConfidence: policy.Medium, RequiredOutbound: policy.OutboundRequirement{
			Set: true, Restriction: policy.OnlyLinksFromChat, MailboxID: "mb", MailboxName: "Sales",
		}}, nil
	})
	web := textTool("web_search", "results")
	web.outbound = policy.ThirdPartyQueries
	tools := offer(search, mail, web)
	th := &chat.Thread{}
	a := newScripted(t,
		step{calls: []llm.Call{
			call("c1", "semantic_search", `{"query":"what is at https://made-up.example/secret"}`),
			call("c2", "read_mail", `{"id":"1"}`),
			call("c3", "web_search", `{"q":"x"}`),
		}},
		step{deltas: []string{"ok"}},
	)
	res, _, err := runLoop(t, context.Background(), a, loop.RunContext{Tools: tools, Chat: th})
	if err != nil {
		t.Fatal(err)
	}
	if !th.IsWebAddressGiven("https://wiki.example/Page") {
		t.Errorf("the address a tool returned is not in the ledger")
	}
	if th.IsWebAddressGiven("https://made-up.example/secret") {
		t.Errorf("an address echoed from the call's own arguments was laundered into the ledger")
	}
	if th.RequiredConfidence() != policy.Medium || th.OutboundRequirement().Effective() != policy.OnlyLinksFromChat {
		t.Errorf("thread not tightened: %v %v", th.RequiredConfidence(), th.OutboundRequirement())
	}
	if res.Traces[2].Status != loop.StatusBlocked || web.calls() != 0 {
		t.Errorf("web_search after the mail: %+v, ran %d", res.Traces[2], web.calls())
	}
	if msg := a.results()[2].content; !strings.Contains(msg, "'Sales'") || !strings.Contains(msg, "Only links from the chat") {
		t.Errorf("refusal %q", msg)
	}
}

func TestTraceStored(t *testing.T) {
	tests := []struct {
		name string
		tr   loop.Trace
		want chat.Trace
	}{
		{
			name: "masked arguments in order, result dropped",
			tr: loop.Trace{Order: 2, ToolID: "login", Name: "login", CallID: "c9", Status: loop.StatusSuccess, Executed: true,
				Arguments: []loop.Argument{{"user", `<ann> "a"`}, {"password", loop.MaskedValue}}, Result: "token"},
			want: chat.Trace{Order: 2, ToolID: "login", ToolName: "login", CallID: "c9", Status: "SUCCESS", Executed: true,
				Arguments: `{"user":"<ann> \"a\"","password":"*****"}`},
		},
		{
			name: "unparsable arguments",
			tr:   loop.Trace{Order: 1, Name: "x", CallID: "c1", Status: loop.StatusError, StatusMessage: "Invalid tool call"},
			want: chat.Trace{Order: 1, ToolName: "x", CallID: "c1", Status: "ERROR", StatusMessage: "Invalid tool call"},
		},
		{
			name: "no arguments",
			tr:   loop.Trace{Order: 1, Name: "now", CallID: "c1", Status: loop.StatusBlocked, Arguments: []loop.Argument{}},
			want: chat.Trace{Order: 1, ToolName: "now", CallID: "c1", Status: "BLOCKED", Arguments: "{}"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.tr.Stored()
			if got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
			if got.Arguments != "" && !json.Valid([]byte(got.Arguments)) {
				t.Errorf("arguments %q are not JSON", got.Arguments)
			}
		})
	}
}
