package datasource

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/stewardhq/steward/datasource/eri"
	"github.com/stewardhq/steward/guard"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
)

// Paging and budget limits shared by semantic_search and the classic
// process.
const (
	// Window is how deep a source may be paged: the last page is the
	// deepest whose fetch (page × size + 1) stays within it. Page 1 is
	// always allowed, however large the page size.
	Window = 100
	// Budget is the characters (UTF-16 code units) of passages one search
	// brings into the chat; a passage that would pass it is left out and
	// counted, shorter ones may follow.
	Budget = 100_000
	// MaxThreadBlocks is how many of the chat's last messages go to an ERI
	// server with a retrieval.
	MaxThreadBlocks = 20
)

// LastPage is the deepest page a source may be asked for.
func LastPage(src Source) int { return tool.LastPage(Window, src.MaxMatches) }

// Issues the model reads about a source's search.
const (
	IssueNotSearched = "This data source could not be searched right now, so its results are missing rather than empty."
	IssueWordsOnly   = "This data source has no embedding provider and was searched by words only: use the words its documents would contain."
	// IssueEmbeddingRefused is told when the source's embedding provider
	// may not receive the query.
	IssueEmbeddingRefused = "This data source was searched by words only: the organization does not trust its embedding provider with what is asked of it. Use the words its documents would contain."
	IssueSkippedOthers    = "Some passages of this data source are not text and were left out."
)

// SearchRequest is one search over some sources.
type SearchRequest struct {
	// Query is the model's query (semantic_search) or the user's message
	// (the classic process).
	Query string
	// Page is the page from 1; a page after the first is for one source.
	Page int
	// Thread is the chat sent to ERI servers with the query, oldest first,
	// without the system prompt and without a trailing answer.
	Thread []eri.ContentBlock
	// Provider is checked again against each ERI server's current security
	// requirements.
	Provider Provider
}

// SourceResult is what one source's search came to.
type SourceResult struct {
	Usable Usable
	// Passages are the page's passages, best first.
	Passages []Passage
	HasMore  bool
	// NotSearched is true when the source failed: its results are missing,
	// not empty. Err says why, for the log and the user (never the model).
	NotSearched bool
	Err         error
	// Issues are what the model should know about this search.
	Issues []string
	// WordsOnly is true when only words were searched.
	WordsOnly bool
}

// Search searches the sources in parallel, each for the request's page.
// A source that fails is reported as not searched; the results keep the
// sources' order. When ctx ends, the unfinished sources are not searched.
func (s *Service) Search(ctx context.Context, sources []Usable, req SearchRequest) []SourceResult {
	out := make([]SourceResult, len(sources))
	var wg sync.WaitGroup
	for i, u := range sources {
		wg.Add(1)
		go func(i int, u Usable) {
			defer wg.Done()
			r := s.searchOne(ctx, u, req)
			if r.Err != nil {
				r.NotSearched = true
				r.Passages, r.HasMore = nil, false
				r.Issues = append([]string{IssueNotSearched}, r.Issues...)
				if ctx.Err() == nil {
					s.o.Logger.Warn("a data source could not be searched", "data_source", u.Source.ID, "kind", string(u.Source.Kind), "error", r.Err)
				}
			}
			out[i] = r
		}(i, u)
	}
	wg.Wait()
	return out
}

func (s *Service) searchOne(ctx context.Context, u Usable, req SearchRequest) SourceResult {
	r := SourceResult{Usable: u}
	page := max(1, req.Page)
	size := u.Source.MaxMatches
	if page > LastPage(u.Source) {
		r.Err = fmt.Errorf("page %d is beyond the last page %d", page, LastPage(u.Source))
		return r
	}
	if err := ctx.Err(); err != nil {
		r.Err = err
		return r
	}
	switch {
	case u.Source.Kind.Local():
		if s.o.Local == nil {
			r.Err = errors.New("the local index is not open")
			return r
		}
		res, err := s.o.Local.Search(ctx, u.Source, req.Query, (page-1)*size, size)
		if err != nil {
			r.Err = err
			return r
		}
		for _, h := range res.Hits {
			r.Passages = append(r.Passages, localPassage(u.Source, h))
		}
		r.HasMore = res.HasMore && page < LastPage(u.Source)
		r.WordsOnly = res.WordsOnly
		switch {
		case u.EmbeddingRefused != "":
			r.Issues = append(r.Issues, IssueEmbeddingRefused)
		case u.WordsOnly:
			r.Issues = append(r.Issues, IssueWordsOnly)
		}
		r.Issues = append(r.Issues, res.Issues...)
	case u.Source.Kind == ERI:
		ps, more, skipped, err := s.searchERI(ctx, u, req, page, size)
		if err != nil {
			r.Err = err
			return r
		}
		r.Passages, r.HasMore = ps, more
		if skipped > 0 {
			r.Issues = append(r.Issues, IssueSkippedOthers)
		}
	default:
		r.Err = fmt.Errorf("data source kind %q cannot be searched", u.Source.Kind)
	}
	return r
}

