package guard

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxExtend is how far a neutralized span reaches past its match to the end
// of the sentence, in bytes of the readable view.
const maxExtend = 300

// scan collects what the detectors found in one text.
type scan struct {
	kind     SourceKind
	view     *view
	redact   []span // replaced by the marker
	removals []span // removed silently
	found    []found
}

type found struct {
	rule     string
	category Category
	match    span // in the original
	snippet  string
}

func (sc *scan) remove(u span) { sc.removals = append(sc.removals, u) }

// addInvisible records a finding about an invisible carrier, which is
// removed silently rather than marked.
func (sc *scan) addInvisible(rule string, u span, snippet string) {
	sc.found = append(sc.found, found{rule: rule, category: Evasion, match: u, snippet: snippet})
}

// addMatch records a match fold[start:end] of the folded view.
func (sc *scan) addMatch(v *view, rule string, cat Category, start, end int) {
	if start >= end {
		return
	}
	sc.addOriginal(v, rule, cat, v.foldSpan(start, end))
}

// addRawMatch records a match raw[start:end] of the readable view.
func (sc *scan) addRawMatch(v *view, rule string, cat Category, start, end int) {
	if start >= end {
		return
	}
	sc.addOriginal(v, rule, cat, v.rawSpan(start, end))
}

func (sc *scan) addOriginal(v *view, rule string, cat Category, m span) {
	sc.redact = append(sc.redact, v.governed(m))
	sc.found = append(sc.found, found{rule: rule, category: cat, match: m})
}

// addCarrier records an encoded carrier: the whole carrier is replaced.
func (sc *scan) addCarrier(rule string, m span, snippet string) {
	sc.redact = append(sc.redact, m)
	sc.found = append(sc.found, found{rule: rule, category: EncodingEvasion, match: m, snippet: snippet})
}

// rawIndex returns the first byte of the readable view that comes from at or
// after offset off of the original.
func (v *view) rawIndex(off int) int {
	return sort.Search(len(v.rawStart), func(i int) bool { return int(v.rawStart[i]) >= off })
}

// endsSentence reports whether raw[i] ends a sentence: a terminator, where a
// full stop, question or exclamation mark counts only before a space, a
// closing quote or bracket, or the end (not inside evil.example or
// log?q=).
func endsSentence(raw []byte, i int, r rune) bool {
	if r == '.' || r == '?' || r == '!' {
		// Inside an address ("log?q=", "evil.example") a mark ends nothing.
		return i+1 >= len(raw) || raw[i+1] == ' ' || raw[i+1] == '\n' || raw[i+1] == '\r' || raw[i+1] == '"' || raw[i+1] == '\'' || raw[i+1] == ')' || raw[i+1] == '*'
	}
	return isTerminator(r)
}

func isTerminator(r rune) bool {
	switch r {
	case '.', '!', '?', '\n', '"', '<', '。', '！', '？', '\r':
		return true
	}
	return false
}

// sentenceEnd extends an end offset of the original to the end of its
// sentence, so the rest of an injected instruction goes with it.
func (v *view) sentenceEnd(end int) int {
	i := v.rawIndex(end)
	limit := min(len(v.raw), i+maxExtend)
	last := -1
	for i < limit {
		r, n := utf8.DecodeRune(v.raw[i:])
		if endsSentence(v.raw, i, r) {
			break
		}
		last = i + n - 1
		i += n
	}
	if last < 0 {
		return end
	}
	if e := v.rawEnd(last); e > end {
		return e
	}
	return end
}

// sentence returns the bounds in the original of the sentence around m.
func (v *view) sentence(m span) span {
	a := v.rawIndex(m.start)
	b := v.rawIndex(m.end)
	lo := a
	for k := 0; lo > 0 && k < 400; k++ {
		r, n := utf8.DecodeLastRune(v.raw[:lo])
		if endsSentence(v.raw, lo-n, r) && r != '"' && r != '<' {
			break
		}
		lo -= n
	}
	hi := b
	for k := 0; hi < len(v.raw) && k < 400; k++ {
		r, n := utf8.DecodeRune(v.raw[hi:])
		if endsSentence(v.raw, hi, r) && r != '"' && r != '<' {
			hi += n
			break
		}
		hi += n
	}
	s := span{m.start, m.end}
	if lo < len(v.rawStart) && int(v.rawStart[lo]) < s.start {
		s.start = int(v.rawStart[lo])
	}
	if hi > 0 && hi <= len(v.rawStart) && v.rawEnd(hi-1) > s.end {
		s.end = v.rawEnd(hi - 1)
	}
	return s
}

