package confluence

import (
	"strings"
	"unicode"
)

// The text fields a search may use. siteSearch is what the wiki's own
// search box searches (title, body, labels); servers that do not know it
// get text, the body and title.
const (
	fieldSiteSearch = "siteSearch"
	fieldText       = "text"
)

// cqlString writes s as a CQL string literal: in double quotes, with every
// backslash and double quote escaped by a backslash, and control
// characters (which the argument reader already refuses) left out. Nothing
// inside can end the literal, so the value can never become CQL of its own.
func cqlString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '\\' || r == '"':
			b.WriteByte('\\')
			b.WriteRune(r)
		case unicode.IsControl(r):
			// A line break or NUL has no place in a search phrase.
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// buildCQL returns the query for a phrase and an optional space key:
//
//	<field> ~ "<phrase>" AND type IN (page, blogpost) [AND space = "<key>"]
//
// Both values are always quoted and escaped, whatever they hold (reserved
// words, operators, quotes, a personal space key such as ~jdoe), so none of
// this depends on detecting what needs quoting. The model never supplies
// CQL: its phrase stays one phrase. Inside the phrase, Confluence's text
// search still reads its own syntax (wildcards, "exact phrases"); a phrase
// it cannot read is answered with HTTP 400, which the tool reports as a
// correctable refusal.
func buildCQL(field, phrase, space string) string {
	q := field + " ~ " + cqlString(phrase) + " AND type IN (page, blogpost)"
	if space != "" {
		q += " AND space = " + cqlString(space)
	}
	return q
}
