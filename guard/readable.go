package guard

import (
	"unicode"
	"unicode/utf8"
)

// decodeAt decodes the unit of the readable view that starts at s[i]: a JSON
// or JavaScript escape, an XML/HTML character reference, or one UTF-8
// character. It returns the character, the length of the unit in s, and
// whether the unit was an escape. What cannot be decoded (incomplete escapes,
// lone surrogates, NUL, references out of range) is kept as written: the
// function then returns the first byte as a plain character, so the rest of
// the sequence is read literally.
func decodeAt(s string, i int) (r rune, n int, escaped bool) {
	c := s[i]
	switch c {
	case '\\':
		if i+1 < len(s) {
			if r, n, ok := decodeBackslash(s, i); ok {
				return r, n, true
			}
		}
		return '\\', 1, false
	case '&':
		if r, n, ok := decodeReference(s, i); ok {
			return r, n, true
		}
		return '&', 1, false
	}
	if c < utf8.RuneSelf {
		return rune(c), 1, false
	}
	r, n = utf8.DecodeRuneInString(s[i:])
	return r, n, false
}

func decodeBackslash(s string, i int) (rune, int, bool) {
	switch s[i+1] {
	case 'n':
		return '\n', 2, true
	case 'r':
		return '\r', 2, true
	case 't':
		return '\t', 2, true
	case 'b':
		return '\b', 2, true
	case 'f':
		return '\f', 2, true
	case '/':
		return '/', 2, true
	case '\\':
		return '\\', 2, true
	case '"':
		return '"', 2, true
	case 'u':
		hi, ok := hex4(s, i+2)
		if !ok || hi == 0 {
			return 0, 0, false
		}
		switch {
		case hi >= 0xD800 && hi < 0xDC00:
			if i+12 <= len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
				if lo, ok := hex4(s, i+8); ok && lo >= 0xDC00 && lo < 0xE000 {
					return 0x10000 + (hi-0xD800)<<10 + (lo - 0xDC00), 12, true
				}
			}
			return 0, 0, false
		case hi >= 0xDC00 && hi < 0xE000:
			return 0, 0, false
		}
		return hi, 6, true
	}
	return 0, 0, false
}

func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var v rune
	for k := i; k < i+4; k++ {
		d := hexVal(s[k])
		if d < 0 {
			return 0, false
		}
		v = v<<4 | rune(d)
	}
	return v, true
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

var namedRefs = []struct {
	name string
	r    rune
}{{"lt;", '<'}, {"gt;", '>'}, {"amp;", '&'}, {"quot;", '"'}, {"apos;", '\''}, {"nbsp;", '\u00a0'}}

// decodeReference decodes &#73; &#73 &#x49; and the named references lt, gt,
// amp, quot, apos and nbsp at s[i] == '&'.
func decodeReference(s string, i int) (rune, int, bool) {
	j := i + 1
	if j >= len(s) {
		return 0, 0, false
	}
	if s[j] != '#' {
		rest := s[j:]
		for _, nr := range namedRefs {
			if len(rest) >= len(nr.name) && rest[:len(nr.name)] == nr.name {
				return nr.r, 1 + len(nr.name), true
			}
		}
		return 0, 0, false
	}
	j++
	base := 10
	if j < len(s) && (s[j] == 'x' || s[j] == 'X') {
		base = 16
		j++
	}
	start := j
	var v int64
	for j < len(s) && j-start < 11 {
		d := hexVal(s[j])
		if d < 0 || (base == 10 && d > 9) {
			break
		}
		v = v*int64(base) + int64(d)
		j++
	}
	digits := j - start
	if digits == 0 || digits > 10 {
		return 0, 0, false
	}
	if v <= 0 || v > unicode.MaxRune || (v >= 0xD800 && v < 0xE000) {
		return 0, 0, false
	}
	if j < len(s) && s[j] == ';' {
		j++
	}
	return rune(v), j - i, true
}

// invisible classes of characters.
const (
	visible = iota
	invTag
	invZeroWidth
	invBidi
	invMark
	invSelector
)

