package extracteval

import (
	"regexp"
	"strings"
	"unicode"
)

// Counts are one page's shingle counts, normalised so that they sum to 1
// (all zero when both texts are empty of words).
type Counts struct{ TP, FP, FN float64 }

// shingleN is the benchmark's n-gram size.
const shingleN = 4

// Tokens splits text into the benchmark's tokens: maximal runs of letters,
// numbers and underscores (Python's Unicode \w).
func Tokens(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsNumber(r) || r == '_')
	})
}

func shingles(text string) map[string]int {
	toks := Tokens(text)
	out := map[string]int{}
	// As evaluate.py: a text shorter than n tokens is one shorter
	// shingle; no tokens, no shingle.
	n := len(toks) - shingleN + 1
	if n < 1 {
		n = 1
	}
	for i := 0; i < n && i < len(toks); i++ {
		end := i + shingleN
		if end > len(toks) {
			end = len(toks)
		}
		out[strings.Join(toks[i:end], "\x00")]++
	}
	return out
}

// Score compares the predicted text of one page with its ground truth.
func Score(truth, pred string) Counts {
	t, p := shingles(truth), shingles(pred)
	var c Counts
	for k, tc := range t {
		pc := p[k]
		c.TP += float64(min(tc, pc))
		c.FN += float64(max(0, tc-pc))
	}
	for k, pc := range p {
		c.FP += float64(max(0, pc-t[k]))
	}
	if s := c.TP + c.FP + c.FN; s > 0 {
		c.TP, c.FP, c.FN = c.TP/s, c.FP/s, c.FN/s
	}
	return c
}

// Precision is the page's precision with evaluate.py's conventions for
// empty texts.
func (c Counts) Precision() float64 {
	switch {
	case c.FP == 0 && c.FN == 0:
		return 1
	case c.TP == 0 && c.FP == 0:
		return 0
	}
	return c.TP / (c.TP + c.FP)
}

// Recall is the page's recall with evaluate.py's conventions.
func (c Counts) Recall() float64 {
	switch {
	case c.FP == 0 && c.FN == 0:
		return 1
	case c.TP == 0 && c.FN == 0:
		return 0
	}
	return c.TP / (c.TP + c.FN)
}

// Result is the benchmark's figures over a set of pages.
type Result struct {
	Pages                 int
	Precision, Recall, F1 float64
}

// Aggregate averages precision over the pages with a prediction and recall
// over the pages with ground truth, as evaluate.py does.
func Aggregate(pages []Counts) Result {
	var ps, rs float64
	var np, nr int
	for _, c := range pages {
		if c.TP+c.FP > 0 {
			ps += c.Precision()
			np++
		}
		if c.TP+c.FN > 0 {
			rs += c.Recall()
			nr++
		}
	}
	r := Result{Pages: len(pages)}
	if np > 0 {
		r.Precision = ps / float64(np)
	}
	if nr > 0 {
		r.Recall = rs / float64(nr)
	}
	if r.Precision+r.Recall > 0 {
		r.F1 = 2 * r.Precision * r.Recall / (r.Precision + r.Recall)
	}
	return r
}

var (
	mdImage    = regexp.MustCompile(`!\[([^\]]*)\]\([^)]*\)`)
	mdLink     = regexp.MustCompile(`\[([^\]]*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)`)
	mdRefDef   = regexp.MustCompile(`(?m)^\s*\[[^\]]+\]:\s+\S+.*$`)
	bareURL    = regexp.MustCompile(`<?\b(?:https?|ftp|mailto):[^\s<>)\]]+>?`)
	mdEscape   = regexp.MustCompile(`\\([!-/:-@\[-` + "`" + `{-~])`)
	mdEmphasis = regexp.MustCompile(`(^|[^\pL\pN])_{1,3}|_{1,3}([^\pL\pN]|$)`)
)

// MarkdownWords reduces Markdown to its readable text: an image is
// dropped (the benchmark's article bodies hold no image descriptions, and
// the other extractors return none), a link becomes its text, link targets and bare addresses
// are dropped, backslash escapes are undone and underscore emphasis is
// removed (an underscore is a word character to the tokenizer).
func MarkdownWords(md string) string {
	s := mdImage.ReplaceAllString(md, " ")
	s = mdLink.ReplaceAllString(s, "$1")
	s = mdRefDef.ReplaceAllString(s, "")
	s = bareURL.ReplaceAllString(s, " ")
	s = mdEscape.ReplaceAllString(s, "$1")
	s = mdEmphasis.ReplaceAllString(s, "$1 $2")
	return s
}

var (
	mdStrong  = regexp.MustCompile(`\*{1,3}|(^|[^\pL\pN])_{1,3}|_{1,3}([^\pL\pN]|$)`)
	mdLineTag = regexp.MustCompile(`(?m)^\s*(?:#{1,6}\s+|[-*+]\s+|\d+\.\s+|>\s?)+`)
	mdFence   = regexp.MustCompile("(?m)^\\s*```.*$")
	mdCode    = regexp.MustCompile("`+")
	mdTable   = regexp.MustCompile(`(?m)^\s*\|?(?:\s*:?-{3,}:?\s*\|)+\s*$|\s*\|\s*`)
)

// MarkdownText reduces Markdown to plain text for substring matching
// (trafilatura's evaluation): images are dropped, links become their
// text, and emphasis, heading and list markers, quote marks, code
// fences, table pipes and backslash escapes are removed.
func MarkdownText(md string) string {
	// Escaped characters are set aside as private-use runes, so that the
	// marker removal below leaves them alone.
	s := mdEscape.ReplaceAllStringFunc(md, func(m string) string { return string(rune(0xE000) + rune(m[1])) })
	s = mdImage.ReplaceAllString(s, " ")
	s = mdLink.ReplaceAllString(s, "$1")
	s = mdRefDef.ReplaceAllString(s, "")
	s = mdFence.ReplaceAllString(s, "")
	s = mdLineTag.ReplaceAllString(s, "")
	s = mdTable.ReplaceAllString(s, " ")
	s = mdCode.ReplaceAllString(s, "")
	s = mdStrong.ReplaceAllString(s, "$1$2")
	return strings.Map(func(r rune) rune {
		if r >= 0xE000 && r < 0xE080 {
			return r - 0xE000
		}
		return r
	}, s)
}
