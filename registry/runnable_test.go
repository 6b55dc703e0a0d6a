package registry

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/settings"
	"github.com/stewardhq/steward/tool"
)

func chatRequest(selected ...string) Request {
	return Request{Component: ComponentChat, Selected: selected, MayRunTools: true, Provider: capable, Chat: chatView{}}
}

// "The registry takes every context tool of the component as a candidate";
// a tool with nothing to offer "is then left out of the request"; "a
// resolution which throws costs that one tool and no other".
func TestRunnableResolution(t *testing.T) {
	boom := errors.New("description service down")
	tests := []struct {
		name       string
		edit       func(*fake)
		wantOffer  bool
		wantErr    string
		wantInstrs int // how often instructions were asked
	}{
		{name: "registered function", edit: func(*fake) {}, wantOffer: true, wantInstrs: 1},
		{name: "nothing to offer", edit: func(f *fake) {
			f.resolveFn = func(context.Context, tool.ResolveContext) (*tool.Function, error) { return nil, nil }
		}},
		{name: "function fails", edit: func(f *fake) {
			f.resolveFn = func(context.Context, tool.ResolveContext) (*tool.Function, error) { return nil, boom }
		}, wantErr: "description service down"},
		{name: "function panics", edit: func(f *fake) {
			f.resolveFn = func(context.Context, tool.ResolveContext) (*tool.Function, error) { panic("index out of range") }
		}, wantErr: "panicked"},
		{name: "instructions fail", edit: func(f *fake) {
			f.resolveIn = func(context.Context, tool.ResolveContext) (string, error) { return "", boom }
		}, wantErr: "instructions", wantInstrs: 1},
		{name: "instructions panic", edit: func(f *fake) {
			f.resolveIn = func(context.Context, tool.ResolveContext) (string, error) { panic(errors.New("nil map")) }
		}, wantErr: "panicked", wantInstrs: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked := 0
			ctxTool := newFake("semantic_search", func(d *tool.Definition) { d.Activation = tool.Context })
			ctxTool.instrAsked = &asked
			tt.edit(ctxTool)
			r := mustNew(t, Options{}, []tool.Tool{newFake("before", nil), ctxTool, newFake("after", nil)}, nil)
			offered, blocked := r.Runnable(context.Background(), chatRequest("before", "after"))
			want := []string{"before", "after"}
			if tt.wantOffer {
				want = []string{"before", "semantic_search", "after"}
			}
			if got := offeredIDs(offered); !slices.Equal(got, want) {
				t.Fatalf("offered %v, want %v", got, want)
			}
			if asked != tt.wantInstrs {
				t.Fatalf("instructions asked %d times, want %d", asked, tt.wantInstrs)
			}
			b, isBlocked := blockFor(blocked, "semantic_search")
			if isBlocked == tt.wantOffer || len(blocked) > 1 {
				t.Fatalf("blocked %v", blocked)
			}
			if !isBlocked {
				return
			}
			if b.Reason != NoBlock {
				t.Fatalf("a resolution is no check: %v", b.Reason)
			}
			if tt.wantErr == "" && b.Err != nil || tt.wantErr != "" && (b.Err == nil || !strings.Contains(b.Err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want %q", b.Err, tt.wantErr)
			}
			if tt.name == "function fails" && !errors.Is(b.Err, boom) {
				t.Fatal("the cause must be wrapped")
			}
		})
	}
}

