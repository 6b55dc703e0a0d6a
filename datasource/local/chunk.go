package local

import (
	"regexp"
	"strings"
	"sync"
	"unicode"

	"github.com/stewardhq/steward/datasource/extract"
	"github.com/stewardhq/steward/store/docindex"
)

// Chunking, as the reference cuts documents: sizes are tokens of the
// embedding model; a piece that fits is one chunk; otherwise it is split
// by the next rule of its kind's chain, coarse to fine, and the most
// consecutive units that fit are packed into each chunk, an oversized
// unit split by the rule after:
//
//	document, website: page/section → heading → paragraph → line → word → hard cut
//	source code:       section → block (blank line) → line → word → hard cut
//	presentation:      slide → line → word → hard cut
//	spreadsheet, table: sheet → row → word → hard cut
//
// A chunk repeats about OverlapTokens of the one before: it restarts at
// the earlier unit boundary whose tail comes closest to the overlap
// without exceeding it, or, when no boundary serves, begins with the last
// words of the chunk before (at most the overlap) and a line break. A
// chunk's page is the page of its first own unit.

// Boundary strengths of a line: what starts with it.
const (
	startWord    = 0
	startLine    = 1
	startPara    = 2
	startHeading = 3
	startSection = 4
)

// chains are the rules of each kind, as the boundary strength each level
// splits at.
var chains = map[extract.Kind][]int{
	extract.Document:     {startSection, startHeading, startPara, startLine, startWord},
	extract.Website:      {startSection, startHeading, startPara, startLine, startWord},
	extract.Code:         {startSection, startPara, startLine, startWord},
	extract.Presentation: {startSection, startLine, startWord},
	extract.Spreadsheet:  {startSection, startLine, startWord},
}

type line struct {
	text     string
	tokens   int
	page     int
	strength int
}

type chunker struct {
	c        *counter
	max      int
	overlap  int
	chain    []int
	out      []docindex.Chunk
	prevText string
}

// chunkDoc cuts a document's text into chunks of at most max tokens (the
// overlap included) with about overlap tokens repeated.
func chunkDoc(c *counter, doc *extract.Doc, maxTokens, overlap int) []docindex.Chunk {
	ck := &chunker{c: c, max: maxTokens, overlap: min(max(overlap, 0), maxTokens-1), chain: chains[doc.Kind]}
	if ck.chain == nil {
		ck.chain = chains[extract.Document]
	}
	ls := docLines(c, doc)
	if len(ls) == 0 {
		return nil
	}
	ck.split(ls, 0)
	return ck.out
}

// markdownHeading is an ATX heading line.
var markdownHeading = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^#{1,6}\s+\S`) })

// isHeading tells a line standing alone between blank lines that reads as
// a heading: 3-120 characters, no "|", no final ".", and numbered, or
// starting "chapter"/"section", or in capitals.
func isHeading(t string) bool {
	if markdownHeading().MatchString(t) {
		return true
	}
	n := len([]rune(t))
	if n < 3 || n > 120 || strings.Contains(t, "|") || strings.HasSuffix(t, ".") {
		return false
	}
	lower := strings.ToLower(t)
	if strings.HasPrefix(lower, "chapter") || strings.HasPrefix(lower, "section") {
		return true
	}
	if r := []rune(t)[0]; unicode.IsDigit(r) {
		return true
	}
	letters, upper := 0, 0
	for _, r := range t {
		if unicode.IsLetter(r) {
			letters++
			if unicode.IsUpper(r) {
				upper++
			}
		}
	}
	return letters >= 3 && upper == letters
}

// docLines splits the sections into lines with their boundary strengths
// and token counts; blank lines only mark paragraphs.
func docLines(c *counter, doc *extract.Doc) []line {
	var out []line
	for _, s := range doc.Sections {
		raw := strings.Split(s.Text, "\n")
		strength := startSection
		for i, l := range raw {
			t := strings.TrimRight(l, " \t")
			if strings.TrimSpace(t) == "" {
				if strength < startPara {
					strength = startPara
				}
				continue
			}
			st := strength
			if st < startSection && (doc.Kind == extract.Document || doc.Kind == extract.Website) && markdownHeading().MatchString(strings.TrimSpace(t)) {
				st = startHeading
			}
			if st == startPara && (doc.Kind == extract.Document || doc.Kind == extract.Website) {
				// A lone line between blank lines may be a heading.
				nextBlank := i+1 >= len(raw) || strings.TrimSpace(raw[i+1]) == ""
				if nextBlank && isHeading(strings.TrimSpace(t)) {
					st = startHeading
				}
			}
			if st < startLine {
				st = startLine
			}
			out = append(out, line{text: t, tokens: c.count(t), page: s.Page, strength: st})
			strength = startLine
		}
	}
	return out
}

