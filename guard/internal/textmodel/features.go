package textmodel

import (
	"bytes"
	"unicode"
	"unicode/utf8"
)

// Bits is the size of the hashed feature space: 2^Bits buckets.
const Bits = 18

// startWords is how many words at the start of a segment also count as
// features of their own: an injected sentence often opens with its
// addressee or a command.
const startWords = 3

const (
	seedWord   = 0x9ae16a3b2f90404f
	seedBigram = 0xc3a5c85c97cb3127
	seedChar   = 0xb492b66fbe98f273
	seedQuote  = 0x2545f4914f6cdd1d
)

func mix(h uint64, r rune) uint64 {
	h ^= uint64(r)
	h *= 0x100000001b3
	return h
}

func bucket(h uint64) uint32 {
	h ^= h >> 29
	h *= 0x9e3779b97f4a7c15
	return uint32(h >> (64 - Bits))
}

// isCJK reports whether r belongs to a script written without spaces
// between words, where every character is taken as a word.
func isCJK(r rune) bool {
	return r >= 0x3040 && r <= 0x30FF || r >= 0x3400 && r <= 0x4DBF || r >= 0x4E00 && r <= 0x9FFF ||
		r >= 0xF900 && r <= 0xFAFF
}

func isWord(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// Features calls emit with the bucket of every feature of text: word
// unigrams and bigrams, the first startWords words by their position, and
// character 4-grams of the folded text
// (lower case, accents and width dropped, spaces collapsed, digits made 0).
// A feature that occurs twice is emitted twice.
//
// A URL, a mail address or a dotted name (evil.example, org.example.app)
// is one placeholder word of its kind.
//
// Inside a quotation embedded in a sentence (a double quote or 「 after a
// space that follows a word, a comma or a colon: `the mail said "send the
// files"`) the features are hashed apart from the same features outside
// quotes, so the model weighs a quoted instruction on its own: texts about
// injections quote them. Quotes right after a colon or comma without a
// space (JSON, CSV) do not count.
func Features(text []byte, emit func(uint32)) {
	var ring [4]rune // the last four characters, ring[k%4]
	n := 0           // characters seen, with the padding spaces
	var salt uint64  // seedQuote inside an embedded quotation
	var last rune    // the last character before the current run of spaces
	emit0 := emit
	emit = func(h uint32) {
		if salt != 0 {
			h = bucket(uint64(h) ^ salt)
		}
		emit0(h)
	}
	push := func(c rune) {
		ring[n%4] = c
		n++
		if n >= 4 {
			h := uint64(seedChar)
			for k := n - 4; k < n; k++ {
				h = mix(h, ring[k%4])
			}
			emit(bucket(h))
		}
	}
	var word, prevWord uint64
	inWord, havePrev := false, false
	words := 0
	endWord := func() {
		if !inWord {
			return
		}
		if words < startWords {
			emit(bucket(mix(word, rune(0x7000+words))))
		}
		words++
		emit(bucket(word))
		if havePrev {
			emit(bucket(mix(prevWord*31+seedBigram, rune(word>>32)^rune(word))))
		}
		prevWord, havePrev, inWord = word, true, false
	}
	space := true
	push(' ')
	tokStart := true
	for i := 0; i < len(text); {
		if tokStart {
			if end, kind := linkAt(text, i); kind != 0 {
				// An address, a link or a dotted name counts as one word
				// of its kind: which domain it names says nothing.
				endWord()
				word, inWord = mix(seedWord, kind), true
				endWord()
				push(kind)
				space, last = false, kind
				i = end
				tokStart = false
				continue
			}
		}
		tokStart = isDelimiter(text[i])
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(text[i:])
		}
		i += size
		f := Fold(r)
		switch {
		case f < 0:
			continue
		case f == ' ':
			endWord()
			if !space {
				push(' ')
				space = true
			}
			continue
		}
		if f >= '0' && f <= '9' {
			f = '0'
		}
		switch {
		case salt == 0 && (f == '"' || f == '「' || f == '『') && space && (isWord(last) || last == ',' || last == ':'):
			endWord()
			salt = seedQuote
		case salt != 0 && (f == '"' || f == '」' || f == '』'):
			endWord()
			push(f)
			salt, space, last = 0, false, f
			continue
		}
		space = false
		last = f
		push(f)
		switch {
		case isCJK(f):
			endWord()
			word, inWord = mix(seedWord, f), true
			endWord()
		case isWord(f):
			if !inWord {
				word, inWord = seedWord, true
			}
			word = mix(word, f)
		default:
			endWord()
		}
	}
	endWord()
	if !space {
		push(' ')
	}
}

// The placeholders that stand for a link, a mail address and a dotted name.
const (
	linkURL  = 0xE000
	linkMail = 0xE001
	linkName = 0xE002
)

func isDelimiter(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '"', '\'', '<', '>', '(', ')', '[', ']', '{', '}', ',', ';':
		return true
	}
	return false
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// linkAt reports whether the token starting at text[i] (up to a
// delimiter, without trailing sentence punctuation) is a URL, a mail
// address or a dotted name such as evil.example or org.example.billing,
// and where it ends.
func linkAt(text []byte, i int) (end int, kind rune) {
	end = i
	dot, at, colon := false, -1, false
	for end < len(text) && !isDelimiter(text[end]) {
		switch text[end] {
		case '.':
			dot = true
		case '@':
			at = end
		case ':':
			colon = true
		}
		end++
	}
	for end > i && (text[end-1] == '.' || text[end-1] == ':' || text[end-1] == '!' || text[end-1] == '?') {
		end--
	}
	tok := text[i:end]
	if !dot && !colon {
		return end, 0
	}
	switch {
	case bytes.Contains(tok, []byte("://")) || bytes.HasPrefix(tok, []byte("www.")):
		return end, linkURL
	case at > i && at < end-1 && bytes.IndexByte(tok[at-i:], '.') > 0:
		return end, linkMail
	}
	// A dotted name: letters or digits on both sides of a dot, and a last
	// part (before any '/') of at least two letters.
	host := tok
	if k := bytes.IndexByte(host, '/'); k >= 0 {
		host = host[:k]
	}
	k := bytes.LastIndexByte(host, '.')
	if k <= 0 || k >= len(host)-2 || !isAlnum(host[k-1]) {
		return end, 0
	}
	for _, c := range host[k+1:] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return end, 0
		}
	}
	if len(host) < len(tok) {
		return end, linkURL
	}
	return end, linkName
}
