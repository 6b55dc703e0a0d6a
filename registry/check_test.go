package registry

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/settings"
	"github.com/stewardhq/steward/tool"
	"pgregory.net/rapid"
)

// conditions that keep a tool from being offered, in the order of the
// checks; reasonOf maps each to its reason.
const (
	condToolsOff = iota
	condCannotUseTools
	condInvisible
	condDisabled
	condUnavailable
	condNotConfigured
	condConfidence
	condOutbound
	condCount
)

var reasonOf = [condCount]Reason{ToolsSwitchedOff, ModelCannotUseTools, NotAvailableHere, ToolSwitchedOff,
	NotAvailableHere, NotConfigured, ProviderConfidenceTooLow, OutboundDataRestricted}

// setup builds a registry with one tool "probe" and a request for it, in
// which exactly the conditions of mask hold.
func setup(t testing.TB, mask int) (*Registry, Request) {
	has := func(c int) bool { return mask&(1<<c) != 0 }
	probe := newFake("probe", func(d *tool.Definition) {
		d.VisibleIn = tool.Visibility{Chat: !has(condInvisible), Assistants: true}
		d.Settings = tool.SettingsSchema{Fields: []tool.SettingField{{Name: "url"}}, Required: []string{"url"}}
		d.MinimumConfidence = policy.Low
		if has(condConfidence) {
			d.MinimumConfidence = policy.High
		}
	})
	probe.unavailable = has(condUnavailable)
	if has(condOutbound) {
		probe.outbound = policy.ThirdPartyQueries
	}
	opts := Options{Policy: settings.Policy{ToolsOff: has(condToolsOff)}, Settings: &settings.Resolver{User: settings.User{}}}
	if has(condDisabled) {
		opts.Policy.DisabledIDs = []string{"probe"}
	}
	if !has(condNotConfigured) {
		opts.Settings.User["probe"] = map[string]string{"url": "https://wiki.example"}
	}
	r := mustNew(t, opts, []tool.Tool{probe, newFake("bystander", nil)}, nil)
	req := Request{
		Component:   ComponentChat,
		Selected:    []string{"probe"},
		MayRunTools: true,
		Provider:    Provider{Confidence: policy.Medium, CanUseTools: !has(condCannotUseTools)},
		Chat:        chatView{req: policy.OutboundRequirement{Set: true, Restriction: policy.OnlyLinksFromChat, MailboxName: "inbox"}},
	}
	return r, req
}

// "Every blocked tool gets its reason", "the earlier reason wins when two
// apply", and OfferBlockReason "answers with the same checks in the same
// order as the request" (with the outbound check left out). All 256
// combinations of the eight conditions.
func TestOfferBlockOrder(t *testing.T) {
	reached := map[Reason]bool{}
	for mask := 0; mask < 1<<condCount; mask++ {
		t.Run(fmt.Sprintf("mask=%08b", mask), func(t *testing.T) {
			r, req := setup(t, mask)
			wantRun, wantOffer := NoBlock, NoBlock
			for c := condCount - 1; c >= 0; c-- {
				if mask&(1<<c) != 0 {
					wantRun = reasonOf[c]
					if c != condOutbound {
						wantOffer = reasonOf[c]
					}
				}
			}
			ctx := context.Background()
			if got := r.OfferBlockReason(ctx, "probe", req.Provider, req.Component); got != wantOffer {
				t.Fatalf("OfferBlockReason = %v, want %v", got, wantOffer)
			}
			offered, blocked := r.Runnable(ctx, req)
			b, isBlocked := blockFor(blocked, "probe")
			if wantRun == NoBlock {
				if isBlocked || !slices.Equal(offeredIDs(offered), []string{"probe"}) {
					t.Fatalf("want probe offered; offered %v blocked %v", offeredIDs(offered), blocked)
				}
				return
			}
			if !isBlocked || b.Reason != wantRun || slices.Contains(offeredIDs(offered), "probe") {
				t.Fatalf("want probe blocked with %v; offered %v blocked %v", wantRun, offeredIDs(offered), blocked)
			}
			if b.Detail == "" {
				t.Fatal("a block needs a detail")
			}
			reached[b.Reason] = true
		})
	}
	for _, reason := range reasonOf {
		if !reached[reason] {
			t.Errorf("reason %v never reached", reason)
		}
	}
	if got := NoBlock.String() + " " + OutboundDataRestricted.String(); got != "NONE OUTBOUND_DATA_RESTRICTED" {
		t.Errorf("names: %s", got)
	}
}