func invisibleClass(r rune) int {
	switch {
	case r < 0xAD:
		return visible
	case r >= 0xE0000 && r <= 0xE007F:
		return invTag
	case r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF:
		return invSelector
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return invBidi
	case r == 0x200E || r == 0x200F || r == 0x061C:
		return invMark
	}
	switch r {
	case 0x200B, 0x200C, 0x200D, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xFEFF,
		0x180E, 0x00AD, 0x034F, 0x115F, 0x1160, 0x3164, 0xFFA0:
		return invZeroWidth
	}
	return visible
}

// isEmojiPart reports whether r may stand on either side of a ZWJ inside an
// emoji sequence.
func isEmojiPart(r rune) bool {
	return r >= 0x1F000 && r <= 0x1FAFF || r >= 0x2600 && r <= 0x27BF || r >= 0x2300 && r <= 0x23FF ||
		r == 0x2640 || r == 0x2642 || r == 0x2695 || r == 0x2696 || r == 0x2708 || r == 0x2764 || r == 0x2B1B || r == 0x2B50
}

// isJoiningScript reports whether r belongs to a script in which ZWJ and
// ZWNJ are ordinary spelling (Arabic, Persian, Indic and similar scripts).
func isJoiningScript(r rune) bool {
	return r >= 0x0600 && r <= 0x08FF || r >= 0x0900 && r <= 0x0DFF || r >= 0x0F00 && r <= 0x109F ||
		r >= 0x1780 && r <= 0x17FF || r >= 0xFB50 && r <= 0xFEFC
}

type span struct{ start, end int }

// view is the readable view of a text plus a lowercased, whitespace-collapsed
// fold of it. Every byte of either view maps back to the unit of the
// original text it came from: a match on the view covers whole escapes.
type view struct {
	src       string
	raw       []byte
	rawStart  []int32 // start in src of the unit each byte of raw came from
	fold      []byte
	foldStart []int32 // the same for fold
}

// unitEnd returns the end in src of the unit that starts at off.
func (v *view) unitEnd(off int32) int {
	_, n, _ := decodeAt(v.src, int(off))
	return int(off) + n
}

func (v *view) rawSpan(a, b int) span  { return span{int(v.rawStart[a]), v.unitEnd(v.rawStart[b-1])} }
func (v *view) foldSpan(a, b int) span { return span{int(v.foldStart[a]), v.unitEnd(v.foldStart[b-1])} }
func (v *view) rawEnd(i int) int       { return v.unitEnd(v.rawStart[i]) }

