package local

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stewardhq/steward/datasource/extract"
)

// Real-format documents for the benchmarks, made from generated text: a
// DOCX (Office Open XML, the parts Word writes at least) and a PDF 1.4
// with Helvetica text on Letter pages, so the benchmarks run the DOCX and
// PDF extractors on many distinct files rather than on copies of one.

// writeDOCX writes a DOCX with a title (its first paragraph in the style
// Title and in the core properties) and the paragraphs.
func writeDOCX(path, title string, paras []string) error {
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	add := func(name, body string) error {
		w, err := z.Create(name)
		if err != nil {
			return err
		}
		_, err = w.Write([]byte(body))
		return err
	}
	var doc strings.Builder
	doc.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n")
	doc.WriteString(`<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`)
	doc.WriteString(`<w:p><w:pPr><w:pStyle w:val="Title"/></w:pPr><w:r><w:t>` + html.EscapeString(title) + `</w:t></w:r></w:p>`)
	for _, p := range paras {
		doc.WriteString(`<w:p><w:r><w:t xml:space="preserve">` + html.EscapeString(p) + `</w:t></w:r></w:p>`)
	}
	doc.WriteString(`<w:sectPr/></w:body></w:document>`)
	for _, part := range []struct{ name, body string }{
		{"[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/></Types>`},
		{"_rels/.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/></Relationships>`},
		{"docProps/core.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>` + html.EscapeString(title) + `</dc:title></cp:coreProperties>`},
		{"word/document.xml", doc.String()},
	} {
		if err := add(part.name, part.body); err != nil {
			return err
		}
	}
	if err := z.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// pdfEscape escapes a PDF literal string.
func pdfEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `(`, `\(`, `)`, `\)`).Replace(s)
}

// wrapLines cuts paragraphs into lines of at most width bytes, a blank
// line between paragraphs.
func wrapLines(paras []string, width int) []string {
	var out []string
	for i, p := range paras {
		if i > 0 {
			out = append(out, "")
		}
		line := ""
		for _, w := range strings.Fields(p) {
			if line != "" && len(line)+1+len(w) > width {
				out = append(out, line)
				line = ""
			}
			if line != "" {
				line += " "
			}
			line += w
		}
		if line != "" {
			out = append(out, line)
		}
	}
	return out
}

// writePDF writes a PDF 1.4 with the title in its document information and
// the paragraphs set in 10-point Helvetica, 60 lines a page.
func writePDF(path, title string, paras []string) error {
	lines := wrapLines(paras, 95)
	const perPage = 60
	var pages [][]string
	for len(lines) > 0 {
		n := min(perPage, len(lines))
		pages = append(pages, lines[:n])
		lines = lines[n:]
	}
	if len(pages) == 0 {
		pages = [][]string{{title}}
	}
	// Objects: 1 catalog, 2 pages, 3 font, 4 info, then a page and its
	// content stream for each page.
	var objs []string
	kids := make([]string, len(pages))
	for i := range pages {
		kids[i] = fmt.Sprintf("%d 0 R", 5+2*i)
	}
	objs = append(objs,
		"<< /Type /Catalog /Pages 2 0 R >>",
		fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages)),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		"<< /Title ("+pdfEscape(title)+") /Producer (steward benchmark) >>")
	for i, pg := range pages {
		var s strings.Builder
		s.WriteString("BT /F1 10 Tf 12 TL 54 740 Td\n")
		for _, l := range pg {
			s.WriteString("(" + pdfEscape(l) + ") Tj T*\n")
		}
		s.WriteString("ET\n")
		objs = append(objs,
			fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 6+2*i),
			fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", s.Len(), s.String()))
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R /Info 4 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// TestGeneratedDocumentsExtract checks that the benchmarks' DOCX and PDF
// files are read by the extractors as the documents they were made from,
// so a benchmark measures extraction and not a failure path.
func TestGeneratedDocumentsExtract(t *testing.T) {
	dir := t.TempDir()
	paras := []string{"the first paragraph (with parentheses) and a back\\slash", strings.Repeat("filler words here ", 400), "the last paragraph"}
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		write func(string, string, []string) error
	}{{"g.docx", writeDOCX}, {"g.pdf", writePDF}} {
		p := filepath.Join(dir, tc.name)
		if err := tc.write(p, "A generated title", paras); err != nil {
			t.Fatal(err)
		}
		doc, err := extract.File(ctx, p, extract.Limits{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		text := doc.Text()
		if doc.Title != "A generated title" {
			t.Errorf("%s: title %q", tc.name, doc.Title)
		}
		for _, want := range []string{"the first paragraph (with parentheses) and a back\\slash", "the last paragraph", "filler words here filler"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: text lacks %q:\n%.300s", tc.name, want, text)
			}
		}
		if tc.name == "g.pdf" && len(doc.Sections) < 2 {
			t.Errorf("pdf: %d pages, want several", len(doc.Sections))
		}
	}
}