func TestRunnableWithoutMayRunTools(t *testing.T) {
	r, req := setup(t, 0)
	req.MayRunTools = false
	if o, b := r.Runnable(context.Background(), req); o != nil || b != nil {
		t.Fatalf("got %v %v", o, b)
	}
}

func TestRunnableReportsSelectionsWhichAreNoCandidates(t *testing.T) {
	r, req := setup(t, 0)
	req.Selected = []string{"probe", "plugin_tool"}
	_, blocked := r.Runnable(context.Background(), req)
	b, ok := blockFor(blocked, "plugin_tool")
	if !ok || b.Reason != NotAvailableHere || !strings.Contains(b.Detail, "no tool has this ID") {
		t.Fatalf("blocked %v", blocked)
	}
	if _, ok := blockFor(blocked, "bystander"); ok {
		t.Fatal("a tool which is neither selected nor a context tool is no candidate")
	}
	if r.OfferBlockReason(context.Background(), "plugin_tool", req.Provider, req.Component) != NotAvailableHere {
		t.Fatal("unknown tools are not available here")
	}
}

func TestNotConfiguredNamesTheMissingFields(t *testing.T) {
	r, req := setup(t, 1<<condNotConfigured)
	_, blocked := r.Runnable(context.Background(), req)
	b, _ := blockFor(blocked, "probe")
	if b.Reason != NotConfigured || !strings.Contains(b.Detail, "url") {
		t.Fatalf("block %+v", b)
	}
}

// "A collection's confidence setting applies to all its tools", the
// tool's own minimum "does not count once it belongs to a collection",
// and "an organization which names one tool of a collection switches the
// whole collection off".
func TestCollectionSettingsApplyToAllItsTools(t *testing.T) {
	build := func(p settings.Policy) *Registry {
		return mustNew(t, Options{Policy: p}, []tool.Tool{
			newFake("search_mails", func(d *tool.Definition) { d.MinimumConfidence = policy.High }),
			newFake("read_mail", nil),
		}, []Collection{{ID: "mailboxes", ToolIDs: []string{"search_mails", "read_mail"}, MinimumConfidence: policy.VeryLow}})
	}
	ctx := context.Background()
	low := Provider{Confidence: policy.Low, CanUseTools: true}
	r := build(settings.Policy{})
	if got := r.OfferBlockReason(ctx, "search_mails", low, ComponentChat); got != NoBlock {
		t.Fatalf("the collection's minimum replaces the tool's: %v", got)
	}
	r = build(settings.Policy{Confidence: settings.ConfidenceOverrides{User: map[string]policy.Confidence{"read_mail": policy.Medium}}})
	for _, id := range []string{"search_mails", "read_mail"} {
		if got := r.OfferBlockReason(ctx, id, low, ComponentChat); got != ProviderConfidenceTooLow {
			t.Fatalf("%s: a level set for one tool raises the whole collection: %v", id, got)
		}
	}
	m, _ := r.MinimumConfidence("mailboxes")
	if m.Level != policy.Medium || m.Origin != settings.OriginUser {
		t.Fatalf("minimum %+v", m)
	}
	r = build(settings.Policy{DisabledIDs: []string{"read_mail"}})
	if got := r.OfferBlockReason(ctx, "search_mails", low, ComponentChat); got != ToolSwitchedOff || r.Active("mailboxes") {
		t.Fatalf("naming one tool switches the collection off: %v", got)
	}
}

