package extract

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The fixtures are real documents from the Apache Tika repository (see
// testdata/tika/PROVENANCE.md); each must give its text, title and kind.
func TestRealDocuments(t *testing.T) {
	for _, tc := range []struct {
		file  string
		kind  Kind
		title string
		want  []string
		pages int // sections expected, 0: do not check
	}{
		{"testPDF.pdf", Document, "Apache Tika - Apache Tika", []string{"Apache Tika is a toolkit for detecting and extracting metadata and structured text content", "sponsored by the Apache Lucene PMC"}, 1},
		{"testWORD.docx", Document, "Sample Word Document", []string{"# Sample Word Document Title", "# Heading Level 1"}, 1},
		{"testPPT.pptx", Presentation, "Attachment Test", []string{"This is a test file data with the same content as every other file being tested for tika content parsing", "Watershed"}, 3},
		{"testEXCEL.xlsx", Spreadsheet, "Simple Excel document", []string{"Sheet: Feuil1", "Sample Excel Worksheet - Numbers and their Squares", "15 | 225"}, 0},
		{"testOpenOffice2.odt", Document, "", []string{"This is a sample Open Office document, written in NeoOffice 2.2.1 for the Mac."}, 1},
		{"testFooter.ods", Spreadsheet, "", []string{"Data 1 | Data 2", "Data 3 | Data 4"}, 0},
		{"LibreOfficeImpress_odp_1.3.odp", Presentation, "Beehive", []string{"An example Impress file"}, 1},
		{"testCSV.csv", Spreadsheet, "", []string{"Number | Square", "12 | 144", "Written and saved in Apache OpenOffice."}, 1},
		{"testHTML.html", Website, "Test Indexation Html", []string{"du fichier"}, 1},
		{"README.md", Document, "Welcome to Apache Tika <https://tika.apache.org/>", []string{"Apache Tika"}, 1},
		{"Tika.java", Code, "", []string{"public class Tika"}, 1},
	} {
		t.Run(tc.file, func(t *testing.T) {
			d, err := File(context.Background(), filepath.Join("testdata", "tika", tc.file), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Kind != tc.kind || d.Title != tc.title {
				t.Errorf("kind %q title %q, want %q %q", d.Kind, d.Title, tc.kind, tc.title)
			}
			text := d.Text()
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("text lacks %q:\n%s", w, text[:min(len(text), 1500)])
				}
			}
			if tc.pages > 0 && len(d.Sections) != tc.pages {
				t.Errorf("%d sections, want %d", len(d.Sections), tc.pages)
			}
			if d.Kind == Presentation || d.Format == PDF {
				for i, s := range d.Sections {
					if s.Page != i+1 {
						t.Errorf("section %d has page %d", i, s.Page)
					}
				}
			}
		})
	}
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		name   string
		f      Format
		ok     bool
		reason string
	}{
		{"a/b/Report.PDF", PDF, true, ""},
		{"notes.md", Markdown, true, ""},
		{"main.go", Source, true, ""},
		{"Dockerfile", Source, true, ""},
		{"thesis.tex", Text, true, ""},
		{"table.tsv", TSV, true, ""},
		{"old.doc", "", false, "Word 97-2003"},
		{"old.xls", "", false, "save it in a current format"},
		{"photo.jpg", "", false, ""},
		{"archive.zip", "", false, ""},
		{"noext", "", false, ""},
	} {
		f, ok, reason := Detect(tc.name)
		if f != tc.f || ok != tc.ok || !strings.Contains(reason, tc.reason) || (tc.reason == "" && reason != "") {
			t.Errorf("Detect(%q) = %q %v %q", tc.name, f, ok, reason)
		}
	}
}

func TestTextEncodings(t *testing.T) {
	ctx := context.Background()
	utf16 := []byte{0xFF, 0xFE}
	for _, r := range "Grüße aus Köln" {
		utf16 = append(utf16, byte(r), byte(r>>8))
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"utf8 bom", append([]byte{0xEF, 0xBB, 0xBF}, "Grüße"...), "Grüße"},
		{"utf16le", utf16, "Grüße aus Köln"},
		{"latin1", []byte("Gr\xfc\xdfe \x80"), "Grüße €"},
		{"crlf", []byte("a\r\nb\rc"), "a\nb\nc"},
	} {
		d, err := Bytes(ctx, Text, tc.data, Limits{})
		if err != nil || d.Text() != tc.want {
			t.Errorf("%s: %q %v, want %q", tc.name, d.Text(), err, tc.want)
		}
	}
	if _, err := Bytes(ctx, Source, []byte("ELF\x00\x01\x02binary"), Limits{}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("binary as code: %v", err)
	}
	d, err := Bytes(ctx, CSV, []byte("Name;Amount\nBeer;1,50\n;;\n"), Limits{})
	if err != nil || d.Text() != "Name | Amount\nBeer | 1,50" {
		t.Errorf("semicolon CSV: %q %v", d.Text(), err)
	}
	d, err = Bytes(ctx, Markdown, []byte("Intro\n\nTitle here\n==========\n\ntext"), Limits{})
	if err != nil || d.Title != "Title here" {
		t.Errorf("setext title: %q %v", d.Title, err)
	}
}

