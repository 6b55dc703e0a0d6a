package semantic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/chat"
	"github.com/stewardhq/steward/datasource"
	"github.com/stewardhq/steward/datasource/eri"
	"github.com/stewardhq/steward/guard"
	"github.com/stewardhq/steward/internal/eritest"
	"github.com/stewardhq/steward/llm"
	"github.com/stewardhq/steward/loop"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/registry"
	"github.com/stewardhq/steward/tool"
)

type fakeLocal struct {
	mu   sync.Mutex
	hits map[string][]datasource.LocalHit
	fail map[string]error
}

func (f *fakeLocal) Search(_ context.Context, src datasource.Source, q string, offset, limit int) (datasource.LocalResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.fail[src.ID]; err != nil {
		return datasource.LocalResult{}, err
	}
	var matching []datasource.LocalHit
	for _, h := range f.hits[src.ID] {
		for _, w := range strings.Fields(strings.ToLower(q)) {
			if strings.Contains(strings.ToLower(h.Text), w) {
				matching = append(matching, h)
				break
			}
		}
	}
	if offset >= len(matching) {
		return datasource.LocalResult{}, nil
	}
	end := min(len(matching), offset+limit)
	return datasource.LocalResult{Hits: matching[offset:end], HasMore: end < len(matching)}, nil
}

type reports struct {
	mu sync.Mutex
	n  int
}

func (r *reports) Report(guard.Report) { r.mu.Lock(); r.n++; r.mu.Unlock() }
func (r *reports) count() int          { r.mu.Lock(); defer r.mu.Unlock(); return r.n }

type fixture struct {
	local   *fakeLocal
	sources []datasource.Source
	svc     *datasource.Service
	tool    *Tool
	reg     *registry.Registry
	reports *reports
}

func src(id string, n int, level policy.Confidence) datasource.Source {
	return datasource.Source{ID: id, Name: "Source " + id, Kind: datasource.LocalFolder, Number: n, MaxMatches: 3, RequiredConfidence: level,
		Security: policy.AllowAny, Path: "/data/" + id, Description: "Documents of " + id, Embedding: "ollama:nomic-embed-text"}
}