// The outbound data restriction of the chat: below UNRESTRICTED only NONE
// and CONFIGURED_SERVICE run, plus a tool which enforces the restriction
// itself; the request's own restriction tightens the chat's.
func TestRunnableOutbound(t *testing.T) {
	mk := func(id string, o policy.OutboundData, enforces bool) *fake {
		f := newFake(id, nil)
		f.outbound, f.enforces = o, enforces
		return f
	}
	r := mustNew(t, Options{}, []tool.Tool{
		mk("local", policy.NoOutbound, false), mk("wiki", policy.ConfiguredService, false),
		mk("search", policy.ThirdPartyQueries, false), mk("fetch", policy.ModelChosenAddresses, false),
		mk("reader", policy.ModelChosenAddresses, true),
	}, nil)
	all := []string{"local", "wiki", "search", "fetch", "reader"}
	tests := []struct {
		name       string
		chat       tool.ChatView
		extra      policy.OutboundRequirement
		wantOffers []string
	}{
		{"no chat", nil, policy.OutboundRequirement{}, all},
		{"unrestricted chat", chatView{}, policy.OutboundRequirement{}, all},
		{"links from chat", chatView{req: policy.OutboundRequirement{Set: true, Restriction: policy.OnlyLinksFromChat}}, policy.OutboundRequirement{}, []string{"local", "wiki", "reader"}},
		{"unreadable level counts as strictest", chatView{req: policy.OutboundRequirement{Set: true, Restriction: 9}}, policy.OutboundRequirement{}, []string{"local", "wiki", "reader"}},
		{"request restriction without chat", nil, policy.OutboundRequirement{Set: true, Restriction: policy.OnlyConfiguredServices}, []string{"local", "wiki", "reader"}},
		{"request restriction tightens an unrestricted chat", chatView{}, policy.OutboundRequirement{Set: true, Restriction: policy.OnlyLinksFromChat}, []string{"local", "wiki", "reader"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			offered, blocked := r.Runnable(context.Background(), Request{Component: ComponentChat, Selected: all, MayRunTools: true, Provider: capable, Chat: tt.chat, Restriction: tt.extra})
			if got := offeredIDs(offered); !slices.Equal(got, tt.wantOffers) {
				t.Fatalf("offered %v, want %v (blocked %v)", got, tt.wantOffers, blocked)
			}
			for _, b := range blocked {
				if b.Reason != OutboundDataRestricted {
					t.Fatalf("unexpected block %v", b)
				}
			}
		})
	}
}

// "a tool below its confidence is never runnable": whatever the declared
// levels, collection, overrides and provider, an offered tool's provider
// meets the minimum worked out from the rules, and OfferBlockReason
// agrees with the request.
func TestPropertyBelowConfidenceNeverRunnable(t *testing.T) {
	levels := policy.Levels()
	ids := []string{"search_mails", "read_mail", "web_search", "mailboxes"}
	rapid.Check(t, func(t *rapid.T) {
		level := rapid.SampledFrom(levels)
		inCollection := rapid.Bool().Draw(t, "inCollection")
		toolMin := map[string]policy.Confidence{}
		var tools []tool.Tool
		for _, id := range ids[:3] {
			toolMin[id] = level.Draw(t, "min "+id)
			tools = append(tools, newFake(id, func(d *tool.Definition) { d.MinimumConfidence = toolMin[id] }))
		}
		colMin := level.Draw(t, "collection min")
		var cols []Collection
		if inCollection {
			cols = []Collection{{ID: "mailboxes", ToolIDs: []string{"search_mails", "read_mail"}, MinimumConfidence: colMin}}
		}
		over := settings.ConfidenceOverrides{Locked: map[string]settings.LockedValue{}, User: map[string]policy.Confidence{}}
		for _, id := range ids {
			if rapid.Bool().Draw(t, "locked? "+id) {
				over.Locked[id] = settings.LockedValue{Value: rapid.SampledFrom([]string{"NONE", "LOW", "MEDIUM", "HIGH", "UNKNOWN", "nonsense"}).Draw(t, "locked "+id)}
			}
			if rapid.Bool().Draw(t, "user? "+id) {
				over.User[id] = level.Draw(t, "user "+id)
			}
		}
		r, errs := New(Options{Policy: settings.Policy{Confidence: over}}, tools, cols)
		if len(errs) > 0 {
			t.Fatalf("New: %v", errs)
		}
		prov := Provider{Confidence: level.Draw(t, "provider"), CanUseTools: true}
		offered, _ := r.Runnable(context.Background(), Request{Component: ComponentChat, Selected: ids, MayRunTools: true, Provider: prov})

		// The rules, written out independently.
		minimum := func(id string) policy.Confidence {
			settingsIDs, declared := []string{id}, toolMin[id]
			if inCollection && id != "web_search" {
				settingsIDs, declared = []string{"mailboxes", "search_mails", "read_mail"}, colMin
			}
			best, found := policy.None, false
			for _, s := range settingsIDs {
				if l, ok := over.Locked[s]; ok {
					v, err := policy.ParseConfidence(l.Value)
					if err != nil || v == policy.Unknown {
						v = policy.High
					}
					best, found = policy.Max(best, v), true
				}
			}
			if found {
				return best
			}
			for _, s := range settingsIDs {
				if v, ok := over.User[s]; ok {
					best, found = policy.Max(best, v), true
				}
			}
			if found {
				return best
			}
			return declared
		}
		for _, id := range ids[:3] {
			allowed := minimum(id) == policy.None || prov.Confidence >= minimum(id)
			isOffered := slices.Contains(offeredIDs(offered), id)
			if isOffered && !allowed {
				t.Fatalf("%s offered to %v below its minimum %v", id, prov.Confidence, minimum(id))
			}
			if isOffered != allowed {
				t.Fatalf("%s: offered=%v, allowed=%v (minimum %v)", id, isOffered, allowed, minimum(id))
			}
			reason := r.OfferBlockReason(context.Background(), id, prov, ComponentChat)
			if (reason == ProviderConfidenceTooLow) == allowed || (reason == NoBlock) != allowed {
				t.Fatalf("%s: OfferBlockReason %v disagrees (allowed=%v)", id, reason, allowed)
			}
		}
	})
}

