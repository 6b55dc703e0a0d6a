package textmodel

import "unicode/utf8"

// MaxSegment caps a segment in bytes: a longer run without a sentence end
// (minified code, a table row) is cut at a space after MaxSegment/2 bytes,
// or at MaxSegment.
const MaxSegment = 600

// Segment is a sentence or line of a readable view: text[Start:End].
type Segment struct{ Start, End int }

// Segments splits text into sentences: a segment ends at a line break, at
// '!', '?', '。', '！' or '？', at '.' before a space or the end, before '<'
// and after '>' (markup), and around a string value of JSON or CSV (a
// double quote after ':', ',', '[' or '{', or before ',', ':', '}' or ']').
// Blank segments and segments with fewer than three letters are dropped.
func Segments(text []byte) []Segment {
	var out []Segment
	start := 0
	flush := func(end int) {
		for start < end && (text[start] == ' ' || text[start] == '\t' || text[start] == '\r' || text[start] == '\n') {
			start++
		}
		e := end
		for e > start && (text[e-1] == ' ' || text[e-1] == '\t' || text[e-1] == '\r' || text[e-1] == '\n') {
			e--
		}
		if e > start && letters(text[start:e]) >= 3 {
			out = append(out, Segment{start, e})
		}
		start = end
	}
	for i := 0; i < len(text); {
		r, n := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRune(text[i:])
		}
		i += n
		switch r {
		case '\n', '!', '?', '。', '！', '？', '>':
			flush(i)
			continue
		case '<':
			flush(i - 1)
			continue
		case '.':
			if i >= len(text) || text[i] == ' ' || text[i] == '\n' || text[i] == '\r' {
				flush(i)
				continue
			}
		case '"':
			// A JSON or CSV string value is a segment of its own.
			if i < len(text) && (text[i] == ',' || text[i] == ':' || text[i] == '}' || text[i] == ']') {
				flush(i - 1)
				continue
			}
			if i >= 2 && (text[i-2] == ':' || text[i-2] == ',' || text[i-2] == '[' || text[i-2] == '{') {
				flush(i)
				continue
			}
		}
		if i-start >= MaxSegment/2 && (r == ' ' || r == ',' || r == ';') || i-start >= MaxSegment {
			flush(i)
		}
	}
	flush(len(text))
	return out
}

func letters(b []byte) int {
	k := 0
	for i := 0; i < len(b) && k < 3; {
		r, n := rune(b[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRune(b[i:])
		}
		if isWord(r) && !(r >= '0' && r <= '9') {
			k++
		}
		i += n
	}
	return k
}