// "Only the description and the parameters of the answer count; the name
// and the strict mode stay as registered"; parameters which are no object
// leave the registered function in place.
func TestRunnableTailoredFunction(t *testing.T) {
	tailored := json.RawMessage(`{"type":"object","properties":{"data_source_ids":{"type":"array","items":{"type":"string","enum":["a","b"]}}}}`)
	tests := []struct {
		name     string
		answer   tool.Function
		wantDesc string
		wantPar  string
	}{
		{"tailored", tool.Function{Name: "other_name", Description: "Searches a and b.", Parameters: tailored, NoStrict: true}, "Searches a and b.", string(tailored)},
		{"parameters an array", tool.Function{Name: "x", Description: "Searches.", Parameters: json.RawMessage(`[1]`)}, "Does semantic_search.", objectSchema},
		{"parameters missing", tool.Function{Description: "Searches."}, "Does semantic_search.", objectSchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake("semantic_search", func(d *tool.Definition) { d.Activation = tool.Context })
			f.resolveFn = func(context.Context, tool.ResolveContext) (*tool.Function, error) { a := tt.answer; return &a, nil }
			r := mustNew(t, Options{}, []tool.Tool{f}, nil)
			offered, _ := r.Runnable(context.Background(), chatRequest())
			if len(offered) != 1 {
				t.Fatalf("offered %v", offeredIDs(offered))
			}
			fn := offered[0].Function
			if fn.Name != "semantic_search" || !fn.Strict() || fn.Description != tt.wantDesc || string(fn.Parameters) != tt.wantPar {
				t.Fatalf("function %+v", fn)
			}
			if offered[0].Tool != tool.Tool(f) || offered[0].Definition.ID != "semantic_search" {
				t.Fatal("offered must carry the tool and its definition")
			}
		})
	}
	// A NoStrict registration stays out of strict mode even when the
	// answer says otherwise.
	f := newFake("loose", func(d *tool.Definition) { d.Function.NoStrict = true })
	f.resolveFn = func(context.Context, tool.ResolveContext) (*tool.Function, error) {
		return &tool.Function{Name: "loose", Description: "d", Parameters: json.RawMessage(objectSchema)}, nil
	}
	r := mustNew(t, Options{}, []tool.Tool{f}, nil)
	if offered, _ := r.Runnable(context.Background(), chatRequest("loose")); len(offered) != 1 || offered[0].Function.Strict() {
		t.Fatalf("strict flag not kept: %+v", offered)
	}
}

// The resolution sees the resolved settings, the component, the provider's
// confidence and the chat, and the offer carries the settings.
func TestRunnableResolveContext(t *testing.T) {
	var seen tool.ResolveContext
	f := newFake("wiki", func(d *tool.Definition) {
		d.Settings = tool.SettingsSchema{Fields: []tool.SettingField{{Name: "baseUrl"}, {Name: "token", Secret: true}}, Required: []string{"baseUrl"}}
		d.SystemPromptInstructions = "registered"
	})
	f.resolveIn = func(_ context.Context, rc tool.ResolveContext) (string, error) {
		seen = rc
		return "for " + rc.Settings.Get("baseUrl"), nil
	}
	res := &settings.Resolver{
		User: settings.User{"wiki": {"baseUrl": "https://user.example"}},
		Org:  settings.Org{Locked: map[string]settings.LockedValue{"wiki.token": {Value: "tok", Plugin: "Acme"}}},
	}
	r := mustNew(t, Options{Settings: res}, []tool.Tool{f}, nil)
	chat := chatView{}
	req := chatRequest("wiki")
	req.Chat = chat
	offered, blocked := r.Runnable(context.Background(), req)
	if len(offered) != 1 {
		t.Fatalf("blocked %v", blocked)
	}
	want := tool.Settings{"baseUrl": "https://user.example", "token": "tok"}
	if !reflect.DeepEqual(offered[0].Settings, want) || !reflect.DeepEqual(seen.Settings, want) {
		t.Fatalf("settings %v / %v", offered[0].Settings, seen.Settings)
	}
	if seen.Component != ComponentChat || seen.ProviderConfidence != policy.Medium || seen.Chat != tool.ChatView(chat) || seen.Definition.ID != "wiki" {
		t.Fatalf("resolve context %+v", seen)
	}
	if offered[0].Instructions != "for https://user.example" {
		t.Fatalf("instructions %q", offered[0].Instructions)
	}
	// Without a chat, tools see an empty one rather than nil.
	req.Chat = nil
	if offered, _ := r.Runnable(context.Background(), req); len(offered) != 1 || seen.Chat == nil || seen.Chat.IsWebAddressGiven("https://x.example/") || seen.Chat.OutboundRequirement().Set {
		t.Fatalf("no chat: offered %v, chat %v", offeredIDs(offered), seen.Chat)
	}
}