// buildView decodes s in one left-to-right pass. It drops invisible
// characters from the views and records in sc what to remove from the
// original and what to report about it.
func buildView(s string, sc *scan) *view {
	v := &view{
		src:       s,
		raw:       make([]byte, 0, len(s)),
		rawStart:  make([]int32, 0, len(s)),
		fold:      make([]byte, 0, len(s)),
		foldStart: make([]int32, 0, len(s)),
	}
	var (
		prev      rune = -1 // last visible character
		foldSpace      = true
		tags      []rune
		tagSpan   span
		tagPrev   rune
		zwRun     int
		zwSpan    span
		selectors int
		selSpan   span
		buf       [utf8.UTFMax]byte
	)
	flushTags := func() {
		if len(tags) == 0 {
			return
		}
		flag := tagPrev == 0x1F3F4 && tags[len(tags)-1] == 0xE007F && len(tags) >= 2
		if flag {
			for _, t := range tags[:len(tags)-1] {
				if t < 0xE0020 || t > 0xE007E {
					flag = false
				}
			}
		}
		if !flag {
			sc.remove(tagSpan)
			sc.addInvisible("invisible.unicode_tags", tagSpan, "hidden tag characters: "+quoteSnippet(decodeTags(tags)))
		}
		tags = tags[:0]
	}
	flushZW := func() {
		if zwRun >= 8 {
			sc.addInvisible("invisible.zero_width_run", zwSpan, "run of zero-width characters")
		}
		zwRun = 0
	}
	flushSelectors := func() {
		if selectors > 1 {
			sc.addInvisible("invisible.variation_selectors", selSpan, "run of variation selectors on one character")
		}
		selectors = 0
	}
	for i := 0; i < len(s); {
		// Fast path: plain ASCII outside any escape, with no invisible run
		// pending.
		if c := s[i]; c < utf8.RuneSelf && c != '\\' && c != '&' && (c >= 0x20 || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') && c != 0x7F && len(tags) == 0 && zwRun == 0 && selectors == 0 {
			prev = rune(c)
			v.raw = append(v.raw, c)
			v.rawStart = append(v.rawStart, int32(i))
			f := c
			switch {
			case c >= 'A' && c <= 'Z':
				f = c + 32
			case c == '*' || c == '`':
				i++
				continue
			case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
				if foldSpace {
					i++
					continue
				}
				f = ' '
			}
			foldSpace = f == ' '
			v.fold = append(v.fold, f)
			v.foldStart = append(v.foldStart, int32(i))
			i++
			continue
		}
		r, n, esc := decodeAt(s, i)
		u := span{i, i + n}
		cls := invisibleClass(r)
		if cls != invTag {
			flushTags()
		}
		if cls != invZeroWidth {
			flushZW()
		}
		if cls != invSelector {
			flushSelectors()
		}
		if !esc && isTermControl(r) {
			// A terminal control sequence or character: removed, and a
			// sequence is reported (see terminal.go).
			k, what := termSequence(s, i)
			t := span{i, i + k}
			sc.remove(t)
			if what != "" {
				sc.addInvisible("terminal.control_sequence", t, what)
			}
			i += k
			continue
		}
		switch cls {
		case invTag:
			if len(tags) == 0 {
				tagSpan = u
				tagPrev = prev
			}
			tagSpan.end = u.end
			tags = append(tags, r)
		case invZeroWidth:
			keep := false
			switch {
			case r == 0xFEFF && i == 0:
				keep = true
			case r == 0x200D || r == 0x200C:
				next := rune(-1)
				if i+n < len(s) {
					next, _, _ = decodeAt(s, i+n)
				}
				keep = (r == 0x200D && isEmojiPart(prev) && isEmojiPart(next)) ||
					(isJoiningScript(prev) && isJoiningScript(next))
			}
			if !keep {
				if !esc {
					sc.remove(u)
				}
				if zwRun == 0 {
					zwSpan = u
				}
				zwSpan.end = u.end
				zwRun++
			}
		case invBidi:
			if r == 0x202D || r == 0x202E {
				sc.remove(u)
				sc.addInvisible("invisible.bidi_override", u, "")
			} else if !esc {
				sc.remove(u)
			}
		case invMark:
			// Kept in the text: right-to-left writing needs them.
		case invSelector:
			selectors++
			if selectors == 2 {
				selSpan = u
			}
			if selectors >= 2 {
				selSpan.end = u.end
				sc.remove(u)
			}
		default:
			prev = r
			k := utf8.EncodeRune(buf[:], r)
			for b := 0; b < k; b++ {
				v.raw = append(v.raw, buf[b])
				v.rawStart = append(v.rawStart, int32(u.start))
			}
			f := foldRune(r)
			if r == '\\' && i+n < len(s) && isMarkdownEscapable(s[i+n]) {
				// A Markdown escape ("create\_event", "\*"): the model reads
				// the character after it.
				f = -1
			}
			switch {
			case f < 0:
			case f == ' ':
				if !foldSpace {
					v.fold = append(v.fold, ' ')
					v.foldStart = append(v.foldStart, int32(u.start))
					foldSpace = true
				}
			default:
				foldSpace = false
				k := utf8.EncodeRune(buf[:], f)
				for b := 0; b < k; b++ {
					v.fold = append(v.fold, buf[b])
					v.foldStart = append(v.foldStart, int32(u.start))
				}
			}
		}
		i += n
	}
	flushTags()
	flushZW()
	flushSelectors()
	return v
}

func decodeTags(tags []rune) string {
	b := make([]byte, 0, len(tags))
	for _, t := range tags {
		if t >= 0xE0020 && t <= 0xE007E {
			b = append(b, byte(t-0xE0000))
		}
	}
	return string(b)
}

// ReadableView returns the text the way a model reads it: JSON and
// JavaScript escapes and XML/HTML character references decoded, invisible
// characters dropped. It is what the filter scans.
func ReadableView(s string) string {
	var sc scan
	return string(buildView(s, &sc).raw)
}

// isMarkdownEscapable tells the ASCII punctuation that Markdown lets a
// backslash escape.
func isMarkdownEscapable(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}
