package tool

import "unicode/utf16"

// UTF16Len is the length of s in UTF-16 code units, the unit in which the
// reference implementation counts results and budgets (the loop's result
// limit, a search's character budget, a page of a mail): a character
// outside the Basic Multilingual Plane counts 2, every other one 1, and
// each byte that is not valid UTF-8 1 (it is written as U+FFFD).
func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		if w := utf16.RuneLen(r); w > 0 {
			n += w
		} else {
			n++
		}
	}
	return n
}