// Cancellation during resolution is not a failure of one tool: Runnable
// stops and leaves the cause in ctx.Err().
func TestRunnableCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFake("slow", nil)
	f.resolveFn = func(ctx context.Context, _ tool.ResolveContext) (*tool.Function, error) {
		cancel()
		return nil, ctx.Err()
	}
	r := mustNew(t, Options{}, []tool.Tool{newFake("first", nil), f, newFake("last", nil)}, nil)
	offered, blocked := r.Runnable(ctx, chatRequest("first", "slow", "last"))
	if offered != nil || blocked != nil || !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("offered %v blocked %v", offeredIDs(offered), blocked)
	}
}

// "Keep the answer stable while the chat stays the same, down to the
// order": the offer follows registration order, whatever the selection's.
func TestRunnableStableOrder(t *testing.T) {
	var tools []tool.Tool
	for _, id := range []string{"alpha", "beta", "gamma", "delta"} {
		tools = append(tools, newFake(id, nil))
	}
	r := mustNew(t, Options{}, tools, nil)
	a, _ := r.Runnable(context.Background(), chatRequest("delta", "alpha", "gamma"))
	b, _ := r.Runnable(context.Background(), chatRequest("gamma", "delta", "alpha"))
	if got := offeredIDs(a); !slices.Equal(got, []string{"alpha", "gamma", "delta"}) || !slices.Equal(got, offeredIDs(b)) {
		t.Fatalf("%v vs %v", got, offeredIDs(b))
	}
}

// Context tools which are not visible or not present are no candidates.
func TestRunnableContextToolCandidates(t *testing.T) {
	hidden := newFake("hidden_ctx", func(d *tool.Definition) { d.Activation = tool.Context; d.VisibleIn = tool.Visibility{Assistants: true} })
	absent := newFake("absent_ctx", func(d *tool.Definition) { d.Activation = tool.Context })
	absent.unavailable = true
	r := mustNew(t, Options{}, []tool.Tool{hidden, absent}, nil)
	offered, blocked := r.Runnable(context.Background(), chatRequest())
	if len(offered) != 0 || len(blocked) != 0 {
		t.Fatalf("offered %v blocked %v", offeredIDs(offered), blocked)
	}
	offered, _ = r.Runnable(context.Background(), Request{Component: "EMAIL_ASSISTANT", MayRunTools: true, Provider: capable})
	if !slices.Equal(offeredIDs(offered), []string{"hidden_ctx"}) {
		t.Fatalf("offered %v", offeredIDs(offered))
	}
}

func TestInstructions(t *testing.T) {
	offer := func(name, instr string) tool.Offered {
		return tool.Offered{Function: tool.Function{Name: name}, Instructions: instr}
	}
	r := mustNew(t, Options{}, nil, nil)
	tests := []struct {
		name    string
		offered []tool.Offered
		want    string
	}{
		{"none", nil, ""},
		{"only blank", []tool.Offered{offer("a", " \n "), offer("b", "")}, ""},
		{"sections in order, trimmed, duplicates once", []tool.Offered{
			offer("web_search", "  Cite sources.\n"), offer("silent", ""), offer("read_web_page", "Read given links only."), offer("web_search", "Cite sources."),
		}, "## Tool `web_search`\nCite sources.\n\n## Tool `read_web_page`\nRead given links only."},
		{"same text under two names stays twice", []tool.Offered{offer("a", "Same."), offer("b", "Same.")}, "## Tool `a`\nSame.\n\n## Tool `b`\nSame."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.Instructions(tt.offered)
			if tt.want == "" {
				if got != "" {
					t.Fatalf("got %q", got)
				}
				return
			}
			prefix := InstructionsHeading + "\n" + instructionsIntro + "\n\n"
			if !strings.HasPrefix(got, prefix) || strings.TrimPrefix(got, prefix) != tt.want {
				t.Fatalf("got\n%s\nwant sections\n%s", got, tt.want)
			}
		})
	}
}

