package web

import (
	"strings"
	"unicode"
)

// TruncationMarker ends content that Truncate shortened.
const TruncationMarker = "[Page content truncated]"

// Truncate shortens markdown to at most max characters, counted in runes
// (Unicode code points; the reference counts UTF-16 code units, which
// differ only for characters outside the Basic Multilingual Plane). When it
// cuts, it prefers the last paragraph break, then the last line break, if
// either lies in the second half of the kept text, trims the trailing
// whitespace and appends a blank line and TruncationMarker; the result,
// marker included, never exceeds max. When max cannot hold the marker
// (max < 26) the text is cut hard at max. It reports whether it cut.
func Truncate(markdown string, max int) (string, bool) {
	if max < 0 {
		max = 0
	}
	runes := []rune(markdown)
	if len(runes) <= max {
		return markdown, false
	}
	const sep = "\n\n"
	overhead := len(sep) + len(TruncationMarker) // both ASCII: bytes = runes
	if max < overhead {
		return string(runes[:max]), true
	}
	limit := max - overhead
	head := string(runes[:limit])
	half := len(string(runes[:limit/2])) // byte offset of the rune at limit/2
	if i := strings.LastIndex(head, "\n\n"); i >= half && i > 0 {
		head = head[:i]
	} else if i := strings.LastIndex(head, "\n"); i >= half && i > 0 {
		head = head[:i]
	}
	return strings.TrimRightFunc(head, unicode.IsSpace) + sep + TruncationMarker, true
}
