package extract

import (
	"bytes"
	"net/url"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"

	"github.com/stewardhq/steward/web"
)

// decodeText turns the bytes of a text file into UTF-8: a UTF-8 or UTF-16
// byte order mark is honoured, valid UTF-8 is taken as it is, anything
// else is read as Windows-1252 (which covers Latin-1). ok is false for a
// file that is binary.
func decodeText(data []byte) (string, bool) {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		return string(data[3:]), true
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}), bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		s, err := unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM).NewDecoder().Bytes(data)
		if err != nil {
			return "", false
		}
		return string(s), true
	}
	if isBinary(data) {
		return "", false
	}
	if utf8.Valid(data) {
		return string(data), true
	}
	s, err := charmap.Windows1252.NewDecoder().Bytes(data)
	if err != nil {
		return strings.ToValidUTF8(string(data), "\uFFFD"), true
	}
	return string(s), true
}

func plainText(f Format, data []byte) (*Doc, error) {
	s, ok := decodeText(data)
	if !ok {
		return nil, permanent("the file is not text (it holds binary data)", ErrUnsupported)
	}
	d := &Doc{Sections: []Section{{Text: s}}}
	if f == Markdown {
		d.Title = markdownTitle(s)
	}
	return d, nil
}

// markdownTitle is the text of the first level-1 heading (ATX "# " or a
// line underlined with "="), or of the first heading of any level.
func markdownTitle(s string) string {
	lines := strings.Split(s, "\n")
	first := ""
	fenced := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if strings.HasPrefix(t, "# ") {
			return strings.TrimSpace(strings.Trim(t[2:], "#"))
		}
		if i+1 < len(lines) && t != "" && strings.Trim(strings.TrimSpace(lines[i+1]), "=") == "" && strings.Contains(lines[i+1], "==") {
			return t
		}
		if first == "" && strings.HasPrefix(t, "#") {
			first = strings.TrimSpace(strings.Trim(t, "#"))
		}
	}
	return first
}

func htmlText(data []byte) (*Doc, error) {
	s, ok := decodeText(data)
	if !ok {
		return nil, permanent("the file is not text (it holds binary data)", ErrUnsupported)
	}
	// A local page has no address: links stay as written.
	p, err := web.ExtractHTML(s, &url.URL{Scheme: "file", Path: "/"})
	if err != nil {
		return nil, permanent("the HTML could not be read", err)
	}
	return &Doc{Title: p.Title, Sections: []Section{{Text: p.Markdown}}}, nil
}
