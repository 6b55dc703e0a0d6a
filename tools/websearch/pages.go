package websearch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/stewardhq/steward/guard"
	"github.com/stewardhq/steward/tool"
	"github.com/stewardhq/steward/web"
)

// parallelPages is how many result pages are read at once.
const parallelPages = 4

// maxSnippetChars bounds a snippet standing in for a page.
const maxSnippetChars = 1000

// smallPageChars is the length below which an extracted page counts as
// partial.
const smallPageChars = 500

// outcome is what became of a result page.
type outcome int

const (
	retrieved outcome = iota
	noReadableContent
	blocked
	pageTimedOut
	retrievalTimedOut
	failed
)

// Page statuses of a result.
const (
	StatusSnippetOnly = "snippet only"
	StatusPartial     = "partial or truncated"
	StatusComplete    = "complete"
)

// Diagnostics of a whole search.
const (
	DiagnosticNoHits  = "The search services found nothing for this query. Try other or fewer words, another language, or a wider time range."
	DiagnosticNothing = "The search services found hits, but none of their pages could be read and the services gave no snippets for them. " +
		"Try another query, or read a page of your own choice if one is known."
	DiagnosticSnippetsOnly = "None of the result pages could be read, so the results carry only the search services' snippets, " +
		"which are short and may be out of date. Say so when answering from them."
)

var notesSource = guard.Source{Kind: guard.WebContent, Label: "web_search notes"}

// Result is what web_search returns to the model.
type Result struct {
	Backends           []string `json:"backends"`
	Page               int      `json:"page"`
	HasMore            bool     `json:"has_more"`
	CandidateCount     int      `json:"candidate_count"`
	ResultCount        int      `json:"result_count"`
	RetrievedPageCount int      `json:"retrieved_page_count"`
	RetrievalTimedOut  bool     `json:"retrieval_timed_out"`
	Results            []Item   `json:"results"`
	Notes              []string `json:"notes,omitempty"`
	Diagnostic         string   `json:"diagnostic,omitempty"`
}

// Item is one result.
type Item struct {
	RequestedURL   string         `json:"requested_url"`
	SearchMetadata SearchMetadata `json:"search_metadata"`
	Page           PageContent    `json:"page"`
}

// SearchMetadata says where a result came from.
type SearchMetadata struct {
	Rank     int      `json:"rank"`
	Backends []string `json:"backends"`
	// FinalURL is set for read pages only: the address after redirects.
	FinalURL      string `json:"final_url,omitempty"`
	PublishedDate string `json:"published_date,omitempty"`
}

// PageContent is the page of a result, or the snippet standing in for it.
type PageContent struct {
	Status       string   `json:"status"`
	Reason       string   `json:"reason,omitempty"`
	Title        string   `json:"title"`
	Description  string   `json:"description,omitempty"`
	Authors      []string `json:"authors,omitempty"`
	Language     string   `json:"language,omitempty"`
	ModifiedDate string   `json:"modified_date,omitempty"`
	Content      string   `json:"content"`
}

// slot is one candidate on its way to a result.
type slot struct {
	cand     candidate
	page     *web.Page
	outcome  outcome
	failure  string // why a page failed, without its address
	content  string
	truncate bool
}

type built struct {
	out     Result
	sources []tool.Source
}

