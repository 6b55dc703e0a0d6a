package web

import (
	"bytes"
	"mime"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	xunicode "golang.org/x/text/encoding/unicode"
)

// htmlEncoding decides how an HTML body is decoded, and names the source of
// the decision (for tests). The order is the one browsers follow, with two
// differences that matter for pages read without a browser: a <meta
// charset> or http-equiv Content-Type counts anywhere in the head, not only
// in the first 1,024 bytes (browsers re-decode when the parser meets it
// later), and when nothing is declared, a body that is valid UTF-8 is read
// as UTF-8 instead of the Windows-1252 default (browsers sniff the same
// way).
//
//  1. a charset parameter in the Content-Type header that names a known
//     encoding;
//  2. a byte order mark (UTF-8, UTF-16LE, UTF-16BE);
//  3. the first meta charset or http-equiv Content-Type in the head;
//  4. UTF-8 when the body is valid UTF-8 (a sequence cut at the very end,
//     as a size cap leaves it, is allowed), or when its valid multi-byte
//     sequences outnumber its invalid bytes by far;
//  5. Windows-1252.
func htmlEncoding(raw []byte, contentType string) (encoding.Encoding, string) {
	if contentType != "" {
		if _, params, err := mime.ParseMediaType(contentType); err == nil {
			if cs := strings.TrimSpace(params["charset"]); cs != "" {
				if enc, name := charset.Lookup(cs); enc != nil {
					return enc, "header:" + name
				}
			}
		}
	}
	switch {
	case bytes.HasPrefix(raw, []byte("\xef\xbb\xbf")):
		return xunicode.UTF8, "bom:utf-8"
	case bytes.HasPrefix(raw, []byte{0xFE, 0xFF}):
		return xunicode.UTF16(xunicode.BigEndian, xunicode.ExpectBOM), "bom:utf-16be"
	case bytes.HasPrefix(raw, []byte{0xFF, 0xFE}):
		return xunicode.UTF16(xunicode.LittleEndian, xunicode.ExpectBOM), "bom:utf-16le"
	}
	if enc, name := metaCharset(raw); enc != nil {
		return enc, "meta:" + name
	}
	if looksUTF8(raw) {
		return xunicode.UTF8, "sniff:utf-8"
	}
	return charmap.Windows1252, "default:windows-1252"
}

// metaCharset finds the first meta element in the head that declares a
// known charset. The head ends at </head> or at the first start tag of an
// element that cannot be in it (body, div …).
// A declared UTF-16 means UTF-8 (the bytes were read as ASCII to find it),
// and x-user-defined means Windows-1252, as the HTML standard says.
func metaCharset(raw []byte) (encoding.Encoding, string) {
	z := html.NewTokenizer(bytes.NewReader(raw))
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return nil, ""
		case html.EndTagToken:
			if name, _ := z.TagName(); string(name) == "head" {
				return nil, ""
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			switch string(name) {
			case "html", "head", "title", "base", "link", "style", "script", "noscript", "template":
			case "meta":
				if !hasAttr {
					continue
				}
				if enc, cs := metaDeclares(z); enc != nil {
					return enc, cs
				}
			default:
				// Any other element opens the body, as it does for the
				// HTML parser.
				return nil, ""
			}
		}
	}
}

// metaDeclares reads the charset a meta tag declares, from its charset
// attribute or from http-equiv="Content-Type" with a content attribute.
func metaDeclares(z *html.Tokenizer) (encoding.Encoding, string) {
	var cs, content string
	contentType := false
	for {
		k, v, more := z.TagAttr()
		switch strings.ToLower(string(k)) {
		case "charset":
			if cs == "" {
				cs = strings.TrimSpace(string(v))
			}
		case "http-equiv":
			contentType = strings.EqualFold(strings.TrimSpace(string(v)), "content-type")
		case "content":
			content = string(v)
		}
		if !more {
			break
		}
	}
	if cs == "" && contentType {
		cs = charsetInContent(content)
	}
	if cs == "" {
		return nil, ""
	}
	enc, name := charset.Lookup(cs)
	switch {
	case enc == nil:
		return nil, ""
	case strings.HasPrefix(name, "utf-16"):
		return xunicode.UTF8, "utf-8"
	case name == "x-user-defined":
		return charmap.Windows1252, "windows-1252"
	}
	return enc, name
}

// charsetInContent extracts the charset from a meta content value such as
// "text/html; charset=Shift_JIS" the way the HTML standard's algorithm
// does (quotes optional, no full MIME parsing).
func charsetInContent(s string) string {
	low := strings.ToLower(s)
	for {
		i := strings.Index(low, "charset")
		if i < 0 {
			return ""
		}
		s, low = s[i+len("charset"):], low[i+len("charset"):]
		t := strings.TrimLeft(s, " \t\n\f\r")
		if !strings.HasPrefix(t, "=") {
			continue
		}
		t = strings.TrimLeft(t[1:], " \t\n\f\r")
		if t == "" {
			return ""
		}
		if q := t[0]; q == '"' || q == '\'' {
			if j := strings.IndexByte(t[1:], q); j >= 0 {
				return t[1 : 1+j]
			}
			return ""
		}
		end := strings.IndexAny(t, " \t\n\f\r;")
		if end < 0 {
			return t
		}
		return t[:end]
	}
}

// looksUTF8 reports whether raw reads as UTF-8: valid throughout except
// perhaps for a sequence cut at the end, or with at least one multi-byte
// sequence and twenty valid multi-byte sequences for each invalid byte
// (a page in UTF-8 with a stray byte pasted in). Text in a single-byte
// legacy encoding almost never forms valid multi-byte sequences, since
// they need a lead byte followed by the right number of bytes in
// 0x80–0xBF.
func looksUTF8(raw []byte) bool {
	if utf8.Valid(raw) {
		return true
	}
	multi, invalid := 0, 0
	for i := 0; i < len(raw); {
		c := raw[i]
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(raw[i:])
		if r == utf8.RuneError && size <= 1 {
			if len(raw)-i < utf8.UTFMax && !utf8.FullRune(raw[i:]) {
				break // cut at the end
			}
			invalid++
			i++
			continue
		}
		multi++
		i += size
	}
	return invalid == 0 || (multi > 0 && multi >= 20*invalid)
}