// searchERI signs in, checks the server's security requirements again
// (rounds may have passed since the source was offered), and asks for the
// page's window: page × size + 1 contexts, of which the page is cut.
func (s *Service) searchERI(ctx context.Context, u Usable, req SearchRequest, page, size int) ([]Passage, bool, int, error) {
	var methods []eri.AuthScheme
	s.mu.Lock()
	if c, ok := s.cache[u.Source.ID]; ok && c.fingerprint == fingerprint(u.Source) {
		methods = c.methods
	}
	s.mu.Unlock()
	sess, err := s.signIn(ctx, u.Source, methods)
	if err != nil {
		return nil, false, 0, err
	}
	sec, err := sess.SecurityRequirements(ctx)
	if err != nil {
		return nil, false, 0, err
	}
	if ok, security, reason := serverAllows(sec.AllowedProviderType, req.Provider); !ok {
		return nil, false, 0, errors.New(reason)
	} else if security == policy.SelfHosted && u.Security != policy.SelfHosted {
		// The server tightened since the source was offered: its passages
		// would raise less than they must.
		return nil, false, 0, errors.New("its server now allows only self-hosted providers")
	}
	thread := req.Thread
	if len(thread) > MaxThreadBlocks {
		thread = thread[len(thread)-MaxThreadBlocks:]
	}
	ctxs, err := sess.Retrieve(ctx, eri.RetrievalRequest{
		LatestUserPrompt:     req.Query,
		LatestUserPromptType: eri.ContentText,
		Thread:               eri.ChatThread{ContentBlocks: thread},
		RetrievalProcessID:   u.Source.RetrievalID,
		MaxMatches:           tool.FetchLimit(page, size),
	})
	if err != nil {
		return nil, false, 0, err
	}
	var all []Passage
	skipped := 0
	for _, c := range ctxs {
		if c.Type != eri.ContentText || c.MatchedContent == "" {
			skipped++
			continue
		}
		all = append(all, Passage{SourceID: u.Source.ID, SourceName: u.Source.Name, Name: c.Name, Category: "TEXT",
			Type: typeOfCategory(c.Category), Path: c.Path, Links: c.Links, Text: c.MatchedContent, Surrounding: c.SurroundingContent})
	}
	// A server that returns more than it was asked for gets cut to the
	// window, so it cannot take the whole budget.
	if limit := tool.FetchLimit(page, size); len(all) > limit {
		all = all[:limit]
	}
	pagePassages, info := tool.Slice(all, page, size, LastPage(u.Source))
	return pagePassages, info.HasMore, skipped, nil
}

// Assembly is the passages of one search that reach the model.
type Assembly struct {
	// Markdown holds the passages that fit, numbered in the order they
	// reach the model: first the best passage of each source, then the
	// second best of each, and so on.
	Markdown string
	// Sources are the passages' sources, built from the filtered fields.
	Sources []tool.Source
	// Count is the number of passages in Markdown.
	Count int
	// PerSource holds, by source ID, how many passages reached the model
	// and how many were left out for the budget.
	PerSource map[string]Contribution
	// LeftOut is how many passages did not fit into the budget.
	LeftOut int
	// Contributed are the sources whose passages reached the model, in the
	// results' order; only they raise the chat's requirements.
	Contributed []Usable
}

// Contribution is what one source brought into the result.
type Contribution struct {
	Passages int
	LeftOut  int
}

// Requirements returns what the passages demand of the chat from now on:
// the highest confidence of the contributing sources, and SELF_HOSTED when
// one of them demands it (else ALLOW_ANY). A search that brought nothing
// demands nothing.
func (a Assembly) Requirements() (policy.Confidence, policy.DataSecurity) {
	conf, sec := policy.None, policy.NotSpecified
	for _, u := range a.Contributed {
		conf = policy.Max(conf, u.Source.RequiredConfidence)
		d := u.Security
		if d != policy.SelfHosted {
			d = policy.AllowAny
		}
		sec = policy.TightenDataSecurity(sec, d)
	}
	return conf, sec
}

