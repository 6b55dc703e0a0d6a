package textmodel

import (
	"unicode"
	"unicode/utf8"
)

// Fold maps a character for phrase matching: lower case, accents and
// width dropped, look-alike letters of other scripts mapped to Latin, typographic
// quotes and dashes made plain, every space made ' '. It returns -1 for
// characters matching ignores (Markdown emphasis).
func Fold(r rune) rune {
	if r < utf8.RuneSelf {
		switch {
		case r >= 'A' && r <= 'Z':
			return r + 32
		case r == '*' || r == '`':
			return -1
		case r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f':
			return ' '
		}
		return r
	}
	if unicode.IsSpace(r) {
		return ' '
	}
	if r >= 0xFF01 && r <= 0xFF5E {
		return Fold(r - 0xFEE0)
	}
	switch r {
	case 0x2018, 0x2019, 0x201B, 0x02BC, 0x2032:
		return '\''
	case 0x201C, 0x201D, 0x201E, 0x00AB, 0x00BB:
		return '"'
	case 0x2010, 0x2011, 0x2012, 0x2013, 0x2014, 0x2015, 0x2212:
		return '-'
	}
	r = unicode.ToLower(r)
	if r >= 0xC0 && r < 0x180 {
		if a, ok := latinFold[r]; ok {
			return a
		}
		return r
	}
	if a, ok := confusables[r]; ok {
		return a
	}
	return r
}

// latinFold strips the accents of Latin letters.
var latinFold = func() map[rune]rune {
	groups := map[rune]string{
		'a': "àáâãäåāăą", 'c': "çćĉċč", 'd': "ďđ", 'e': "èéêëēĕėęě", 'g': "ĝğġģ", 'h': "ĥħ",
		'i': "ìíîïĩīĭįı", 'j': "ĵ", 'k': "ķ", 'l': "ĺļľŀł", 'n': "ñńņňŉ", 'o': "òóôõöøōŏő",
		'r': "ŕŗř", 's': "śŝşš", 't': "ţťŧ", 'u': "ùúûüũūŭůűų", 'w': "ŵ", 'y': "ýÿŷ", 'z': "źżž",
	}
	m := make(map[rune]rune)
	for to, from := range groups {
		for _, r := range from {
			m[r] = to
		}
	}
	return m
}()

// confusables maps letters of other scripts that look like Latin ones.
var confusables = map[rune]rune{
	'а': 'a', 'е': 'e', 'о': 'o', 'р': 'p', 'с': 'c', 'у': 'y', 'х': 'x', 'і': 'i', 'ј': 'j', 'ѕ': 's',
	'ԁ': 'd', 'ο': 'o', 'ɑ': 'a', 'ɡ': 'g', 'ʏ': 'y', 'ν': 'v',
}
