package guard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/stewardhq/steward/credhttp"
)

// Unknown is the category of a classifier finding whose category Steward does
// not know.
const Unknown Category = "unknown"

// ClassifierOptions configure an optional external classifier, for example
// a model the organization hosts. The filter POSTs every batch to URL:
//
//	{"texts": ["first text", "second text"]}
//
// and expects, with status 200, one result per text in the same order:
//
//	{"results": [
//	  {"score": 0.97, "spans": [{"start": 10, "end": 42, "category": "override", "rule_id": "pg2"}]},
//	  {"score": 0.01, "spans": []}
//	]}
//
// score is the probability in [0, 1] that the text carries an injection.
// start and end are byte offsets into the text as sent (UTF-8, end
// exclusive, on character boundaries); category uses the snake_case names of
// Category and rule_id is optional. A text scoring at least Threshold has
// its spans replaced by the marker; a text scoring at least Threshold
// without spans is reported but left as it is, because the filter never
// rejects content. Any failure (unreachable, timeout, other status, an
// answer that breaks these rules) leaves the built-in result and reports a
// warning: the filter fails open.
type ClassifierOptions struct {
	URL string
	// Timeout bounds one request; zero means 10 seconds.
	Timeout time.Duration
	// Threshold is the score from which a text counts as an injection; zero
	// means 0.5.
	Threshold float64
	// Header is added to each request, e.g. an Authorization header.
	Header http.Header
	// Client sends the requests; nil uses a client without cookies or
	// redirects.
	Client *http.Client
}

// maxClassifierAnswer caps the size of a classifier's answer.
const maxClassifierAnswer = 8 << 20

type classifier struct {
	url       string
	timeout   time.Duration
	threshold float64
	header    http.Header
	client    *http.Client
}

func newClassifier(o ClassifierOptions) *classifier {
	c := &classifier{url: o.URL, timeout: o.Timeout, threshold: o.Threshold, header: o.Header, client: o.Client}
	if c.timeout <= 0 {
		c.timeout = 10 * time.Second
	}
	if c.threshold <= 0 {
		c.threshold = 0.5
	}
	// The key travels in a header; redirects stay within the configured
	// origin.
	c.client = credhttp.Client(c.client, "DataPromptInjection.ClassifierUrl")
	return c
}

type classifierRequest struct {
	Texts []string `json:"texts"`
}

type classifierSpan struct {
	Start    *int   `json:"start"`
	End      *int   `json:"end"`
	Category string `json:"category"`
	RuleID   string `json:"rule_id"`
}

type classifierResult struct {
	Score    *float64         `json:"score"`
	Category string           `json:"category"`
	Spans    []classifierSpan `json:"spans"`
}

type classifierResponse struct {
	Results []classifierResult `json:"results"`
}

// errClassifierAnswer marks an answer that breaks the protocol.
var errClassifierAnswer = errors.New("classifier answer breaks the protocol")

func (c *classifier) classify(ctx context.Context, texts []string) ([]classifierResult, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	body, err := json.Marshal(classifierRequest{Texts: texts})
	if err != nil {
		return nil, fmt.Errorf("encode classifier request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build classifier request: %w", err)
	}
	for k, vs := range c.header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reach classifier: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("classifier answered status %d, want 200", resp.StatusCode)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxClassifierAnswer+1))
	if err != nil {
		return nil, fmt.Errorf("read classifier answer: %w", err)
	}
	if len(raw) > maxClassifierAnswer {
		return nil, fmt.Errorf("%w: answer larger than %d bytes", errClassifierAnswer, maxClassifierAnswer)
	}
	var ans classifierResponse
	if err := json.Unmarshal(raw, &ans); err != nil {
		return nil, fmt.Errorf("%w: %w", errClassifierAnswer, err)
	}
	if len(ans.Results) != len(texts) {
		return nil, fmt.Errorf("%w: %d results for %d texts", errClassifierAnswer, len(ans.Results), len(texts))
	}
	for i, r := range ans.Results {
		if r.Score == nil || math.IsNaN(*r.Score) || *r.Score < 0 || *r.Score > 1 {
			return nil, fmt.Errorf("%w: result %d needs a score between 0 and 1", errClassifierAnswer, i)
		}
		for k, s := range r.Spans {
			t := texts[i]
			if s.Start == nil || s.End == nil || *s.Start < 0 || *s.End > len(t) || *s.Start >= *s.End ||
				!runeBoundary(t, *s.Start) || !runeBoundary(t, *s.End) {
				return nil, fmt.Errorf("%w: span %d of result %d is not a byte range on character boundaries of the text", errClassifierAnswer, k, i)
			}
		}
	}
	return ans.Results, nil
}

func runeBoundary(s string, i int) bool {
	return i == len(s) || utf8.RuneStart(s[i])
}

func parseCategory(s string) Category {
	for _, c := range Categories {
		if string(c) == s {
			return c
		}
	}
	return Unknown
}

// addClassifier merges a classifier result into the scan.
func (sc *scan) addClassifier(orig string, r classifierResult, threshold float64) {
	if *r.Score < threshold {
		return
	}
	if len(r.Spans) == 0 {
		sc.found = append(sc.found, found{rule: "classifier.text", category: parseCategory(r.Category),
			match: span{0, len(orig)}, snippet: fmt.Sprintf("classifier score %.2f for the whole text", *r.Score)})
		return
	}
	for _, s := range r.Spans {
		rule := "classifier"
		if s.RuleID != "" {
			rule += "." + s.RuleID
		}
		cat := parseCategory(s.Category)
		if s.Category == "" {
			cat = parseCategory(r.Category)
		}
		m := span{*s.Start, *s.End}
		sc.redact = append(sc.redact, m)
		sc.found = append(sc.found, found{rule: rule, category: cat, match: m})
	}
}