func TestBounds(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	big := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(big, bytes.Repeat([]byte("word "), 3000), 0o600); err != nil {
		t.Fatal(err)
	}
	var e *Error
	if _, err := File(ctx, big, Limits{MaxFile: 1000}); !errors.As(err, &e) || !e.Permanent || !strings.Contains(e.Reason, "larger than") {
		t.Errorf("too large: %v", err)
	}
	d, err := File(ctx, big, Limits{MaxText: 1001})
	if err != nil || !d.Truncated || len(d.Text()) > 1001 {
		t.Errorf("truncated: %v %v %d", err, d.Truncated, len(d.Text()))
	}
	// A DOCX whose document.xml unpacks to 64 MiB from a few KiB.
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("word/document.xml")
	_, _ = w.Write([]byte(`<w:document><w:body><w:p><w:r><w:t>`))
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	for range 64 {
		_, _ = w.Write(chunk)
	}
	_, _ = w.Write([]byte(`</w:t></w:r></w:p></w:body></w:document>`))
	_ = zw.Close()
	if buf.Len() > 1<<20 {
		t.Fatalf("bomb is %d bytes", buf.Len())
	}
	if _, err := Bytes(ctx, DOCX, buf.Bytes(), Limits{MaxUnpacked: 8 << 20}); !errors.As(err, &e) || !e.Permanent || !strings.Contains(e.Reason, "too large when unpacked") {
		t.Errorf("zip bomb: %v", err)
	}
	// The same bomb as a workbook's sheet is refused before it is parsed.
	buf.Reset()
	zw = zip.NewWriter(&buf)
	w, _ = zw.Create("xl/worksheets/sheet1.xml")
	_, _ = w.Write([]byte(`<worksheet><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>`))
	for range 64 {
		_, _ = w.Write(chunk)
	}
	_, _ = w.Write([]byte(`</t></is></c></row></sheetData></worksheet>`))
	_ = zw.Close()
	if _, err := Bytes(ctx, XLSX, buf.Bytes(), Limits{MaxUnpacked: 8 << 20}); !errors.As(err, &e) || !e.Permanent || !strings.Contains(e.Reason, "too large when unpacked") {
		t.Errorf("workbook bomb: %v", err)
	}
	if _, err := Bytes(ctx, XLSX, append(append([]byte{}, cfbMagic...), make([]byte, 512)...), Limits{}); !errors.As(err, &e) || !e.Permanent || !strings.Contains(e.Reason, "password") {
		t.Errorf("encrypted workbook: %v", err)
	}
	for _, f := range []Format{DOCX, PPTX, XLSX, ODT, PDF} {
		if _, err := Bytes(ctx, f, []byte("not this format at all"), Limits{}); !errors.As(err, &e) || !e.Permanent || !strings.Contains(e.Reason, "damaged or not a valid") {
			t.Errorf("%s garbage: %v", f, err)
		}
	}
	if _, err := File(ctx, filepath.Join(dir, "missing.pdf"), Limits{}); !errors.As(err, &e) || e.Permanent {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Bytes(ctx, Text, []byte("  \n\n "), Limits{}); !errors.Is(err, ErrNoText) {
		t.Errorf("empty: %v", err)
	}
}

// FuzzBytes feeds every format's reader with mutations of the fixtures:
// none may panic, and each answer is text or an *Error.
func FuzzBytes(f *testing.F) {
	files, _ := filepath.Glob("testdata/tika/*")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && len(b) < 40<<10 {
			f.Add(b)
		}
	}
	formats := []Format{Text, Markdown, HTML, PDF, DOCX, PPTX, XLSX, ODT, ODS, ODP, CSV}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, fm := range formats {
			d, err := Bytes(context.Background(), fm, data, Limits{MaxUnpacked: 1 << 20, MaxText: 1 << 16})
			if err != nil {
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("%s: error %T %v is no *Error", fm, err, err)
				}
				continue
			}
			if len(d.Text()) > 1<<16+1000 {
				t.Fatalf("%s: %d bytes of text", fm, len(d.Text()))
			}
		}
	})
}