func newFixture(t testing.TB, sources ...datasource.Source) *fixture {
	t.Helper()
	f := &fixture{local: &fakeLocal{hits: map[string][]datasource.LocalHit{}, fail: map[string]error{}}, sources: sources, reports: &reports{}}
	f.svc = datasource.NewService(datasource.Options{
		Sources:           func() []datasource.Source { return f.sources },
		Scheme:            policy.SchemeConfig{Scheme: policy.TrustAll},
		EmbeddingProvider: func(datasource.Source) (string, error) { return policy.ProviderSelfHosted, nil },
		Local:             f.local,
		ERI: func(_ context.Context, s datasource.Source) (*eri.Client, error) {
			u, err := s.BaseURL()
			if err != nil {
				return nil, err
			}
			return eri.New(eri.Options{BaseURL: u, Credentials: eri.Credentials{Method: eri.AuthNone}, InfoTimeout: 2 * time.Second, RetrievalTimeout: 2 * time.Second})
		},
		Guard: guard.New(guard.Options{Reporter: f.reports, Logger: slog.New(slog.DiscardHandler)}),
	})
	f.tool = New(Options{Service: f.svc})
	var errs []error
	f.reg, errs = registry.New(registry.Options{}, []tool.Tool{f.tool}, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return f
}

var (
	cloud      = registry.Provider{Confidence: policy.Medium, CanUseTools: true}
	selfHosted = registry.Provider{Confidence: policy.High, CanUseTools: true, Trusted: true}
)

func (f *fixture) offer(t *testing.T, th *chat.Thread, p registry.Provider) (*tool.Offered, []registry.Block) {
	t.Helper()
	offered, blocked := f.reg.Runnable(context.Background(), registry.Request{Component: registry.ComponentChat, MayRunTools: true, Provider: p, Chat: th})
	for i := range offered {
		if offered[i].Definition.ID == ID {
			return &offered[i], blocked
		}
	}
	return nil, blocked
}

func (f *fixture) call(t *testing.T, th *chat.Thread, p registry.Provider, args string) (loop.Outcome, Result) {
	t.Helper()
	o, _ := f.offer(t, th, p)
	if o == nil {
		o = &tool.Offered{Definition: f.tool.Definition(), Function: f.tool.Definition().Function, Tool: f.tool}
	}
	out, err := loop.Execute(context.Background(), llm.Call{ID: "c1", Name: ID, Arguments: json.RawMessage(args), Valid: true}, 1,
		loop.RunContext{Tools: []tool.Offered{*o}, Chat: th, ProviderConfidence: p.Confidence, ProviderTrusted: p.Trusted})
	if err != nil {
		t.Fatal(err)
	}
	var r Result
	if out.Trace.Status == loop.StatusSuccess {
		if err := json.Unmarshal([]byte(out.Content), &r); err != nil {
			t.Fatalf("result is not JSON: %v\n%s", err, out.Content)
		}
	}
	return out, r
}

// "Nobody can select such a tool, so it appears in no selection."
func TestOffersItselfFromTheContext(t *testing.T) {
	f := newFixture(t, src("a", 1, policy.Medium))
	if items := f.reg.Catalog(context.Background(), registry.ComponentChat); len(items) != 0 {
		t.Fatalf("a context tool is in the catalogue: %v", items)
	}
	if sel := f.reg.NormalizeSelection([]string{ID}); len(sel) != 0 {
		t.Fatalf("a selection naming it keeps it: %v", sel)
	}
	if o, _ := f.offer(t, &chat.Thread{}, cloud); o == nil {
		t.Fatal("with a usable source it offers itself without being selected")
	}
	if f.tool.Definition().VisibleIn.Assistants {
		t.Fatal("chat only")
	}
	if f.tool.OutboundData() != policy.ConfiguredService || !f.tool.ReturnsUntrustedContent() {
		t.Fatal("declarations")
	}
	// Nothing to offer: no source, or the chat searches with every message.
	f.sources = nil
	if o, blocked := f.offer(t, &chat.Thread{}, cloud); o != nil || len(blocked) != 1 || blocked[0].Reason != registry.NoBlock {
		t.Fatalf("no source: %v %v", o, blocked)
	}
	f.sources = []datasource.Source{src("a", 1, policy.Medium)}
	th := &chat.Thread{}
	th.SetDataSources(chat.DataSourceOptions{Set: true, Automatic: true, Retrieval: chat.RetrievalEveryMessage})
	if o, _ := f.offer(t, th, cloud); o != nil {
		t.Fatal("a chat searching with every message is not offered the tool")
	}
	th.SetDataSources(chat.DataSourceOptions{Set: true, Disabled: true})
	if o, _ := f.offer(t, th, cloud); o != nil {
		t.Fatal("a chat without data sources is not offered the tool")
	}
}

// The description lists the offered sources by ID, name, kind, page size
// and last page, with their descriptions shortened to 500 characters, in
// the order of number then ID, and stays the same while the chat does.
func TestDescriptionListsTheOfferedSources(t *testing.T) {
	b := src("b", 2, policy.Medium)
	b.Description = strings.Repeat("é", 499) + "😀tail\nsecond line"
	a := src("a", 2, policy.Medium)
	a.Embedding = ""
	z := src("z", 1, policy.High)
	hidden := src("hidden", 0, policy.High)
	f := newFixture(t, b, a, hidden, z)
	o, _ := f.offer(t, &chat.Thread{}, cloud)
	d := o.Function.Description
	if !strings.HasPrefix(d, baseDescription+"\nThe data sources you may search, by the ID to pass in data_source_ids:\n- id=a, name='Source a', type=local folder, results per page=3, last page=33, searched by words only, description='Documents of a'\n- id=b,") {
		t.Fatalf("description:\n%s", d)
	}
	if strings.Contains(d, "hidden") || strings.Contains(d, "id=z") {
		t.Fatal("sources the provider may not use are not listed")
	}
	wantB := "description='" + strings.Repeat("é", 499) + "😀...'"
	if !strings.HasSuffix(d, wantB) {
		t.Fatalf("the description is cut at 500 characters, on one line:\n%q", d[strings.Index(d, "id=b"):])
	}
	var params struct {
		Properties map[string]struct {
			Items struct {
				Enum []string `json:"enum"`
			} `json:"items"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	json.Unmarshal(o.Function.Parameters, &params)
	if got := params.Properties[ArgDataSourceIDs].Items.Enum; strings.Join(got, ",") != "a,b" || strings.Join(params.Required, ",") != ArgQuery {
		t.Fatalf("parameters %s", o.Function.Parameters)
	}
	// Stable: the same chat gets the same bytes.
	for i := 0; i < 3; i++ {
		again, _ := f.offer(t, &chat.Thread{}, cloud)
		if again.Function.Description != d || string(again.Function.Parameters) != string(o.Function.Parameters) {
			t.Fatal("the answer changed while the chat did not")
		}
	}
	// A self-hosted provider sees the HIGH sources too, first by number.
	o, _ = f.offer(t, &chat.Thread{}, selfHosted)
	if !strings.Contains(o.Function.Description, "\n- id=hidden,") || strings.Index(o.Function.Description, "id=hidden") > strings.Index(o.Function.Description, "id=z") {
		t.Fatalf("%s", o.Function.Description)
	}
}

func TestArgumentsAreRefusedWithWhatWouldBeRight(t *testing.T) {
	a, b := src("a", 1, policy.Medium), src("b", 2, policy.Medium)
	f := newFixture(t, a, b)
	th := &chat.Thread{}
	cases := []struct{ args, says string }{
		{`{}`, "Argument 'query' is required"},
		{`{"query":""}`, "non-empty string"},
		{`{"query":"a\nb"}`, "Write it as a single line"},
		{fmt.Sprintf(`{"query":%q}`, strings.Repeat("x", 501)), "at most 500 characters long, but had 501. Use the most distinctive words"},
		{`{"query":"x","data_source_ids":["c"]}`, "one of a, b"},
		{`{"query":"x","data_source_ids":[]}`, "must not be an empty list"},
		{`{"query":"x","page":0}`, "positive integer"},
		{`{"query":"x","page":2}`, "exactly one data source in 'data_source_ids' (2 were given or implied)"},
		{`{"query":"x","page":34,"data_source_ids":["a"]}`, "at most 33 for data source 'a'"},
		{`{"query":"x","limit":5}`, "Argument 'limit' is not known"},
	}
	for _, c := range cases {
		out, _ := f.call(t, th, cloud, c.args)
		if out.Trace.Status != loop.StatusError || !strings.Contains(out.Content, c.says) {
			t.Errorf("%s: %s %q; want it to say %q", c.args, out.Trace.Status, out.Content, c.says)
		}
	}
}

// "The data sources are checked again before each search, since rounds
// may have passed since they were offered."
func TestSourcesAreCheckedAgainBeforeEachSearch(t *testing.T) {
	f := newFixture(t, src("a", 1, policy.Medium))
	th := &chat.Thread{}
	o, _ := f.offer(t, th, cloud)
	if o == nil {
		t.Fatal("offered")
	}
	f.sources[0].RequiredConfidence = policy.High
	out, err := loop.Execute(context.Background(), llm.Call{ID: "c", Name: ID, Arguments: json.RawMessage(`{"query":"x"}`), Valid: true}, 1,
		loop.RunContext{Tools: []tool.Offered{*o}, Chat: th, ProviderConfidence: cloud.Confidence})
	if err != nil || out.Trace.Status != loop.StatusBlocked || !strings.Contains(out.Content, "None of the data sources of this chat can be searched right now") {
		t.Fatalf("%v %s %q", err, out.Trace.Status, out.Content)
	}
}

func TestSearchBringsPassagesSourcesAndRequirements(t *testing.T) {
	a := src("a", 1, policy.Medium)
	b := src("b", 2, policy.Low)
	b.Security = policy.SelfHosted
	c := src("c", 3, policy.High)
	f := newFixture(t, a, b, c)
	f.local.hits["a"] = []datasource.LocalHit{{Path: "/data/a/leave.md", Chunk: 0, Text: "Parental leave lasts 14 months."}, {Path: "/data/a/leave.md", Chunk: 1, Text: "Leave must be requested in writing."}}
	f.local.hits["b"] = []datasource.LocalHit{{Path: "/data/b/plan.pdf", Page: 4, Text: "The leave plan for 2027."}}
	f.local.hits["c"] = []datasource.LocalHit{{Path: "/data/c/other.txt", Text: "Something else entirely."}}
	th := &chat.Thread{}
	before := f.reports.count()
	out, r := f.call(t, th, selfHosted, `{"query":"leave"}`)
	if out.Trace.Status != loop.StatusSuccess {
		t.Fatalf("%s", out.Content)
	}
	if r.Query != "leave" || r.Page != 1 || len(r.DataSources) != 3 {
		t.Fatalf("%+v", r)
	}
	if r.DataSources[0].ResultCount != 2 || r.DataSources[1].ResultCount != 1 || r.DataSources[2].ResultCount != 0 || r.DataSources[2].HasMore {
		t.Fatalf("%+v", r.DataSources)
	}
	// Round robin: a's best, b's best, then a's second.
	i1, i2, i3 := strings.Index(r.TextContent, "14 months"), strings.Index(r.TextContent, "leave plan"), strings.Index(r.TextContent, "in writing")
	if !(i1 >= 0 && i1 < i2 && i2 < i3) || !strings.Contains(r.TextContent, "Content location: page 4") {
		t.Fatalf("text content:\n%s", r.TextContent)
	}
	if f.reports.count()-before > 1 {
		t.Fatal("one filter report per search at most")
	}
	// Sources via the passages.
	var urls []string
	for _, s := range out.Sources {
		urls = append(urls, s.URL)
	}
	if strings.Join(urls, " ") != "file:///data/a/leave.md#chunk=0 file:///data/b/plan.pdf#page=4 file:///data/a/leave.md#chunk=1" {
		t.Fatalf("sources %v", urls)
	}
	// Only a and b reached the model: MEDIUM and SELF_HOSTED, not c's HIGH.
	if th.RequiredConfidence() != policy.Medium || th.DataSecurity() != policy.SelfHosted {
		t.Fatalf("chat demands %s %s", th.RequiredConfidence(), th.DataSecurity())
	}
}

// "A search which found nothing brought nothing into the chat."
func TestASearchThatFoundNothingBroughtNothing(t *testing.T) {
	a := src("a", 1, policy.High)
	a.Security = policy.SelfHosted
	f := newFixture(t, a)
	f.local.hits["a"] = []datasource.LocalHit{{Path: "/data/a/x.md", Text: "unrelated"}}
	th := &chat.Thread{}
	out, r := f.call(t, th, selfHosted, `{"query":"parental leave"}`)
	if out.Trace.Status != loop.StatusSuccess || r.TextContent != "" || len(out.Sources) != 0 || r.DataSources[0].ResultCount != 0 {
		t.Fatalf("%s", out.Content)
	}
	if th.RequiredConfidence() != policy.None || th.DataSecurity() != policy.NotSpecified {
		t.Fatalf("a search that found nothing raised the chat to %s %s", th.RequiredConfidence(), th.DataSecurity())
	}
}

// "A data source which fails is reported as not searched rather than
// left out."
func TestMixedSearchReportsTheFailedSourceAsNotSearched(t *testing.T) {
	srv := eritest.New(t, eritest.Options{Documents: []eritest.Document{{Name: "leave.pdf", Path: "https://hr.example.org/leave.pdf", Text: "Parental leave lasts 14 months."}}})
	down := eritest.New(t, eritest.Options{})
	e1 := datasource.Source{ID: "hr", Name: "HR server", Kind: datasource.ERI, Number: 1, MaxMatches: 5, Security: policy.AllowAny, Hostname: srv.URL(), Auth: datasource.AuthNone}
	e2 := datasource.Source{ID: "wiki", Name: "Wiki export", Kind: datasource.ERI, Number: 2, MaxMatches: 5, Security: policy.AllowAny, Hostname: down.URL(), Auth: datasource.AuthNone}
	loc := src("docs", 3, policy.Medium)
	f := newFixture(t, e1, e2, loc)
	f.local.fail["docs"] = errors.New("index damaged")
	th := &chat.Thread{}
	th.AddMessage(chat.Message{Role: chat.RoleUser, Text: "How long is parental leave?"})
	o, _ := f.offer(t, th, cloud)
	if o == nil || !strings.Contains(o.Function.Description, "id=wiki") {
		t.Fatal("all three are offered while they answer")
	}
	down.Override("POST /retrieval", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	out, r := f.call(t, th, cloud, `{"query":"parental leave"}`)
	if out.Trace.Status != loop.StatusSuccess {
		t.Fatalf("%s", out.Content)
	}
	if r.DataSources[0].ResultCount != 1 || len(r.DataSources[0].Issues) != 0 {
		t.Fatalf("hr: %+v", r.DataSources[0])
	}
	for _, d := range r.DataSources[1:] {
		if d.ResultCount != 0 || len(d.Issues) == 0 || d.Issues[0] != datasource.IssueNotSearched {
			t.Fatalf("%s must be reported as not searched: %+v", d.ID, d)
		}
	}
	if strings.Contains(out.Content, "index damaged") || strings.Contains(out.Content, "502") {
		t.Fatal("why a source failed is for the log, not the model")
	}
	// The ERI server got the chat without the system prompt.
	req := srv.Retrievals()[0]
	if len(req.Thread.ContentBlocks) != 1 || req.Thread.ContentBlocks[0].Role != eri.RoleUser || req.MaxMatches != 6 {
		t.Fatalf("%+v", req)
	}
	if th.RequiredConfidence() != policy.None || th.DataSecurity() != policy.AllowAny {
		t.Fatalf("hr contributed: %s %s", th.RequiredConfidence(), th.DataSecurity())
	}
}

func TestBudgetAndPaging(t *testing.T) {
	a, b := src("a", 1, policy.Medium), src("b", 2, policy.Medium)
	a.MaxMatches, b.MaxMatches = 20, 20
	f := newFixture(t, a, b)
	for i := 0; i < 60; i++ {
		f.local.hits["a"] = append(f.local.hits["a"], datasource.LocalHit{Path: "/data/a/big.md", Chunk: i, Text: "budget " + strings.Repeat("a", 9000)})
		f.local.hits["b"] = append(f.local.hits["b"], datasource.LocalHit{Path: "/data/b/big.md", Chunk: i, Text: "budget " + strings.Repeat("b", 9000)})
	}
	th := &chat.Thread{}
	out, r := f.call(t, th, cloud, `{"query":"budget"}`)
	if utf16len(r.TextContent) > datasource.Budget || r.PassagesLeftOut == 0 || len(r.Issues) == 0 || !r.DataSources[0].HasMore {
		t.Fatalf("%d chars, %d left out, %v", utf16len(r.TextContent), r.PassagesLeftOut, r.Issues)
	}
	if n := strings.Count(r.TextContent, "# Retrieval context "); n != r.DataSources[0].ResultCount+r.DataSources[1].ResultCount || r.DataSources[0].ResultCount-r.DataSources[1].ResultCount > 1 {
		t.Fatalf("%d passages, per source %+v: the sources take turns", n, r.DataSources)
	}
	_ = out
	out, r = f.call(t, th, cloud, `{"query":"budget","data_source_ids":["b"],"page":2}`)
	if out.Trace.Status != loop.StatusSuccess || r.Page != 2 || len(r.DataSources) != 1 || r.DataSources[0].ID != "b" || !strings.Contains(r.TextContent, "# Retrieval context 1\n") || !strings.Contains(r.TextContent, "Content location: chunk 21\n") || strings.Contains(r.TextContent, "chunk 20\n") {
		t.Fatalf("page 2: %s", out.Content[:min(400, len(out.Content))])
	}
}

func utf16len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

func TestThreadDropsATrailingAnswer(t *testing.T) {
	th := &chat.Thread{}
	th.AddMessage(chat.Message{Role: chat.RoleUser, Text: "q1"})
	th.AddMessage(chat.Message{Role: chat.RoleAssistant, Text: "a1"})
	th.AddMessage(chat.Message{Role: chat.RoleUser, Text: "q2"})
	th.AddMessage(chat.Message{Role: chat.RoleAssistant, Text: "partial"})
	got := thread(th)
	if len(got) != 3 || got[1].Role != eri.RoleAI || got[2].Content != "q2" {
		t.Fatalf("%+v", got)
	}
}

// semantic_search sends its query only to configured services (a source's
// embedding provider or ERI server), so a chat restricted after reading
// mails to ONLY_CONFIGURED_SERVICES still offers and runs it.
func TestOfferedAndRunInAChatRestrictedToConfiguredServices(t *testing.T) {
	f := newFixture(t, src("a", 1, policy.Medium))
	f.local.hits["a"] = []datasource.LocalHit{{Path: "/data/a/x.md", Text: "the plan"}}
	th := &chat.Thread{}
	th.RequireOutbound(policy.OutboundRequirement{Set: true, Restriction: policy.OnlyConfiguredServices, MailboxID: "work", MailboxName: "Work"})
	if o, _ := f.offer(t, th, cloud); o == nil {
		t.Fatal("not offered under ONLY_CONFIGURED_SERVICES")
	}
	if out, r := f.call(t, th, cloud, `{"query":"plan"}`); out.Trace.Status != loop.StatusSuccess || r.DataSources[0].ResultCount != 1 {
		t.Fatalf("%s", out.Content)
	}
}