// "Whenever the tool cannot be offered — a model without tool calling,
// tools or this tool switched off, a provider below a confidence the
// organization set for it — the classic process searches instead."
func TestEffectiveRetrievalMode(t *testing.T) {
	semantic := func() *fake {
		return newFake("semantic_search", func(d *tool.Definition) { d.Activation = tool.Context; d.MinimumConfidence = policy.Low })
	}
	tests := []struct {
		name       string
		pol        settings.Policy
		noTool     bool
		prefers    bool
		prov       Provider
		component  string
		wantMode   RetrievalMode
		wantReason Reason
	}{
		{"semantic search", settings.Policy{}, false, true, capable, ComponentChat, SemanticSearch, NoBlock},
		{"user prefers every message", settings.Policy{}, false, false, capable, ComponentChat, EveryMessage, NoBlock},
		{"outside the chat", settings.Policy{}, false, true, capable, "EMAIL_ASSISTANT", EveryMessage, NotAvailableHere},
		{"model without tool calling", settings.Policy{}, false, true, Provider{Confidence: policy.High}, ComponentChat, EveryMessage, ModelCannotUseTools},
		{"tools off", settings.Policy{ToolsOff: true}, false, true, capable, ComponentChat, EveryMessage, ToolsSwitchedOff},
		{"tool off", settings.Policy{DisabledIDs: []string{"semantic_search"}}, false, true, capable, ComponentChat, EveryMessage, ToolSwitchedOff},
		{"organization raised the confidence", settings.Policy{Confidence: settings.ConfidenceOverrides{Locked: map[string]settings.LockedValue{"semantic_search": {Value: "HIGH"}}}},
			false, true, capable, ComponentChat, EveryMessage, ProviderConfidenceTooLow},
		{"tool not registered", settings.Policy{}, true, true, capable, ComponentChat, EveryMessage, NotAvailableHere},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tools []tool.Tool
			if !tt.noTool {
				tools = append(tools, semantic())
			}
			r := mustNew(t, Options{Policy: tt.pol}, tools, nil)
			mode, reason := r.EffectiveRetrievalMode(context.Background(), tt.prefers, tt.prov, tt.component)
			if mode != tt.wantMode || reason != tt.wantReason {
				t.Fatalf("got (%v, %v), want (%v, %v)", mode, reason, tt.wantMode, tt.wantReason)
			}
		})
	}
}

