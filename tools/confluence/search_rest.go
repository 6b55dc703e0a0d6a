package confluence

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/stewardhq/steward/guard"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
	"github.com/stewardhq/steward/web"
)

// RESTResult is what REST returns: the hits of one page.
type RESTResult struct {
	Hits []Hit `json:"hits"`
	tool.PageInfo
	// Note says what the model should know: nothing found, hits or page
	// texts left out for the budget.
	Note string `json:"note,omitempty"`
	// sourceTitles are the hits' titles without emphasis, filtered, for
	// the sources list.
	sourceTitles []string
}

// Hit is one page or blog post the search found. Every text field was
// written in the wiki and filtered.
type Hit struct {
	Title string `json:"title"`
	// Space is the space's name and key, e.g. "Operations (OPS)".
	Space string `json:"space,omitempty"`
	// Type is page or blogpost.
	Type string `json:"type"`
	// Excerpt has the matched words in **bold**.
	Excerpt      string `json:"excerpt,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
	// URL is the page's web address; read_web_page may open it.
	URL string `json:"url,omitempty"`
	// Content is the page's text as Markdown, for the best hits.
	Content          string `json:"content,omitempty"`
	ContentTruncated bool   `json:"content_truncated,omitempty"`
	// ContentNote says why a best hit has no content.
	ContentNote string `json:"content_note,omitempty"`
}

// minBodyChars is the smallest share of the budget worth a page text.
const minBodyChars = 300

// searchREST runs the search against the REST API.
func (t *Tool) searchREST(ctx context.Context, cfg config, s search) (tool.Result, error) {
	c := newRESTClient(t.http, cfg, t.sleep, t.log)
	need := tool.FetchLimit(s.page, pageSize)
	hits, partial, err := t.collect(ctx, c, cfg, s, need)
	if err != nil {
		return tool.Result{}, err
	}
	pageHits, info := tool.Slice(hits, s.page, pageSize, s.lastPage)
	if partial {
		// The wiki stopped short of what this page needs: more may exist,
		// and a page that is not full may be missing hits.
		if len(pageHits) == 0 {
			return tool.Result{}, fmt.Errorf("the wiki did not give the hits up to page %d (it stopped answering, or gives few hits per request); ask for an earlier page", s.page)
		}
		info.HasMore = s.page < s.lastPage
	}
	if len(pageHits) == 0 {
		note := "The wiki has no page or blog post matching this search" + s.spaceNote() + ". Try other or fewer words"
		if s.space != "" {
			note += ", or search without " + ArgSpaceKey
		}
		note += "."
		if s.page > 1 {
			note = fmt.Sprintf("Page %d is beyond the last hit of this search; ask for an earlier page.", s.page)
		}
		// Nothing reached the model, so the chat demands nothing more.
		return tool.Result{JSON: RESTResult{Hits: []Hit{}, PageInfo: tool.PageInfo{Page: s.page}, Note: note}}, nil
	}
	res := t.buildHits(ctx, c, cfg, pageHits)
	res.PageInfo = info
	if partial && len(pageHits) < pageSize {
		res.Note = strings.TrimSpace(res.Note + " The wiki stopped giving hits before this page was full, so it may be missing some; searching again may complete it.")
	}
	out := tool.Result{JSON: res, RequiredConfidence: policy.High}
	for i, h := range res.Hits {
		if h.URL != "" {
			out.Sources = append(out.Sources, tool.Source{Title: res.sourceTitles[i], URL: h.URL})
		}
	}
	return out, nil
}

// collect asks for the first need hits: one request with a limit as large
// as allowed, then the server's next links while it gave fewer. A server
// that rejects siteSearch (HTTP 400) is asked once more with text. partial
// is true when the collection stopped before need hits although the wiki
// had more (a later request failed, or the request bound was reached); a
// failure of the first request is an error.
func (t *Tool) collect(ctx context.Context, c *restClient, cfg config, s search, need int) (out []hit, partial bool, err error) {
	limit := min(need, requestLimit)
	u := c.searchURL(buildCQL(fieldSiteSearch, s.phrase, s.space), limit)
	body, err := c.get(ctx, u)
	var ae *apiError
	if errors.As(err, &ae) && ae.status == http.StatusBadRequest {
		t.log.Info("search_confluence: the wiki refused siteSearch; asking with text")
		u = c.searchURL(buildCQL(fieldText, s.phrase, s.space), limit)
		body, err = c.get(ctx, u)
	}
	seen := map[string]bool{}
	for req := 1; ; req++ {
		if err != nil {
			if req > 1 && ctx.Err() == nil {
				t.log.Warn("search_confluence: a further page of hits could not be fetched", "error", err.Error())
				return out, true, nil
			}
			return nil, false, t.restError(err, cfg, s)
		}
		hits, next, perr := parseSearch(body, cfg.base)
		if perr != nil {
			if req > 1 {
				t.log.Warn("search_confluence: a further page of hits could not be read", "error", perr.Error())
				return out, true, nil
			}
			return nil, false, fmt.Errorf("the wiki's search answer could not be read: %w", perr)
		}
		for _, h := range hits {
			k := h.id
			if k == "" {
				k = h.kind + "\x00" + h.webURL + "\x00" + h.title
			}
			if !seen[k] {
				seen[k] = true
				out = append(out, h)
			}
		}
		if len(out) >= need {
			return out, false, nil
		}
		nu, ok := c.nextURL(next)
		switch {
		case !ok && strings.TrimSpace(next) != "":
			t.log.Warn("search_confluence: the wiki's next link leads outside its search API; not followed")
			return out, true, nil
		case !ok:
			return out, false, nil
		case req >= maxSearchRequests:
			return out, true, nil
		}
		body, err = c.get(ctx, nu)
	}
}

// restError turns a failed REST request into what the model reads.
func (t *Tool) restError(err error, cfg config, s search) error {
	var ae *apiError
	switch {
	case errors.Is(err, errLoginRedirect):
		return fmt.Errorf("the wiki sent the search to its login page instead of answering: the credential in %s was not accepted, so nothing was searched. Tell the user to check it", cfg.credentialSetting())
	case errors.Is(err, errOutsideBase):
		return tool.Blocked("The wiki redirected the search to an address outside its API (" + cfg.apiSetting + "); the redirect was refused before it was followed. Nothing was found; tell the user the wiki's address may have changed.")
	case errors.As(err, &ae) && ae.status == http.StatusBadRequest:
		return &tool.ArgumentError{Argument: ArgQuery, Message: fmt.Sprintf(
			"The wiki could not search for this phrase (HTTP 400: it could not read the query). Argument '%s' must be plain words: leave out quotes, wildcards (* and ?) and ~, then search again.", ArgQuery)}
	case errors.As(err, &ae) && ae.html && ae.status >= 200 && ae.status < 300:
		return fmt.Errorf("the wiki answered with a web page instead of the REST API's JSON: the API may sit behind a sign-in page or a proxy; check %s and %s", cfg.apiSetting, cfg.credentialSetting())
	case errors.As(err, &ae) && ae.status >= 200 && ae.status < 300:
		return fmt.Errorf("the wiki's answer is not JSON; check %s", cfg.apiSetting)
	case errors.As(err, &ae):
		return statusMessage(ae.status, ae.retryAfter, ae.retryKnown, s, cfg, ae.loginReason)
	case errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return fmt.Errorf("the wiki could not be asked: %w", err)
}

// buildHits fits the hits of the page into the character budget, fetches
// the page texts of the best ones with what is left, and filters every
// text in one batch, after cutting.
func (t *Tool) buildHits(ctx context.Context, c *restClient, cfg config, hs []hit) RESTResult {
	var res RESTResult
	budget := cfg.maxChars
	var kept []hit
	for _, h := range hs {
		n := utf8.RuneCountInString(h.title) + utf8.RuneCountInString(h.space) + utf8.RuneCountInString(h.excerpt)
		if n > budget && len(kept) > 0 {
			break
		}
		if n > budget {
			h.excerpt = cut(h.excerpt, max(budget-utf8.RuneCountInString(h.title)-utf8.RuneCountInString(h.space), 0))
			n = budget
		}
		budget -= n
		kept = append(kept, h)
	}
	var notes []string
	if left := len(hs) - len(kept); left > 0 {
		notes = append(notes, fmt.Sprintf("%d more hits of this page were left out to stay within %d characters; search with more specific words to see them.", left, cfg.maxChars))
	}
	bodies := make([]string, len(kept))
	truncated := make([]bool, len(kept))
	bodyNotes := make([]string, len(kept))
	want := min(cfg.bodies, len(kept))
	if want > 0 {
		if budget < minBodyChars {
			notes = append(notes, "No page texts are included: the hits used up the character budget. Open a hit with read_web_page.")
		} else {
			md, fetchNotes := t.fetchBodies(ctx, c, kept[:want])
			for i := range want {
				if fetchNotes[i] != "" {
					bodyNotes[i] = fetchNotes[i]
					continue
				}
				share := budget / (want - i)
				if share < minBodyChars {
					bodyNotes[i] = "The page text did not fit the character budget; open the page with read_web_page."
					continue
				}
				bodies[i], truncated[i] = web.Truncate(md[i], share)
				budget -= utf8.RuneCountInString(bodies[i])
			}
		}
	}

	// One batch for every text the wiki wrote, grouped by page.
	var texts []guard.Text
	for i, h := range kept {
		src := guard.Source{Kind: guard.WebContent, Label: firstNonBlank(h.webURL, "Confluence search result")}
		texts = append(texts,
			guard.Text{Source: src, Field: "title", Text: h.title},
			guard.Text{Source: src, Field: "space", Text: h.space},
			guard.Text{Source: src, Field: "excerpt", Text: h.excerpt},
			guard.Text{Source: src, Field: "content", Text: bodies[i]},
			guard.Text{Source: src, Field: "title", Text: h.plainTitle})
	}
	end := t.deps.Guard.BeginAction()
	filtered := t.deps.Guard.FilterBatch(ctx, texts)
	end()
	for i, h := range kept {
		f := filtered[i*5 : i*5+5]
		res.sourceTitles = append(res.sourceTitles, f[4].Text)
		res.Hits = append(res.Hits, Hit{Title: f[0].Text, Space: f[1].Text, Type: h.kind, Excerpt: f[2].Text, LastModified: h.modified,
			URL: h.webURL, Content: f[3].Text, ContentTruncated: truncated[i] && f[3].Text != "", ContentNote: bodyNotes[i]})
	}
	res.Note = strings.Join(notes, " ")
	return res
}

// fetchBodies fetches the rendered text of each hit, at most three at a
// time, and converts it to Markdown the way the page retrieval service
// converts a page. A hit whose text cannot be had gets a note the model can
// read; it never fails the search.
func (t *Tool) fetchBodies(ctx context.Context, c *restClient, hs []hit) (md, notes []string) {
	md = make([]string, len(hs))
	notes = make([]string, len(hs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 3)
	for i, h := range hs {
		if h.id == "" {
			notes[i] = "The wiki gave no page ID, so the text could not be fetched; open the page with read_web_page."
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			md[i], notes[i] = t.fetchBody(ctx, c, h)
		}()
	}
	wg.Wait()
	return md, notes
}

func (t *Tool) fetchBody(ctx context.Context, c *restClient, h hit) (markdown, note string) {
	body, err := c.get(ctx, c.contentURL(h.id))
	if err != nil {
		var ae *apiError
		switch {
		case errors.As(err, &ae):
			t.log.Info("search_confluence: a page text could not be fetched", "status", ae.status)
			return "", fmt.Sprintf("The page text could not be fetched (HTTP %d); open the page with read_web_page.", ae.status)
		case ctx.Err() != nil:
			return "", "The page text was not fetched in time; open the page with read_web_page."
		}
		t.log.Info("search_confluence: a page text could not be fetched", "error", err.Error())
		return "", "The page text could not be fetched; open the page with read_web_page."
	}
	view, err := parseContent(body)
	if err != nil {
		return "", "The wiki's answer for the page text could not be read; open the page with read_web_page."
	}
	var pageURL *url.URL
	if h.webURL != "" {
		pageURL, _ = url.Parse(h.webURL)
	}
	p, err := web.ExtractHTML("<!DOCTYPE html><html><head><title></title></head><body><article>"+view+"</article></body></html>", pageURL)
	if err != nil {
		return "", "The page text could not be converted; open the page with read_web_page."
	}
	if strings.TrimSpace(p.Markdown) == "" {
		return "", "The page has no readable text."
	}
	return p.Markdown, ""
}