// Apply writes the requirements into a tool result.
func (a Assembly) Apply(res *tool.Result) {
	res.RequiredConfidence, res.RequiredDataSecurity = a.Requirements()
}

// Assemble filters the passages of a search and brings them into one
// text within budget characters. Everything of a passage that reaches the
// model is filtered, in one batch within one filter action, so that the
// user hears about what was filtered once per search. The sources take
// turns, best passages first; a passage that does not fit is left out and
// counted, and shorter ones after it may still fit.
func (s *Service) Assemble(ctx context.Context, results []SourceResult, budget int) Assembly {
	a := Assembly{PerSource: map[string]Contribution{}}
	type cand struct {
		src int
		p   Passage
	}
	// Round robin by rank. Only passages that could fit are filtered: a
	// generous bound on the unfiltered length keeps a huge page from being
	// filtered in full when it cannot reach the model anyway.
	var cands []cand
	used := 0
	for rank := 0; ; rank++ {
		more := false
		for i, r := range results {
			if rank >= len(r.Passages) {
				continue
			}
			more = true
			p := r.Passages[rank]
			n := tool.UTF16Len(p.Markdown(1))
			if used+n > 2*budget+4096 {
				c := a.PerSource[r.Usable.Source.ID]
				c.LeftOut++
				a.PerSource[r.Usable.Source.ID] = c
				a.LeftOut++
				continue
			}
			used += n
			cands = append(cands, cand{src: i, p: p})
		}
		if !more {
			break
		}
	}
	end := func() {}
	if s.o.Guard != nil {
		end = s.o.Guard.BeginAction()
	}
	defer end()
	ps := make([]*Passage, len(cands))
	for i := range cands {
		ps[i] = &cands[i].p
	}
	s.filterPassages(ctx, ps)

	var md []byte
	total := 0
	contributed := make([]bool, len(results))
	for _, c := range cands {
		block := c.p.Markdown(a.Count + 1)
		sep := 0
		if a.Count > 0 {
			sep = 1
		}
		n := tool.UTF16Len(block) + sep
		id := results[c.src].Usable.Source.ID
		pc := a.PerSource[id]
		if total+n > budget {
			pc.LeftOut++
			a.PerSource[id] = pc
			a.LeftOut++
			continue
		}
		if sep > 0 {
			md = append(md, '\n')
		}
		md = append(md, block...)
		total += n
		a.Count++
		pc.Passages++
		a.PerSource[id] = pc
		a.Sources = append(a.Sources, c.p.Sources()...)
		contributed[c.src] = true
	}
	a.Markdown = string(md)
	for i, r := range results {
		if contributed[i] {
			a.Contributed = append(a.Contributed, r.Usable)
		}
	}
	return a
}

// filterPassages filters every field of the passages that reaches the
// model or the sources list, in one batch; each passage is its own source
// in the report, labelled "<data source>: <path or name>".
func (s *Service) filterPassages(ctx context.Context, ps []*Passage) {
	if s.o.Guard == nil {
		return
	}
	var texts []guard.Text
	var dests []*string
	add := func(src guard.Source, field string, dst *string) {
		if *dst == "" {
			return
		}
		texts = append(texts, guard.Text{Source: src, Field: field, Text: *dst})
		dests = append(dests, dst)
	}
	for _, p := range ps {
		label := p.SourceName + ": " + firstNonBlank(p.Path, p.Name)
		src := guard.Source{Kind: guard.RetrievalContext, Label: label}
		add(src, "name", &p.Name)
		add(src, "path", &p.Path)
		add(src, "location", &p.Location)
		for j := range p.Links {
			add(src, "link", &p.Links[j])
		}
		add(src, "matched text", &p.Text)
		for j := range p.Surrounding {
			add(src, "surrounding text", &p.Surrounding[j])
		}
		add(src, "reference title", &p.RefTitle)
		add(src, "reference link", &p.RefLink)
	}
	if len(texts) == 0 {
		return
	}
	outs := s.o.Guard.FilterBatch(ctx, texts)
	for i, o := range outs {
		if i < len(dests) {
			*dests[i] = o.Text
		}
	}
}