func TestCatalog(t *testing.T) {
	mails := func(id string, required bool) *fake {
		return newFake(id, func(d *tool.Definition) {
			d.Settings.Fields = []tool.SettingField{{Name: "folder"}}
			if required {
				d.Settings.Required = []string{"folder"}
			}
		})
	}
	absent := newFake("absent", nil)
	absent.unavailable = true
	tools := []tool.Tool{
		newFake("web_search", func(d *tool.Definition) { d.MinimumConfidence = policy.Low }),
		mails("search_mails", false), mails("read_mail", true), mails("count_mails", true),
		newFake("semantic_search", func(d *tool.Definition) { d.Activation = tool.Context }),
		newFake("chat_only", func(d *tool.Definition) { d.VisibleIn = tool.Visibility{Chat: true} }),
		absent,
	}
	pol := settings.Policy{DisabledIDs: []string{"web_search"}}
	r := mustNew(t, Options{Policy: pol}, tools, []Collection{{ID: "mailboxes", ToolIDs: []string{"search_mails", "read_mail", "count_mails"}, MinimumConfidence: policy.VeryLow, Description: "Mail."}})
	items := r.Catalog(context.Background(), ComponentChat)
	var ids []string
	for _, it := range items {
		ids = append(ids, it.ID)
	}
	if !slices.Equal(ids, []string{"web_search", "mailboxes", "chat_only"}) {
		t.Fatalf("items %v", ids)
	}
	ws, mb := items[0], items[1]
	if ws.Active || ws.Declared || ws.MinimumConfidence.Level != policy.Low || !ws.State.Configured() || ws.Description != "Does web_search." {
		t.Fatalf("web_search item %+v", ws)
	}
	if !mb.Active || !mb.Declared || mb.MinimumConfidence.Level != policy.VeryLow || len(mb.Tools) != 3 || mb.Tools[1].ID != "read_mail" {
		t.Fatalf("mailboxes item %+v", mb)
	}
	if mb.State.Configured() || !slices.Equal(mb.State.Missing, []string{"folder"}) || !strings.Contains(mb.State.String(), "folder") {
		t.Fatalf("the first unconfigured tool's state: %+v", mb.State)
	}
	if got := r.Catalog(context.Background(), "EMAIL_ASSISTANT"); len(got) != 2 {
		t.Fatalf("assistant catalog %+v", got)
	}
}

func TestSettingsCatalogAndSelectable(t *testing.T) {
	absent := newFake("absent", nil)
	absent.unavailable = true
	unconfigured := newFake("wiki", func(d *tool.Definition) {
		d.Settings = tool.SettingsSchema{Fields: []tool.SettingField{{Name: "url"}}, Required: []string{"url"}}
	})
	tools := []tool.Tool{
		newFake("web_search", nil), newFake("off", nil), unconfigured, absent,
		newFake("semantic_search", func(d *tool.Definition) { d.Activation = tool.Context }),
		newFake("writer_only", func(d *tool.Definition) { d.VisibleIn = tool.Visibility{Allowed: []string{"WRITER"}} }),
	}
	r := mustNew(t, Options{Policy: settings.Policy{DisabledIDs: []string{"off"}}}, tools, nil)
	var ids []string
	for _, it := range r.SettingsCatalog(context.Background()) {
		ids = append(ids, it.ID)
	}
	if !slices.Equal(ids, []string{"web_search", "off", "wiki", "semantic_search", "writer_only"}) {
		t.Fatalf("settings catalog %v", ids)
	}
	if got := r.Selectable(context.Background(), ComponentChat); !slices.Equal(got, []string{"web_search"}) {
		t.Fatalf("selectable %v", got)
	}
	if got, ok := r.Tool("wiki"); !ok || got != tool.Tool(unconfigured) {
		t.Fatal("Tool(wiki)")
	}
	if _, ok := r.Tool("nope"); ok {
		t.Fatal("Tool(nope)")
	}
}

// panicky panics when asked where its data goes, i.e. during the checks.
type panicky struct{ *fake }

func (panicky) OutboundData() policy.OutboundData { panic("this tool panics on purpose") }

// A panic in any of a tool's methods during the decision costs that tool
// only.
func TestRunnablePanicInChecksCostsOneTool(t *testing.T) {
	r := mustNew(t, Options{}, []tool.Tool{newFake("first", nil), panicky{newFake("broken", nil)}, newFake("last", nil)}, nil)
	req := chatRequest("first", "broken", "last")
	req.Chat = chatView{req: policy.OutboundRequirement{Set: true, Restriction: policy.OnlyLinksFromChat}}
	offered, blocked := r.Runnable(context.Background(), req)
	if !slices.Equal(offeredIDs(offered), []string{"first", "last"}) {
		t.Fatalf("offered %v", offeredIDs(offered))
	}
	b, ok := blockFor(blocked, "broken")
	if !ok || b.Err == nil || !strings.Contains(b.Err.Error(), "panicked") {
		t.Fatalf("blocked %v", blocked)
	}
}
