package web

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/andybalholm/brotli"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/htmlindex"
	xunicode "golang.org/x/text/encoding/unicode"

	"github.com/stewardhq/steward/internal/capped"
)

// kindOf maps a media type (lower case, no parameters) to its content kind;
// ok is false for anything that is neither an HTML page nor text.
func kindOf(mediaType string) (ContentKind, bool) {
	switch mediaType {
	case "", "text/html", "application/xhtml+xml":
		return HTMLPage, true
	case "application/json", "application/xml", "application/x-ndjson", "application/ndjson",
		"application/javascript", "application/x-javascript", "application/ecmascript",
		"application/yaml", "application/x-yaml", "application/toml", "application/sql",
		"application/csv", "application/x-sh":
		return TextDocument, true
	}
	if strings.HasPrefix(mediaType, "text/") {
		return TextDocument, true
	}
	if strings.HasPrefix(mediaType, "application/") &&
		(strings.HasSuffix(mediaType, "+json") || strings.HasSuffix(mediaType, "+xml")) {
		return TextDocument, true
	}
	return 0, false
}

// mediaTypeOf returns the Content-Type without parameters, lower-cased,
// and the charset parameter.
func mediaTypeOf(h http.Header) (mt, cs string) {
	ct := h.Get("Content-Type")
	if ct == "" {
		return "", ""
	}
	if m, params, err := mime.ParseMediaType(ct); err == nil {
		return strings.ToLower(m), params["charset"]
	}
	m, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(m)), ""
}

// readContent checks the headers, reads the body within maxBytes (counted
// after decompression) and fills the page's content fields.
func (s *Service) readContent(ctx context.Context, resp *http.Response, final *url.URL, maxBytes int64, page *Page) error {
	mt, cs := mediaTypeOf(resp.Header)
	kind, ok := kindOf(mt)
	if !ok {
		// Refused on the headers: the body is never read.
		return fmt.Errorf("%w (declared as %q)", ErrUnsupportedContentType, truncateForMessage(mt))
	}
	if resp.ContentLength > maxBytes {
		return fmt.Errorf("%w of %d bytes (declared %d bytes)", ErrTooLarge, maxBytes, resp.ContentLength)
	}
	// The wire bytes are capped too, so a stream of empty compressed
	// members cannot keep the reader busy without producing output.
	wire := &capped.Reader{R: resp.Body, N: maxBytes + 64<<10, Err: ErrTooLarge}
	body, err := decodedBody(resp.Header, wire)
	if err != nil {
		if errors.Is(err, ErrTooLarge) {
			return fmt.Errorf("%w of %d bytes", ErrTooLarge, maxBytes)
		}
		return err
	}
	// Read into one buffer sized from the declared length (else 64 KiB),
	// instead of growing a slice from 512 bytes and copying it at each
	// doubling.
	size := int64(64 << 10)
	if resp.ContentLength >= 0 {
		size = resp.ContentLength + 1 // room to see the end without growing
	}
	buf := bytes.NewBuffer(make([]byte, 0, min(size, maxBytes+1)))
	_, err = buf.ReadFrom(io.LimitReader(body, maxBytes+1))
	raw := buf.Bytes()
	if err != nil {
		if errors.Is(err, ErrTooLarge) {
			return fmt.Errorf("%w of %d bytes", ErrTooLarge, maxBytes)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var ne interface{ Timeout() bool }
		if errors.As(err, &ne) && ne.Timeout() {
			return err
		}
		return fmt.Errorf("%w: %s", ErrDecode, quoteOutside(err.Error(), maxQuotedCause))
	}
	if int64(len(raw)) > maxBytes {
		return fmt.Errorf("%w of %d bytes", ErrTooLarge, maxBytes)
	}
	page.MediaType = mt
	page.ContentKind = kind
	if kind == TextDocument {
		text, err := decodeText(raw, cs)
		if err != nil {
			return err
		}
		if strings.ContainsRune(text, 0) {
			return fmt.Errorf("%w (declared as %q)", ErrNotText, truncateForMessage(mt))
		}
		page.Markdown = normalizeText(text)
		return nil
	}
	if page.MediaType == "" {
		page.MediaType = "text/html"
	}
	ex, err := extractHTML(decodeHTML(raw, resp.Header.Get("Content-Type")), final)
	if err != nil {
		return err
	}
	page.Title, page.Description, page.Authors = ex.title, ex.description, ex.authors
	page.Language, page.Published, page.Modified = ex.language, ex.published, ex.modified
	page.Markdown = ex.markdown
	return nil
}

func truncateForMessage(s string) string { return quoteOutside(s, maxQuotedType) }

// maxEncodingLayers caps "Content-Encoding: gzip, gzip, …".
const maxEncodingLayers = 3

// decodedBody undoes the Content-Encoding (gzip, deflate, br), outermost
// last in the header, as RFC 9110 lists them in the order applied.
func decodedBody(h http.Header, body io.Reader) (io.Reader, error) {
	var encs []string
	for _, v := range h.Values("Content-Encoding") {
		for _, e := range strings.Split(v, ",") {
			if e = strings.ToLower(strings.TrimSpace(e)); e != "" && e != "identity" {
				encs = append(encs, e)
			}
		}
	}
	if len(encs) > maxEncodingLayers {
		return nil, fmt.Errorf("%w: more than %d content encodings", ErrDecode, maxEncodingLayers)
	}
	r := body
	for i := len(encs) - 1; i >= 0; i-- {
		switch encs[i] {
		case "gzip", "x-gzip":
			zr, err := gzip.NewReader(r)
			if errors.Is(err, ErrTooLarge) {
				return nil, err
			}
			if err != nil {
				return nil, fmt.Errorf("%w: invalid gzip data", ErrDecode)
			}
			r = zr
		case "deflate":
			r = newDeflateReader(r)
		case "br":
			r = brotli.NewReader(r)
		default:
			return nil, fmt.Errorf("%w: unsupported content encoding %q", ErrDecode, truncateForMessage(encs[i]))
		}
	}
	return r, nil
}

// newDeflateReader reads "deflate", which servers send either as zlib
// (correct) or as raw DEFLATE (common).
func newDeflateReader(r io.Reader) io.Reader {
	var head [2]byte
	n, _ := io.ReadFull(r, head[:])
	rest := io.MultiReader(bytes.NewReader(head[:n]), r)
	if n == 2 && head[0]&0x0f == 8 && (uint16(head[0])<<8|uint16(head[1]))%31 == 0 {
		zr, err := zlib.NewReader(rest)
		if err == nil {
			return zr
		}
	}
	return flate.NewReader(rest)
}

// DecodeHTML converts the bytes of an HTML page to UTF-8 the way Retrieve
// does, given the response's Content-Type (empty when there was none): a
// charset in it wins, then a byte order mark, then a meta charset or
// http-equiv Content-Type anywhere in the head, then UTF-8 when the bytes
// are valid UTF-8, else Windows-1252. Bytes that do not decode become
// U+FFFD. With ExtractHTML it is what Retrieve does with an HTML body.
func DecodeHTML(raw []byte, contentType string) string { return decodeHTML(raw, contentType) }

// decodeHTML converts an HTML body to UTF-8 with the encoding htmlEncoding
// chooses; bytes that do not decode become U+FFFD.
func decodeHTML(raw []byte, contentType string) string {
	enc, from := htmlEncoding(raw, contentType)
	if enc == xunicode.UTF8 || strings.HasSuffix(from, ":utf-8") {
		// Valid UTF-8 needs no decoder, only the BOM dropped and stray
		// bytes replaced.
		b := bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))
		if utf8.Valid(b) {
			return string(b)
		}
		return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
	}
	out, err := enc.NewDecoder().Bytes(raw)
	if err != nil {
		return strings.ToValidUTF8(string(raw), "\uFFFD")
	}
	return strings.TrimPrefix(string(out), "\uFEFF")
}