func TestNamesAndUnknownIDs(t *testing.T) {
	if Reason(99).String() != "Reason(99)" || SemanticSearch.String() != "SEMANTIC_SEARCH" || EveryMessage.String() != "EVERY_MESSAGE" {
		t.Fatal("names")
	}
	b := Block{ToolID: "wiki", Reason: NotConfigured, Detail: "not configured: the required setting url is missing"}
	if b.String() != "wiki: NOT_CONFIGURED (not configured: the required setting url is missing)" {
		t.Fatal(b.String())
	}
	r := mustNew(t, Options{}, []tool.Tool{newFake("web_search", nil)}, nil)
	if r.Active("nope") || !r.Active("web_search") {
		t.Fatal("Active")
	}
	if _, ok := r.MinimumConfidence("nope"); ok {
		t.Fatal("MinimumConfidence of an unknown ID")
	}
}

// demandingChat is a chat whose data demands a confidence and a data
// security.
type demandingChat struct {
	chatView
	confidence policy.Confidence
	security   policy.DataSecurity
}

func (c demandingChat) RequiredConfidence() policy.Confidence { return c.confidence }
func (c demandingChat) DataSecurity() policy.DataSecurity     { return c.security }

// TestChatDemandsKeepToolsFromAProviderItMayNotUse: a provider the chat's
// data may no longer go to (a confidence above the provider's, SELF_HOSTED
// data security for a provider that is not self-hosted or trusted) is
// offered no tool, and each block names what the chat demands.
func TestChatDemandsKeepToolsFromAProviderItMayNotUse(t *testing.T) {
	r := mustNew(t, Options{}, []tool.Tool{newFake("local", nil), newFake("wiki", nil)}, nil)
	all := []string{"local", "wiki"}
	tests := []struct {
		name     string
		chat     demandingChat
		provider Provider
		reason   Reason
		detail   string
	}{
		{"nothing demanded", demandingChat{}, capable, NoBlock, ""},
		{"confidence met", demandingChat{confidence: policy.Medium}, capable, NoBlock, ""},
		{"confidence above the provider's", demandingChat{confidence: policy.High}, capable, ProviderConfidenceTooLow,
			"the chat holds data that may only go to providers with confidence HIGH or higher, and the provider has MEDIUM"},
		{"self-hosted data, cloud provider", demandingChat{security: policy.SelfHosted}, capable, DataSecurityRestricted, "only go to self-hosted providers"},
		{"self-hosted data, self-hosted provider", demandingChat{security: policy.SelfHosted}, Provider{Confidence: policy.High, CanUseTools: true, Trusted: true}, NoBlock, ""},
		{"allow-any data", demandingChat{security: policy.AllowAny}, capable, NoBlock, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			offered, blocked := r.Runnable(context.Background(), Request{Component: ComponentChat, Selected: all, MayRunTools: true, Provider: tc.provider, Chat: tc.chat})
			if tc.reason == NoBlock {
				if len(offered) != 2 || len(blocked) != 0 {
					t.Fatalf("offered %v, blocked %v", offeredIDs(offered), blocked)
				}
				return
			}
			if len(offered) != 0 || len(blocked) != 2 {
				t.Fatalf("offered %v, blocked %v", offeredIDs(offered), blocked)
			}
			for _, b := range blocked {
				if b.Reason != tc.reason || !strings.Contains(b.Detail, tc.detail) {
					t.Errorf("block %v, want %v with %q", b, tc.reason, tc.detail)
				}
			}
		})
	}
}
