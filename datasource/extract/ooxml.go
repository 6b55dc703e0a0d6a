package extract

import (
	"encoding/xml"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// docxText reads word/document.xml: one paragraph per line, headings
// (styles Title and Heading1-9) marked as Markdown headings, table cells
// separated by " | " and rows by lines, tabs and breaks kept; then the
// footnotes and endnotes.
func docxText(data []byte, lim Limits) (*Doc, error) {
	z, err := openZip(data, "DOCX", lim)
	if err != nil {
		return nil, err
	}
	d := &Doc{Title: z.coreTitle("docProps/core.xml")}
	var all strings.Builder
	for i, part := range []string{"word/document.xml", "word/footnotes.xml", "word/endnotes.xml"} {
		text, ok, err := wordPart(z, part)
		if err != nil {
			return nil, err
		}
		if !ok && i == 0 {
			return nil, permanent("the file is damaged or not a valid DOCX file (it has no word/document.xml)", nil)
		}
		if text != "" {
			all.WriteString(text)
			all.WriteString("\n\n")
		}
	}
	d.Sections = []Section{{Text: all.String()}}
	return d, nil
}

func wordPart(z *zipDoc, name string) (string, bool, error) {
	var b, para strings.Builder
	heading := 0
	inText := false
	cells := 0
	ok, err := z.walk(name, func(e xml.StartElement) {
		switch e.Name.Local {
		case "p":
			para.Reset()
			heading = 0
		case "pStyle":
			heading = headingLevel(attr(e, "val"))
		case "t":
			inText = true
		case "tab":
			para.WriteByte('\t')
		case "br", "cr":
			para.WriteByte('\n')
		case "tr":
			cells = 0
		case "tc":
			if cells > 0 {
				b.WriteString(" | ")
			}
			cells++
		}
	}, func(e xml.EndElement) {
		switch e.Name.Local {
		case "t":
			inText = false
		case "p":
			t := strings.TrimSpace(para.String())
			para.Reset()
			if t == "" {
				return
			}
			if cells > 0 {
				// Inside a table cell: the cell's paragraphs share a line.
				b.WriteString(t + " ")
				return
			}
			if heading > 0 {
				b.WriteString("\n" + strings.Repeat("#", heading) + " ")
			}
			b.WriteString(t)
			b.WriteString("\n\n")
		case "tr":
			b.WriteString("\n")
			cells = 0
		case "tbl":
			b.WriteString("\n")
		}
	}, func(t []byte) {
		if inText {
			para.Write(t)
		}
	})
	return b.String(), ok, err
}

var headingStyle = lazyRegexp(`(?i)^(?:heading|berschrift|titre|titolo|kop)\s*([1-9])$`)

// headingLevel maps a paragraph style to a heading level (0: none).
func headingLevel(style string) int {
	s := strings.ReplaceAll(style, " ", "")
	if strings.EqualFold(s, "Title") {
		return 1
	}
	if m := headingStyle().FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

var slideName = lazyRegexp(`^ppt/slides/slide(\d+)\.xml$`)

// pptxText reads the slides in the presentation's order, one section per
// slide, each paragraph a line, with the slide's notes after it.
func pptxText(data []byte, lim Limits) (*Doc, error) {
	z, err := openZip(data, "PPTX", lim)
	if err != nil {
		return nil, err
	}
	d := &Doc{Title: z.coreTitle("docProps/core.xml")}
	slides := slideOrder(z)
	if len(slides) == 0 {
		return nil, permanent("the presentation has no slides", ErrNoText)
	}
	for i, s := range slides {
		text, _, err := drawingText(z, s)
		if err != nil {
			return nil, err
		}
		if notes := slideNotes(z, s); notes != "" {
			n, _, err := drawingText(z, notes)
			if err != nil {
				return nil, err
			}
			if strings.TrimSpace(n) != "" {
				text += "\n\nNotes: " + n
			}
		}
		d.Sections = append(d.Sections, Section{Text: text, Page: i + 1})
	}
	return d, nil
}

// slideOrder lists the slide members in the order of presentation.xml,
// else by their numbers.
func slideOrder(z *zipDoc) []string {
	rels := relations(z, "ppt/_rels/presentation.xml.rels", "ppt")
	var ordered []string
	_, _ = z.walk("ppt/presentation.xml", func(e xml.StartElement) {
		if e.Name.Local == "sldId" {
			if t, ok := rels[attr(e, "id")]; ok {
				if _, exists := z.files[t]; exists {
					ordered = append(ordered, t)
				}
			}
		}
	}, nil, nil)
	if len(ordered) > 0 {
		return ordered
	}
	type num struct {
		name string
		n    int
	}
	var ns []num
	for name := range z.files {
		if m := slideName().FindStringSubmatch(name); m != nil {
			n, _ := strconv.Atoi(m[1])
			ns = append(ns, num{name, n})
		}
	}
	sort.Slice(ns, func(i, j int) bool { return ns[i].n < ns[j].n })
	for _, n := range ns {
		ordered = append(ordered, n.name)
	}
	return ordered
}

// relations maps the relationship IDs of a .rels member to member names
// resolved against dir.
func relations(z *zipDoc, name, dir string) map[string]string {
	out := map[string]string{}
	_, _ = z.walk(name, func(e xml.StartElement) {
		if e.Name.Local == "Relationship" && attr(e, "TargetMode") != "External" {
			t := attr(e, "Target")
			if strings.HasPrefix(t, "/") {
				t = strings.TrimPrefix(path.Clean(t), "/")
			} else {
				t = strings.TrimPrefix(path.Clean(path.Join("/", dir, t)), "/")
			}
			out[attr(e, "Id")] = t
		}
	}, nil, nil)
	return out
}

// slideNotes returns the notes member of a slide, or "".
func slideNotes(z *zipDoc, slide string) string {
	dir, file := path.Split(slide)
	for id, t := range relations(z, dir+"_rels/"+file+".rels", strings.TrimSuffix(dir, "/")) {
		_ = id
		if strings.Contains(t, "notesSlide") {
			return t
		}
	}
	return ""
}

// drawingText reads the DrawingML text of a member: a:p paragraphs as
// lines, a:t runs, a:br breaks; a table's cells (a:tc) separated by " | ".
func drawingText(z *zipDoc, name string) (string, bool, error) {
	var b, para strings.Builder
	inText := false
	cells := 0
	ok, err := z.walk(name, func(e xml.StartElement) {
		switch e.Name.Local {
		case "t":
			inText = e.Name.Space == "a"
		case "br":
			para.WriteByte('\n')
		case "tr":
			cells = 0
		case "tc":
			if cells > 0 {
				b.WriteString(" | ")
			}
			cells++
		case "sldNum", "fld":
			// Slide numbers and date fields are no content.
		}
	}, func(e xml.EndElement) {
		switch e.Name.Local {
		case "t":
			inText = false
		case "p":
			if e.Name.Space != "a" {
				return
			}
			t := strings.TrimSpace(para.String())
			para.Reset()
			if t == "" {
				return
			}
			if cells > 0 {
				b.WriteString(t + " ")
				return
			}
			b.WriteString(t)
			b.WriteByte('\n')
		case "tr":
			b.WriteByte('\n')
			cells = 0
		}
	}, func(t []byte) {
		if inText {
			para.Write(t)
		}
	})
	return b.String(), ok, err
}

// lazyRegexp compiles expr on first use, so that loading the package
// costs nothing for programs that never read an Office document.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
