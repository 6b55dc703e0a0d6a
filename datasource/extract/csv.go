package extract

import (
	"encoding/csv"
	"errors"
	"io"
	"strings"
)

// csvText reads a table: one line per row, its cells separated by " | ",
// empty rows left out. Quoting may be loose, rows may differ in length.
func csvText(f Format, data []byte) (*Doc, error) {
	s, ok := decodeText(data)
	if !ok {
		return nil, permanent("the file is not text (it holds binary data)", ErrUnsupported)
	}
	r := csv.NewReader(strings.NewReader(s))
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	r.ReuseRecord = true
	if f == TSV {
		r.Comma = '\t'
	} else if sep := guessSeparator(s); sep != 0 {
		r.Comma = sep
	}
	var b strings.Builder
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, permanent("the table could not be read", err)
		}
		writeRow(&b, rec)
	}
	return &Doc{Sections: []Section{{Text: b.String()}}}, nil
}

// writeRow writes the non-empty cells of a row as one line.
func writeRow(b *strings.Builder, cells []string) {
	n := 0
	for _, c := range cells {
		c = strings.Join(strings.Fields(c), " ")
		if c == "" {
			continue
		}
		if n > 0 {
			b.WriteString(" | ")
		}
		b.WriteString(c)
		n++
	}
	if n > 0 {
		b.WriteByte('\n')
	}
}

// guessSeparator picks ';' for a "CSV" whose first line has more
// semicolons than commas (the usual export where the comma is the decimal
// mark); 0 keeps the comma.
func guessSeparator(s string) rune {
	line, _, _ := strings.Cut(s, "\n")
	if strings.Count(line, ";") > strings.Count(line, ",") {
		return ';'
	}
	return 0
}