// decodeText converts a text document to UTF-8: the charset from the
// header, else a UTF-16 BOM, else UTF-8. A UTF-8 BOM is dropped.
func decodeText(raw []byte, cs string) (string, error) {
	var enc encoding.Encoding
	switch {
	case cs != "":
		if e, err := htmlindex.Get(cs); err == nil {
			enc = e
		}
	case bytes.HasPrefix(raw, []byte{0xFE, 0xFF}), bytes.HasPrefix(raw, []byte{0xFF, 0xFE}):
		enc = xunicode.UTF16(xunicode.BigEndian, xunicode.ExpectBOM)
	}
	var text string
	if enc == nil || enc == xunicode.UTF8 {
		text = string(raw)
	} else {
		// UTF-16 with a BOM honours the BOM whatever the label says.
		if bytes.HasPrefix(raw, []byte{0xFE, 0xFF}) || bytes.HasPrefix(raw, []byte{0xFF, 0xFE}) {
			enc = xunicode.UTF16(xunicode.BigEndian, xunicode.ExpectBOM)
		}
		out, err := enc.NewDecoder().Bytes(raw)
		if err != nil {
			return "", fmt.Errorf("%w: not valid %s", ErrDecode, truncateForMessage(cs))
		}
		text = string(out)
	}
	text = strings.TrimPrefix(text, "\uFEFF")
	return strings.ToValidUTF8(text, "\uFFFD"), nil
}

// normalizeText unifies line endings to LF, trims the end and drops leading
// blank lines while keeping the first line's indentation.
func normalizeText(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = strings.TrimRightFunc(s, unicode.IsSpace)
	for {
		line, rest, found := strings.Cut(s, "\n")
		if !found || strings.TrimFunc(line, unicode.IsSpace) != "" {
			break
		}
		s = rest
	}
	if strings.TrimFunc(s, unicode.IsSpace) == "" {
		return ""
	}
	return s
}