// readAndBuild reads the pages of the candidates, fits them into the
// budget, filters every field in one batch and writes the result.
func (t *Tool) readAndBuild(ctx context.Context, cfg config, ec tool.ExecContext, cands []candidate, notes []string) built {
	slots := t.readPages(ctx, cfg, ec, cands)
	slots = regroup(slots)

	// The budget, in rank order over the read pages: each page may use
	// what remains minus the minimum kept for every later read page.
	read := 0
	for _, s := range slots {
		if s.outcome == retrieved {
			read++
		}
	}
	remaining, seen := cfg.maxTotal, 0
	for i := range slots {
		s := &slots[i]
		switch s.outcome {
		case retrieved:
			seen++
			allowed := max(remaining-cfg.minPerResult*(read-seen), cfg.minPerResult)
			s.content, s.truncate = web.Truncate(s.page.Markdown, allowed)
			remaining -= utf8.RuneCountInString(s.content)
		default:
			s.content = cutSnippet(s.cand.snippet)
		}
	}

	// One filter batch for the whole search.
	var b batch
	items := make([]Item, len(slots))
	for i := range slots {
		s := &slots[i]
		it := &items[i]
		it.RequestedURL = s.cand.url
		it.SearchMetadata = SearchMetadata{Rank: i + 1, Backends: s.cand.backends}
		if s.outcome == retrieved {
			src := guard.Source{Kind: guard.WebContent, Label: s.page.FinalURL}
			it.SearchMetadata.FinalURL = s.page.FinalURL
			it.Page.Status = StatusComplete
			if s.truncate || (s.page.ContentKind == web.HTMLPage && s.page.OriginalChars < smallPageChars) {
				it.Page.Status = StatusPartial
			}
			title := s.page.Title
			if strings.TrimSpace(title) == "" {
				title = s.cand.title
			}
			date := s.cand.date
			if date == "" {
				date = formatTime(s.page.Published)
			}
			b.add(src, "content", s.content, &it.Page.Content)
			b.add(src, "title", title, &it.Page.Title)
			b.add(src, "description", s.page.Description, &it.Page.Description)
			b.add(src, "language", s.page.Language, &it.Page.Language)
			b.add(src, "published", date, &it.SearchMetadata.PublishedDate)
			b.add(src, "modified", formatTime(s.page.Modified), &it.Page.ModifiedDate)
			it.Page.Authors = make([]string, len(s.page.Authors))
			for j, a := range s.page.Authors {
				b.add(src, "author", a, &it.Page.Authors[j])
			}
			continue
		}
		src := guard.Source{Kind: guard.WebContent, Label: s.cand.url}
		it.Page.Status = StatusSnippetOnly
		// The reason may quote the server (a content type, a header line):
		// it is filtered with the rest, after the web package cut it short.
		b.add(src, "reason", t.reason(s, cfg), &it.Page.Reason)
		b.add(src, "snippet", s.content, &it.Page.Content)
		b.add(src, "title", s.cand.title, &it.Page.Title)
		b.add(src, "published", s.cand.date, &it.SearchMetadata.PublishedDate)
	}
	filteredNotes := make([]string, len(notes))
	for i, n := range notes {
		b.add(notesSource, "note", n, &filteredNotes[i])
	}
	end := t.deps.Guard.BeginAction()
	b.run(ctx, t.deps.Guard)
	end()

	var out built
	for i := range items {
		it := &items[i]
		it.Page.Authors = nonEmpty(it.Page.Authors)
		if slots[i].outcome != retrieved {
			continue
		}
		out.out.RetrievedPageCount++
		title := strings.TrimSpace(it.Page.Title)
		if title == "" {
			title = it.SearchMetadata.FinalURL
		}
		out.sources = append(out.sources, tool.Source{Title: title, URL: it.SearchMetadata.FinalURL})
	}
	out.out.Results = items
	out.out.ResultCount = len(items)
	out.out.Notes = filteredNotes
	for _, s := range slots {
		if s.outcome == retrievalTimedOut {
			out.out.RetrievalTimedOut = true
		}
	}
	snippets := 0
	for _, it := range items {
		if it.Page.Status == StatusSnippetOnly && strings.TrimSpace(it.Page.Content) != "" {
			snippets++
		}
	}
	switch {
	case len(cands) == 0:
		out.out.Diagnostic = DiagnosticNoHits
	case out.out.RetrievedPageCount == 0 && snippets == 0:
		out.out.Diagnostic = DiagnosticNothing
	case out.out.RetrievedPageCount == 0:
		out.out.Diagnostic = DiagnosticSnippetsOnly
	}
	if out.out.Results == nil {
		out.out.Results = []Item{}
	}
	return out
}

