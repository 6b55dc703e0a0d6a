package extract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"
)

// Kind is what sort of document a file is; it decides how the text is cut
// into chunks and how a passage is described.
type Kind string

// The kinds of document.
const (
	Document     Kind = "document"
	Spreadsheet  Kind = "spreadsheet"
	Presentation Kind = "presentation"
	Website      Kind = "website"
	Code         Kind = "code"
)

// Format is a file format this package reads.
type Format string

// The formats.
const (
	Text     Format = "text"
	Markdown Format = "markdown"
	Source   Format = "code"
	HTML     Format = "html"
	PDF      Format = "pdf"
	DOCX     Format = "docx"
	PPTX     Format = "pptx"
	XLSX     Format = "xlsx"
	ODT      Format = "odt"
	ODS      Format = "ods"
	ODP      Format = "odp"
	CSV      Format = "csv"
	TSV      Format = "tsv"
)

// Kind is the kind of document a format holds.
func (f Format) Kind() Kind {
	switch f {
	case XLSX, ODS, CSV, TSV:
		return Spreadsheet
	case PPTX, ODP:
		return Presentation
	case HTML:
		return Website
	case Source:
		return Code
	}
	return Document
}

// Section is a part of a document's text: a page, a slide, a sheet, or
// the whole text of a format without parts.
type Section struct {
	Text string
	// Page is the page or slide number from 1; 0 for a format without
	// pages.
	Page int
	// Label names the section where the format does (a sheet's name).
	Label string
}

// Doc is the text of one file.
type Doc struct {
	Format Format
	Kind   Kind
	// Title is the title the file names (document properties, HTML title,
	// first Markdown heading); empty when it names none.
	Title    string
	Sections []Section
	// Truncated tells that the text was longer than Limits.MaxText and
	// only its beginning was kept.
	Truncated bool
}

