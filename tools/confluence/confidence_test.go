package confluence

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stewardhq/steward/chat"
	"github.com/stewardhq/steward/internal/confluencetest"
	"github.com/stewardhq/steward/internal/webtest"
	"github.com/stewardhq/steward/llm"
	"github.com/stewardhq/steward/loop"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/registry"
	"github.com/stewardhq/steward/settings"
	"github.com/stewardhq/steward/tool"
	"github.com/stewardhq/steward/tools/webpage"
)

// registryFor registers search_confluence and read_web_page with the
// fake's settings and an organization that lowered search_confluence's
// minimum to lowered (blank: no override).
func registryFor(t *testing.T, tl *Tool, s tool.Settings, lowered string) *registry.Registry {
	t.Helper()
	pol := settings.Policy{}
	switch level, user := strings.CutPrefix(lowered, "user:"); {
	case user:
		c, err := policy.ParseConfidence(level)
		if err != nil {
			t.Fatal(err)
		}
		pol.Confidence.User = map[string]policy.Confidence{ID: c}
	case lowered != "":
		pol.Confidence.Locked = map[string]settings.LockedValue{ID: {Value: lowered, Plugin: "org"}}
	}
	user, secrets := settings.User{ID: {}}, keyring{}
	for k, v := range s {
		if f, _ := Definition().Settings.Field(k); f.Secret {
			secrets[k] = v
		} else {
			user[ID][k] = v
		}
	}
	r, problems := registry.New(registry.Options{Policy: pol, Settings: &settings.Resolver{User: user, Secrets: secrets}},
		[]tool.Tool{webpage.New(webpage.Deps{}), tl}, nil)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	return r
}

// keyring holds the tool's secrets, as the OS keyring would.
type keyring map[string]string

func (k keyring) ToolSecret(_ context.Context, toolID, field string) (string, bool, error) {
	v, ok := k[field]
	return v, ok && toolID == ID, nil
}

func offeredIDs(o []tool.Offered) string {
	var ids []string
	for _, x := range o {
		ids = append(ids, x.Definition.ID)
	}
	return strings.Join(ids, " ")
}

// The seed's rule: the tool is offered to HIGH-confidence providers only
// and checks again before each search, because a lowered tool setting must
// not let internal wiki content reach a less trusted provider.
func TestALoweredSettingDoesNotLetWikiContentReachAMediumProvider(t *testing.T) {
	t.Parallel()
	w := newCloud(t, confluencetest.Options{})
	tl, _ := w.tool(t, &webtest.Reports{}, Deps{})
	s := cloudSettings(w)
	medium := registry.Provider{Confidence: policy.Medium, CanUseTools: true}
	high := registry.Provider{Confidence: policy.High, CanUseTools: true}
	req := func(p registry.Provider) registry.Request {
		return registry.Request{Component: registry.ComponentChat, Selected: []string{ID}, MayRunTools: true, Provider: p, Chat: &chat.Thread{}}
	}

	// Without an override the registry keeps MEDIUM out on its own.
	r := registryFor(t, tl, s, "")
	if got := r.OfferBlockReason(context.Background(), ID, medium, registry.ComponentChat); got != registry.ProviderConfidenceTooLow {
		t.Fatalf("block reason %v", got)
	}
	// Selecting search_confluence selects read_web_page too.
	offered, _ := r.Runnable(context.Background(), req(high))
	if got := offeredIDs(offered); got != "read_web_page search_confluence" {
		t.Fatalf("offered to HIGH: %q", got)
	}

	// The organization (or the user) lowers the minimum to MEDIUM: the
	// registry would let the tool through, but the tool offers nothing to
	// MEDIUM …
	for _, lowered := range []string{"MEDIUM", "user:MEDIUM"} {
		r = registryFor(t, tl, s, lowered)
		if got := r.OfferBlockReason(context.Background(), ID, medium, registry.ComponentChat); got != registry.NoBlock {
			t.Fatalf("%s: with the lowered setting, block reason %v", lowered, got)
		}
		offered, blocked := r.Runnable(context.Background(), req(medium))
		if strings.Contains(offeredIDs(offered), ID) {
			t.Fatalf("%s: offered to MEDIUM: %q", lowered, offeredIDs(offered))
		}
		found := false
		for _, b := range blocked {
			found = found || (b.ToolID == ID && strings.Contains(b.Detail, "nothing to offer"))
		}
		if !found {
			t.Fatalf("%s: blocked %v", lowered, blocked)
		}
	}
	r = registryFor(t, tl, s, "MEDIUM")

	// … and a call that arrives anyway (offered to HIGH, then the chat went
	// on with a MEDIUM provider, or a stale offer) is blocked before any
	// request: the wiki never hears of it.
	offered, _ = r.Runnable(context.Background(), req(high))
	var off tool.Offered
	for _, o := range offered {
		if o.Definition.ID == ID {
			off = o
		}
	}
	th := &chat.Thread{}
	out, err := loop.Execute(context.Background(), llm.Call{ID: "c1", Name: ID, Arguments: json.RawMessage(`{"query":"salary bands"}`), Valid: true}, 1,
		loop.RunContext{Tools: []tool.Offered{off}, Chat: th, ProviderConfidence: policy.Medium})
	if err != nil {
		t.Fatal(err)
	}
	if out.Trace.Status != loop.StatusBlocked || !strings.Contains(out.Content, "HIGH confidence") || !strings.Contains(out.Content, "MEDIUM") {
		t.Fatalf("outcome %+v", out)
	}
	if n := len(w.Requests()); n != 0 {
		t.Fatalf("the wiki got %d requests for a MEDIUM provider", n)
	}
	if th.RequiredConfidence() != policy.None || len(out.Sources) != 0 {
		t.Fatal("a blocked search demanded something of the chat")
	}
	// The phrase is masked in the trace.
	if b, _ := json.Marshal(out.Trace); strings.Contains(string(b), "salary") {
		t.Fatalf("the trace shows the query: %s", b)
	}
}