// readPages reads the candidates' pages, four at a time, through the
// public-only policy, each within the page timeout and all within the
// total one.
func (t *Tool) readPages(ctx context.Context, cfg config, ec tool.ExecContext, cands []candidate) []slot {
	slots := make([]slot, len(cands))
	all, cancel := context.WithTimeout(ctx, cfg.allPagesTO)
	defer cancel()
	sem := make(chan struct{}, parallelPages)
	var wg sync.WaitGroup
	for i := range cands {
		slots[i].cand = cands[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := &slots[i]
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-all.Done():
				s.outcome = retrievalTimedOut
				return
			}
			if all.Err() != nil {
				s.outcome = retrievalTimedOut
				return
			}
			page, err := t.deps.Web.Retrieve(all, s.cand.url, web.Options{
				Policy:             web.PublicOnly,
				ProviderConfidence: ec.ProviderConfidence,
				Timeout:            cfg.pageTO,
			})
			switch {
			case err == nil && strings.TrimSpace(page.Markdown) == "":
				s.outcome = noReadableContent
			case err == nil:
				s.page, s.outcome = page, retrieved
			case ctx.Err() == nil && all.Err() != nil:
				s.outcome = retrievalTimedOut
			case web.IsBlocked(err):
				s.outcome = blocked
			case errors.Is(err, web.ErrTimeout):
				s.outcome = pageTimedOut
			default:
				s.outcome, s.failure = failed, err.Error()
			}
		}()
	}
	wg.Wait()
	return slots
}

// regroup merges results whose pages ended at the same final address,
// keeping the better rank, and drops hits with nothing to show.
func regroup(slots []slot) []slot {
	var out []slot
	byFinal := map[string]int{}
	for _, s := range slots {
		if s.outcome == retrieved {
			if _, key, ok := normalizeURL(s.page.FinalURL); ok {
				if j, dup := byFinal[key]; dup {
					for _, b := range s.cand.backends {
						if !contains(out[j].cand.backends, b) {
							out[j].cand.backends = append(out[j].cand.backends, b)
						}
					}
					continue
				}
				byFinal[key] = len(out)
			}
		} else if strings.TrimSpace(s.cand.title) == "" && strings.TrimSpace(s.cand.snippet) == "" {
			continue
		}
		out = append(out, s)
	}
	return out
}

// reason says why a result carries a snippet instead of its page. It never
// repeats the address.
func (t *Tool) reason(s *slot, cfg config) string {
	var why string
	switch s.outcome {
	case blocked:
		why = "The page did not pass the network safety checks, so it will stay unavailable."
	case pageTimedOut:
		why = fmt.Sprintf("Loading the page took longer than %s.", seconds(cfg.pageTO))
	case retrievalTimedOut:
		why = fmt.Sprintf("The %s for reading all result pages ran out before this page was read.", seconds(cfg.allPagesTO))
	case noReadableContent:
		why = "The page has no readable static content; it may need JavaScript, a sign-in or browser cookies."
	default:
		why = "The page could not be loaded"
		if s.failure != "" {
			why += " (" + s.failure + ")"
		}
		why += "."
	}
	if strings.TrimSpace(s.cand.snippet) == "" {
		return why + " The search service gave no snippet for it."
	}
	return why + " The search service's snippet stands in for it."
}

// cutSnippet keeps at most 1,000 characters: 999 and an ellipsis.
func cutSnippet(s string) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= maxSnippetChars {
		return s
	}
	r := []rune(s)
	return string(r[:maxSnippetChars-1]) + "…"
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func nonEmpty(list []string) []string {
	var out []string
	for _, s := range list {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

// batch collects every text of a search for one filter call and writes
// the filtered texts back where they belong.
type batch struct {
	texts []guard.Text
	dst   []*string
}

func (b *batch) add(src guard.Source, field, text string, dst *string) {
	if text == "" {
		*dst = ""
		return
	}
	b.texts = append(b.texts, guard.Text{Source: src, Field: field, Text: text})
	b.dst = append(b.dst, dst)
}

func (b *batch) run(ctx context.Context, f *guard.Filter) {
	if len(b.texts) == 0 {
		return
	}
	for i, o := range f.FilterBatch(ctx, b.texts) {
		*b.dst[i] = o.Text
	}
}

// seconds writes a whole number of seconds, e.g. "1 second", "30 seconds".
func seconds(d time.Duration) string {
	n := int(d / time.Second)
	if n == 1 {
		return "1 second"
	}
	return fmt.Sprintf("%d seconds", n)
}
