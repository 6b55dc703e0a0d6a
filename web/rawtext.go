package web

import (
	"strings"
)

// stripRawText returns doc without the text of its script elements (JSON-LD
// kept) and style elements, which clean would drop after html.Parse had
// tokenized and copied them: on the benchmark pages they are more than half
// of the bytes. The markup is scanned as the HTML tokenizer scans it in the
// data state (comments, declarations, tags with quoted attribute values,
// the raw text of title, textarea, noscript, iframe, xmp …), and the scan
// gives up, leaving the rest of the document as it is, wherever it could
// part ways with the parser: foreign content (svg, math), plaintext, a
// comment closed in an unusual way, a script holding "<!--" (the escaped
// script states), an element never closed.
func stripRawText(doc string) string {
	var b strings.Builder
	last := 0 // doc[last:] is not yet copied to b
	i := 0
	for {
		j := strings.IndexByte(doc[i:], '<')
		if j < 0 || i+j+1 >= len(doc) {
			break
		}
		p := i + j
		c := doc[p+1]
		switch {
		case c == '!':
			if strings.HasPrefix(doc[p:], "<!--") {
				end, ok := commentEnd(doc, p+4)
				if !ok {
					return finish(&b, doc, last)
				}
				i = end
				continue
			}
			fallthrough
		case c == '?':
			// A doctype or a bogus comment ends at the next '>'.
			k := strings.IndexByte(doc[p+2:], '>')
			if k < 0 {
				return finish(&b, doc, last)
			}
			i = p + 2 + k + 1
		case c == '/':
			if p+2 >= len(doc) || !asciiLetter(doc[p+2]) {
				// "</>" and bogus end tags: leave the rest alone.
				return finish(&b, doc, last)
			}
			_, end, _, ok := scanTag(doc, p+2)
			if !ok {
				return finish(&b, doc, last)
			}
			i = end
		case asciiLetter(c):
			name, end, keep, ok := scanTag(doc, p+1)
			if !ok {
				return finish(&b, doc, last)
			}
			i = end
			switch name {
			case "svg", "math", "plaintext":
				return finish(&b, doc, last)
			case "script", "style", "title", "textarea", "noscript", "iframe", "noembed", "noframes", "xmp":
				close := rawEndTag(doc, end, name)
				if close < 0 {
					return finish(&b, doc, last)
				}
				if name == "script" && strings.Contains(doc[end:close], "<!--") {
					return finish(&b, doc, last)
				}
				if (name == "script" && !keep) || name == "style" {
					b.WriteString(doc[last:end])
					last = close
				}
				i = close
			}
		default:
			i = p + 1
		}
	}
	return finish(&b, doc, last)
}

func finish(b *strings.Builder, doc string, last int) string {
	if last == 0 {
		return doc
	}
	b.WriteString(doc[last:])
	return b.String()
}

func asciiLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

func tagSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' }

// commentEnd finds the end of a comment whose text starts at from, as the
// tokenizer ends it at "-->"; ok is false for the forms this scan does not
// follow ("<!-->", "--!>", no end).
func commentEnd(doc string, from int) (int, bool) {
	rest := doc[from:]
	if strings.HasPrefix(rest, ">") || strings.HasPrefix(rest, "->") {
		return 0, false
	}
	k := strings.Index(rest, "-->")
	if k < 0 || strings.Contains(rest[:k+2], "--!>") {
		return 0, false
	}
	return from + k + 3, true
}

// scanTag reads a tag from its name (at from) to after its '>', the way
// the tokenizer's readTag does: attribute values in quotes may hold '>'.
// name is lower-cased; keep reports a script whose type is JSON-LD, or
// one whose type holds a character reference (left to the parser).
func scanTag(doc string, from int) (name string, end int, keep bool, ok bool) {
	k := from
	for k < len(doc) && !tagSpace(doc[k]) && doc[k] != '/' && doc[k] != '>' {
		k++
	}
	name = asciiLower(doc[from:k])
	for {
		for k < len(doc) && tagSpace(doc[k]) {
			k++
		}
		if k >= len(doc) {
			return "", 0, false, false
		}
		if doc[k] == '>' {
			return name, k + 1, keep, true
		}
		if doc[k] == '/' {
			// An empty key, the '/' consumed.
			k++
			continue
		}
		// The attribute key; a leading '=' belongs to it.
		ks := k
		k++
		for k < len(doc) && !tagSpace(doc[k]) && doc[k] != '/' && doc[k] != '=' && doc[k] != '>' {
			k++
		}
		key := doc[ks:k]
		// The value.
		for k < len(doc) && tagSpace(doc[k]) {
			k++
		}
		if k >= len(doc) {
			return "", 0, false, false
		}
		if doc[k] == '/' {
			k++
			continue
		}
		if doc[k] != '=' {
			continue
		}
		k++
		for k < len(doc) && tagSpace(doc[k]) {
			k++
		}
		if k >= len(doc) {
			return "", 0, false, false
		}
		var val string
		switch q := doc[k]; q {
		case '>':
			continue
		case '"', '\'':
			e := strings.IndexByte(doc[k+1:], q)
			if e < 0 {
				return "", 0, false, false
			}
			val = doc[k+1 : k+1+e]
			k += 1 + e + 1
		default:
			vs := k
			for k < len(doc) && !tagSpace(doc[k]) && doc[k] != '>' {
				k++
			}
			val = doc[vs:k]
		}
		if name == "script" && asciiLower(key) == "type" {
			keep = keep || strings.Contains(val, "&") ||
				strings.EqualFold(strings.TrimSpace(val), "application/ld+json")
		}
	}
}

// rawEndTag is the index of the "</name" that ends a raw text element
// whose text starts at from, or -1.
func rawEndTag(doc string, from int, name string) int {
	for i := from; ; {
		k := strings.Index(doc[i:], "</")
		if k < 0 {
			return -1
		}
		p := i + k
		e := p + 2 + len(name)
		if e < len(doc) && asciiLower(doc[p+2:e]) == name && (tagSpace(doc[e]) || doc[e] == '/' || doc[e] == '>') {
			return p
		}
		i = p + 2
	}
}

// asciiLower lower-cases ASCII letters only, as the tokenizer compares tag
// and attribute names.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