// Text joins the sections' texts with blank lines.
func (d *Doc) Text() string {
	parts := make([]string, 0, len(d.Sections))
	for _, s := range d.Sections {
		if s.Text != "" {
			parts = append(parts, s.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}

// Limits bound what reading one file may cost.
type Limits struct {
	// MaxFile is the largest file read (default DefaultMaxFile).
	MaxFile int64
	// MaxUnpacked is the most bytes one member of a ZIP-based format
	// (DOCX, XLSX, PPTX, ODF) may unpack to (default DefaultMaxUnpacked).
	MaxUnpacked int64
	// MaxText is the most bytes of text kept of one file (default
	// DefaultMaxText); the rest is dropped and Doc.Truncated set.
	MaxText int
}

// Defaults of Limits.
const (
	DefaultMaxFile     int64 = 64 << 20
	DefaultMaxUnpacked int64 = 128 << 20
	DefaultMaxText           = 16 << 20
)

func (l Limits) withDefaults() Limits {
	if l.MaxFile <= 0 {
		l.MaxFile = DefaultMaxFile
	}
	if l.MaxUnpacked <= 0 {
		l.MaxUnpacked = DefaultMaxUnpacked
	}
	if l.MaxText <= 0 {
		l.MaxText = DefaultMaxText
	}
	return l
}

// Error is why a file could not be read.
type Error struct {
	// Reason says what is wrong, for the user, without the file's content.
	Reason string
	// Permanent is true when reading the same bytes again would fail the
	// same way (a broken or encrypted file, one without text); false for
	// I/O errors, which may pass.
	Permanent bool
	Err       error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Reason + ": " + e.Err.Error()
	}
	return e.Reason
}

func (e *Error) Unwrap() error { return e.Err }

func permanent(reason string, err error) *Error {
	return &Error{Reason: reason, Permanent: true, Err: err}
}

// ErrUnsupported is wrapped by the error for a file of a format this
// package does not read.
var ErrUnsupported = errors.New("unsupported file type")

// ErrNoText is wrapped by the error for a file that holds no text (a
// scanned PDF without a text layer, an empty document).
var ErrNoText = errors.New("no text")

// sourceExt are extensions of source code and configuration files, read
// as text.
var sourceExt = sync.OnceValue(func() map[string]bool {
	return wordSet(`go rs c h cc cpp cxx hpp hh hxx cs fs vb java kt kts scala groovy py pyi rb php pl pm lua r swift m mm
		js mjs cjs jsx ts tsx vue svelte css scss sass less sql sh bash zsh fish ps1 psm1 bat cmd
		json jsonc yaml yml toml ini cfg conf properties plist xml xsd xsl gradle cmake mk proto graphql gql
		dart ex exs erl hrl hs clj cljs elm jl nim zig v sv vhd tf hcl nix dockerfile makefile`)
})

// sourceNames are file names without an extension read as code.
var sourceNames = map[string]bool{"dockerfile": true, "makefile": true, "gnumakefile": true, "jenkinsfile": true,
	"vagrantfile": true, "gemfile": true, "rakefile": true, "procfile": true, "cmakelists.txt": true}

// textExt are extensions of plain text documents.
var textExt = map[string]bool{"txt": true, "text": true, "log": true, "rst": true, "adoc": true, "asciidoc": true, "org": true,
	"tex": true, "bib": true, "sty": true, "cls": true, "srt": true, "vtt": true}

// legacy are binary formats of older office programs: reported, not read.
var legacy = map[string]string{
	"doc": "a Word 97-2003 document", "xls": "an Excel 97-2003 workbook", "ppt": "a PowerPoint 97-2003 presentation",
	"xlsb": "an Excel binary workbook", "rtf": "a Rich Text file", "odg": "an OpenDocument drawing", "pages": "a Pages document",
	"numbers": "a Numbers workbook", "key": "a Keynote presentation", "epub": "an EPUB book",
}

// ignored are extensions of files a folder is expected to hold that have
// no text to index (images, media, archives, binaries): skipped silently.
var ignored = sync.OnceValue(func() map[string]bool {
	return wordSet(`png jpg jpeg gif bmp tif tiff webp svg ico heic heif raw psd ai eps
		mp3 wav flac ogg m4a aac mp4 mov avi mkv webm wmv
		zip tar gz tgz bz2 xz 7z rar zst iso dmg
		exe dll so dylib o a lib class jar war pyc wasm bin dat db sqlite sqlite3 lnk tmp swp swo bak ds_store
		ttf otf woff woff2 eot`)
})

// Detect tells the format of a file by its name: ok is false for a file
// this package does not read. reason is set for a known format it does
// not read (an older binary office format), so the caller can tell the
// user; it is empty for files that are simply not documents (images,
// archives, binaries).
func Detect(name string) (f Format, ok bool, reason string) {
	base := strings.ToLower(filepath.Base(name))
	ext := strings.TrimPrefix(filepath.Ext(base), ".")
	if sourceNames[base] {
		return Source, true, ""
	}
	switch ext {
	case "md", "markdown", "mdown", "mkd":
		return Markdown, true, ""
	case "html", "htm", "xhtml":
		return HTML, true, ""
	case "pdf":
		return PDF, true, ""
	case "docx", "docm", "dotx":
		return DOCX, true, ""
	case "pptx", "pptm", "ppsx":
		return PPTX, true, ""
	case "xlsx", "xlsm", "xltx":
		return XLSX, true, ""
	case "odt", "ott":
		return ODT, true, ""
	case "ods", "ots":
		return ODS, true, ""
	case "odp", "otp":
		return ODP, true, ""
	case "csv":
		return CSV, true, ""
	case "tsv", "tab":
		return TSV, true, ""
	}
	if textExt[ext] {
		return Text, true, ""
	}
	if sourceExt()[ext] {
		return Source, true, ""
	}
	if what, ok := legacy[ext]; ok {
		return "", false, fmt.Sprintf("%s cannot be read: save it in a current format (DOCX, XLSX, PPTX, ODF or PDF)", what)
	}
	if ext == "" || ignored()[ext] {
		return "", false, ""
	}
	return "", false, ""
}

// File reads the text of the file at path, of the format its name says.
func File(ctx context.Context, path string, lim Limits) (*Doc, error) {
	f, ok, reason := Detect(path)
	if !ok {
		if reason == "" {
			reason = "not a document type Steward reads"
		}
		return nil, permanent(reason, ErrUnsupported)
	}
	lim = lim.withDefaults()
	fh, err := os.Open(path)
	if err != nil {
		return nil, &Error{Reason: "the file could not be opened", Err: err}
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, &Error{Reason: "the file could not be read", Err: err}
	}
	if st.Size() > lim.MaxFile {
		return nil, permanent(fmt.Sprintf("the file is larger than %s (%s)", size(lim.MaxFile), size(st.Size())), nil)
	}
	data, err := io.ReadAll(io.LimitReader(fh, lim.MaxFile+1))
	if err != nil {
		return nil, &Error{Reason: "the file could not be read", Err: err}
	}
	if int64(len(data)) > lim.MaxFile {
		return nil, permanent(fmt.Sprintf("the file is larger than %s", size(lim.MaxFile)), nil)
	}
	return Bytes(ctx, f, data, lim)
}

// Bytes reads the text of data in format f.
func Bytes(ctx context.Context, f Format, data []byte, lim Limits) (doc *Doc, err error) {
	lim = lim.withDefaults()
	if int64(len(data)) > lim.MaxFile {
		return nil, permanent(fmt.Sprintf("the file is larger than %s", size(lim.MaxFile)), nil)
	}
	// The file is hostile input to the parsers; a panic in one of them
	// fails this file, not the program.
	defer func() {
		if r := recover(); r != nil {
			doc, err = nil, permanent("the file is damaged or not a valid "+strings.ToUpper(string(f))+" file", fmt.Errorf("%v", r))
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, &Error{Reason: "cancelled", Err: err}
	}
	switch f {
	case Text, Markdown, Source:
		doc, err = plainText(f, data)
	case HTML:
		doc, err = htmlText(data)
	case PDF:
		doc, err = pdfText(ctx, data)
	case DOCX:
		doc, err = docxText(data, lim)
	case PPTX:
		doc, err = pptxText(data, lim)
	case XLSX:
		doc, err = xlsxText(ctx, data, lim)
	case ODT, ODS, ODP:
		doc, err = odfText(f, data, lim)
	case CSV, TSV:
		doc, err = csvText(f, data)
	default:
		return nil, permanent("not a document type Steward reads", ErrUnsupported)
	}
	if err != nil {
		return nil, err
	}
	doc.Format, doc.Kind = f, f.Kind()
	doc.clean(lim.MaxText)
	if len(doc.Sections) == 0 {
		return nil, permanent(noTextReason(f), ErrNoText)
	}
	return doc, nil
}

func noTextReason(f Format) string {
	if f == PDF {
		return "the PDF holds no text (a scan without a text layer?)"
	}
	return "the file holds no text"
}

// clean normalizes line ends, trims each section, drops empty ones, makes
// the text valid UTF-8 and keeps at most max bytes in all.
func (d *Doc) clean(max int) {
	d.Title = strings.TrimSpace(oneLine(d.Title))
	total := 0
	out := d.Sections[:0]
	for _, s := range d.Sections {
		t := s.Text
		if !utf8.ValidString(t) {
			t = strings.ToValidUTF8(t, "\uFFFD")
		}
		t = strings.ReplaceAll(t, "\r\n", "\n")
		t = strings.ReplaceAll(t, "\r", "\n")
		t = strings.ReplaceAll(t, "\x00", "")
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		if total+len(t) > max {
			cut := max - total
			for cut > 0 && !utf8.RuneStart(t[cut]) {
				cut--
			}
			t = strings.TrimSpace(t[:cut])
			d.Truncated = true
			if t != "" {
				s.Text = t
				out = append(out, s)
			}
			break
		}
		total += len(t)
		s.Text = t
		out = append(out, s)
	}
	d.Sections = out
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// isBinary tells data that is no text: a NUL byte early on.
func isBinary(data []byte) bool {
	head := data[:min(len(data), 8000)]
	return bytes.IndexByte(head, 0) >= 0
}

// wordSet is the set of the space-separated words of s.
func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}