// tokensOf counts lines joined by line breaks (one token each).
func tokensOf(ls []line) int {
	n := 0
	for _, l := range ls {
		n += l.tokens
	}
	return n + len(ls) - 1
}

func joinLines(ls []line) string {
	var b strings.Builder
	for i, l := range ls {
		if i > 0 {
			if l.strength >= startPara {
				b.WriteString("\n\n")
			} else {
				b.WriteByte('\n')
			}
		}
		b.WriteString(l.text)
	}
	return b.String()
}

// split cuts lines by the rule at level li of the chain.
func (ck *chunker) split(ls []line, li int) {
	if li == 0 && tokensOf(ls) <= ck.max {
		ck.emit(joinLines(ls), ls[0].page, false, tokensOf(ls))
		return
	}
	if li >= len(ck.chain) || ck.chain[li] == startWord {
		for _, l := range ls {
			ck.words(l)
		}
		return
	}
	// Units: runs of lines, each starting at a line of at least the
	// level's strength.
	level := ck.chain[li]
	var units [][]line
	for i, l := range ls {
		if i == 0 || l.strength >= level {
			units = append(units, nil)
		}
		units[len(units)-1] = append(units[len(units)-1], l)
	}
	ck.pack(units, li)
}

// pack fills chunks with the most consecutive units that fit; a unit too
// large for a chunk is split by the next rule.
func (ck *chunker) pack(units [][]line, li int) {
	var cur [][]line // the chunk being filled: overlap units, then own ones
	own := 0         // index in cur of the first own unit
	size := func(us [][]line) int {
		n := 0
		for _, u := range us {
			n += tokensOf(u) + 1
		}
		return n - 1
	}
	flush := func() {
		if len(cur) > own {
			var ls []line
			for _, u := range cur {
				ls = append(ls, u...)
			}
			ck.emit(joinLines(ls), cur[own][0].page, own > 0, size(cur))
		}
		cur, own = nil, 0
	}
	for _, u := range units {
		ut := tokensOf(u)
		if ut > ck.max {
			flush()
			ck.split(u, li+1)
			continue
		}
		if len(cur) > 0 && size(cur)+1+ut > ck.max {
			prev := cur[own:]
			flush()
			// Restart at the boundary whose tail comes closest to the
			// overlap (never the whole chunk) and still leaves room.
			if ck.overlap > 0 && len(prev) > 1 {
				best := -1
				for k := len(prev) - 1; k >= 1; k-- {
					t := size(prev[k:])
					if t > ck.overlap || t+1+ut > ck.max {
						break
					}
					best = k
				}
				if best > 0 {
					cur = append(cur, prev[best:]...)
					own = len(cur)
				}
			}
		}
		cur = append(cur, u)
	}
	flush()
}

// emit stores a chunk of text, which holds tokens tokens as its lines or
// words were counted (-1: not counted yet). A chunk without unit overlap
// after another chunk begins with the last words of that chunk (at most
// the overlap, and what room is left).
func (ck *chunker) emit(text string, page int, overlapped bool, tokens int) {
	if text == "" {
		return
	}
	if !overlapped && len(ck.out) > 0 && ck.overlap > 0 {
		own := tokens
		if own < 0 {
			own = ck.c.count(text)
		}
		if tail := ck.tailWords(ck.prevText, min(ck.overlap, ck.max-own-1)); tail != "" {
			text = tail + "\n" + text
		}
	}
	ck.out = append(ck.out, docindex.Chunk{Text: text, Page: page})
	ck.prevText = text
}

// tailWords returns the last words of s holding at most n tokens.
func (ck *chunker) tailWords(s string, n int) string {
	if n <= 0 {
		return ""
	}
	words := strings.Fields(s)
	total, k := 0, len(words)
	for k > 0 {
		t := ck.c.count(" " + words[k-1])
		if total+t > n {
			break
		}
		total += t
		k--
	}
	return strings.Join(words[k:], " ")
}

// words packs the words of a line too long for a chunk; a word longer
// than a chunk is cut.
func (ck *chunker) words(l line) {
	var cur []string
	tok := 0
	flush := func() {
		if len(cur) > 0 {
			ck.emit(strings.Join(cur, " "), l.page, false, tok)
		}
		cur, tok = nil, 0
	}
	// Room for the overlap the next chunk carries.
	room := max(1, ck.max-ck.overlap-1)
	for _, w := range strings.Fields(l.text) {
		wt := ck.c.count(" " + w)
		for wt > room {
			flush()
			part := ck.c.cut(w, room)
			ck.emit(part, l.page, false, -1)
			w = w[len(part):]
			wt = ck.c.count(" " + w)
			if w == "" {
				break
			}
		}
		if w == "" {
			continue
		}
		if tok+wt > room {
			flush()
		}
		cur = append(cur, w)
		tok += wt
	}
	flush()
}
