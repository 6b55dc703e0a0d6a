// Package textcut shortens text for messages: to a number of characters,
// never inside a UTF-8 sequence, and, for text that came from outside, to
// one readable piece without control characters. Steward's rooms use it
// where an error, a log value or a refusal quotes a value, so that a value
// of any size stays short.
//
// It imports nothing of Steward's and does no I/O.
package textcut

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Chars returns s when it has at most max characters, else its first max
// characters followed by "...".
func Chars(s string, max int) string {
	n := 0
	for i := range s {
		if n == max {
			return s[:i] + "..."
		}
		n++
	}
	return s
}

// Readable returns s as valid UTF-8 (an invalid byte becomes U+FFFD) with
// control characters replaced by spaces (line breaks and tabs kept when
// keepLines is set) and, when it is longer than max characters, cut to max
// characters, the last one "…".
func Readable(s string, max int, keepLines bool) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s = strings.Map(func(r rune) rune {
		if keepLines && (r == '\n' || r == '\t') {
			return r
		}
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == max-1 {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