// renderSnippet writes orig[s] for a report: escapes decoded, invisible
// characters shown as <U+XXXX>, whitespace collapsed. space tells whether
// the text before ended in a space.
func renderSnippet(orig string, s span) []rune {
	out, _ := renderInto(nil, orig, s, true)
	return []rune(strings.TrimSpace(string(out)))
}

func renderInto(out []rune, orig string, s span, space bool) ([]rune, bool) {
	for i := s.start; i < s.end && i < len(orig); {
		r, n, _ := decodeAt(orig, i)
		i += n
		switch {
		case invisibleClass(r) != visible:
			out = append(out, []rune(fmt.Sprintf("<U+%04X>", r))...)
			space = false
		case unicode.IsSpace(r) || unicode.IsControl(r):
			if !space {
				out = append(out, ' ')
				space = true
			}
		default:
			out = append(out, r)
			space = false
		}
	}
	return out, space
}

func (sc *scan) snippet(orig string, f found) string {
	if f.snippet != "" {
		return truncateRunes([]rune(f.snippet), MaxSnippet)
	}
	sent := sc.view.sentence(f.match)
	before, space := renderInto(nil, orig, span{sent.start, f.match.start}, true)
	rest, _ := renderInto(nil, orig, span{f.match.start, sent.end}, space)
	for len(before) > 0 && before[0] == ' ' {
		before = before[1:]
	}
	for len(rest) > 0 && rest[len(rest)-1] == ' ' {
		rest = rest[:len(rest)-1]
	}
	if len(before)+len(rest) <= MaxSnippet {
		return string(before) + string(rest)
	}
	if keep := min(len(before), 60); keep > 0 {
		return truncateRunes([]rune("…"+string(before[len(before)-keep:])+string(rest)), MaxSnippet)
	}
	return truncateRunes(rest, MaxSnippet)
}

func truncateRunes(r []rune, n int) string {
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n-1]) + "…"
}

func quoteSnippet(s string) string {
	return fmt.Sprintf("%q", s)
}

// outcome applies the edits to the original and assembles the findings.
func (sc *scan) outcome(orig string) Outcome {
	type edit struct {
		span
		marker bool
	}
	edits := make([]edit, 0, len(sc.redact)+len(sc.removals))
	for _, r := range sc.redact {
		edits = append(edits, edit{r, true})
	}
	for _, r := range sc.removals {
		edits = append(edits, edit{r, false})
	}
	sort.Slice(edits, func(i, j int) bool {
		if edits[i].start != edits[j].start {
			return edits[i].start < edits[j].start
		}
		return edits[i].end > edits[j].end
	})
	// Merge overlapping edits; an overlap with a marked span is marked.
	merged := edits[:0]
	for _, e := range edits {
		if n := len(merged); n > 0 && e.start < merged[n-1].end || n > 0 && e.marker && merged[n-1].marker && e.start == merged[n-1].end {
			last := &merged[n-1]
			last.end = max(last.end, e.end)
			last.marker = last.marker || e.marker
			continue
		}
		merged = append(merged, e)
	}
	var b strings.Builder
	if len(merged) > 0 {
		b.Grow(len(orig))
		pos := 0
		for _, e := range merged {
			b.WriteString(orig[pos:e.start])
			if e.marker {
				b.WriteString(Marker)
			}
			pos = e.end
		}
		b.WriteString(orig[pos:])
	}
	text := orig
	if len(merged) > 0 {
		text = b.String()
	}
	sort.SliceStable(sc.found, func(i, j int) bool { return sc.found[i].match.start < sc.found[j].match.start })
	out := Outcome{Text: text}
	seen := map[string]bool{}
	reach := map[Category]int{} // furthest end of a kept match per category
	for _, f := range sc.found {
		// One finding per category for overlapping matches: several rules
		// often see the same sentence. Matches come sorted by start.
		if end, ok := reach[f.category]; ok && f.match.start < end {
			continue
		}
		reach[f.category] = f.match.end
		snip := sc.snippet(orig, f)
		key := f.rule + "\x00" + snip
		if seen[key] {
			continue
		}
		seen[key] = true
		out.Redacted++
		if len(out.Findings) < MaxFindings {
			out.Findings = append(out.Findings, Finding{Rule: f.rule, Category: f.category, Snippet: snip, Start: f.match.start, End: f.match.end})
		}
	}
	return out
}
