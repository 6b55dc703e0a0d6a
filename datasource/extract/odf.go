package extract

import (
	"encoding/xml"
	"strconv"
	"strings"
)

// odfText reads content.xml of an OpenDocument file: text:h headings as
// Markdown headings, text:p paragraphs as lines, table rows as lines of
// cells separated by " | " (each sheet of a spreadsheet one section), each
// page (slide) of a presentation one section.
func odfText(f Format, data []byte, lim Limits) (*Doc, error) {
	what := strings.ToUpper(string(f))
	z, err := openZip(data, what, lim)
	if err != nil {
		return nil, err
	}
	d := &Doc{Title: z.coreTitle("meta.xml")}
	var b, para strings.Builder
	var sections []Section
	flush := func(label string, page int) {
		if strings.TrimSpace(b.String()) != "" {
			sections = append(sections, Section{Text: b.String(), Label: label, Page: page})
		}
		b.Reset()
	}
	depth := 0 // nesting of text:p / text:h (notes and frames nest them)
	heading := 0
	cells := 0
	sheet, slide := "", 0
	inAnnotation := 0
	ok, err := z.walk("content.xml", func(e xml.StartElement) {
		switch e.Name.Space + ":" + e.Name.Local {
		case "text:p", "text:h":
			if depth == 0 {
				para.Reset()
				heading = 0
				if e.Name.Local == "h" {
					heading = 1
					if n, err := strconv.Atoi(attr(e, "outline-level")); err == nil && n >= 1 && n <= 6 {
						heading = n
					}
				}
			}
			depth++
		case "text:s":
			n, err := strconv.Atoi(attr(e, "c"))
			if err != nil || n < 1 {
				n = 1
			}
			para.WriteString(strings.Repeat(" ", min(n, 16)))
		case "text:tab":
			para.WriteByte('\t')
		case "text:line-break":
			para.WriteByte('\n')
		case "office:annotation":
			inAnnotation++
		case "table:table":
			if f == ODS {
				flush(sheet, 0)
				sheet = attr(e, "name")
			}
		case "table:table-row":
			cells = 0
		case "table:table-cell", "table:covered-table-cell":
			cells++
		case "draw:page":
			if f == ODP {
				flush("", slide)
				slide++
			}
		}
	}, func(e xml.EndElement) {
		switch e.Name.Space + ":" + e.Name.Local {
		case "text:p", "text:h":
			depth--
			if depth > 0 || inAnnotation > 0 {
				return
			}
			t := strings.TrimSpace(para.String())
			para.Reset()
			if t == "" {
				return
			}
			if cells > 0 {
				if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
					b.WriteString(" | ")
				}
				b.WriteString(t)
				return
			}
			if heading > 0 {
				b.WriteString("\n" + strings.Repeat("#", heading) + " ")
			}
			b.WriteString(t)
			b.WriteString("\n\n")
		case "office:annotation":
			inAnnotation--
		case "table:table-row":
			if cells > 0 && b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
				b.WriteByte('\n')
			}
			cells = 0
		case "table:table":
			if f == ODS {
				flush(sheet, 0)
			}
		case "draw:page":
			if f == ODP {
				flush("", slide)
			}
		}
	}, func(t []byte) {
		if depth > 0 && inAnnotation == 0 {
			para.Write(t)
		}
	})
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, permanent("the file is damaged or not a valid "+what+" file (it has no content.xml)", nil)
	}
	flush(sheet, slide)
	if f == ODT {
		// One text: the sections only mark tables of a spreadsheet or
		// slides.
		var all []string
		for _, s := range sections {
			all = append(all, s.Text)
		}
		sections = []Section{{Text: strings.Join(all, "\n")}}
	}
	d.Sections = sections
	return d, nil
}