// A search that brought wiki content raises the chat's requirement to
// HIGH, and each hit's address counts as given to the model, so
// read_web_page may open it; the query stays masked in the trace.
func TestResultRaisesTheChatAndGivesItsAddresses(t *testing.T) {
	t.Parallel()
	w := newCloud(t, confluencetest.Options{})
	tl, _ := w.tool(t, &webtest.Reports{}, Deps{})
	r := registryFor(t, tl, merge(cloudSettings(w), tool.Settings{SettingPageBodies: "0"}), "")
	offered, _ := r.Runnable(context.Background(), registry.Request{Component: registry.ComponentChat, Selected: []string{ID}, MayRunTools: true,
		Provider: registry.Provider{Confidence: policy.High, CanUseTools: true}})
	th := &chat.Thread{}
	rc := loop.RunContext{Tools: offered, Chat: th, ProviderConfidence: policy.High}
	out, err := loop.Execute(context.Background(), llm.Call{ID: "c1", Name: ID, Arguments: json.RawMessage(`{"query":"vpn"}`), Valid: true}, 1, rc)
	if err != nil || out.Trace.Status != loop.StatusSuccess {
		t.Fatalf("%+v %v", out, err)
	}
	if th.RequiredConfidence() != policy.High {
		t.Fatalf("the chat requires %v", th.RequiredConfidence())
	}
	hit := w.url(siteHost, "/wiki/spaces/IT/pages/5570619/VPN+setup")
	if !th.IsWebAddressGiven(hit) {
		t.Fatalf("the hit's address is not given to the model; ledger %v", out.ReturnedAddresses)
	}
	if b, _ := json.Marshal(out.Trace); strings.Contains(string(b), `"vpn"`) || !strings.Contains(string(b), loop.MaskedValue) {
		t.Fatalf("trace %s", b)
	}
	// An empty search brings nothing and demands nothing.
	th2 := &chat.Thread{}
	rc.Chat = th2
	out, err = loop.Execute(context.Background(), llm.Call{ID: "c2", Name: ID, Arguments: json.RawMessage(`{"query":"xyzzy"}`), Valid: true}, 1, rc)
	if err != nil || out.Trace.Status != loop.StatusSuccess || th2.RequiredConfidence() != policy.None {
		t.Fatalf("%+v %v %v", out, err, th2.RequiredConfidence())
	}
}

func TestResolveFunctionOffersHighOnly(t *testing.T) {
	tl := New(Deps{})
	for _, c := range []struct {
		conf policy.Confidence
		want bool
	}{{policy.None, false}, {policy.Medium, false}, {policy.Moderate, false}, {policy.High, true}} {
		fn, err := tl.ResolveFunction(context.Background(), tool.ResolveContext{Definition: Definition(), ProviderConfidence: c.conf})
		if err != nil || (fn != nil) != c.want {
			t.Errorf("%v: %v %v", c.conf, fn, err)
		}
	}
}
