package extract

import (
	"bytes"
	"context"
	"errors"
	"strings"

	"github.com/xuri/excelize/v2"
)

// maxSheetCells bounds the cells read of one workbook.
const maxSheetCells = 2_000_000

// xlsxText reads each sheet with github.com/xuri/excelize/v2 (its unpack
// limits set from Limits), one section per sheet, each row a line of its
// non-empty cells' shown values separated by " | ".
func xlsxText(ctx context.Context, data []byte, lim Limits) (*Doc, error) {
	f, err := excelize.OpenReader(bytes.NewReader(data), excelize.Options{
		UnzipSizeLimit:    4 * lim.MaxUnpacked,
		UnzipXMLSizeLimit: lim.MaxUnpacked,
	})
	if err != nil {
		switch {
		case errors.Is(err, excelize.ErrWorkbookFileFormat):
			return nil, permanent("the file is damaged or not a valid XLSX file", err)
		case strings.Contains(strings.ToLower(err.Error()), "password"), strings.Contains(strings.ToLower(err.Error()), "encrypt"):
			return nil, permanent("the workbook is protected by a password", err)
		case strings.Contains(err.Error(), "unzip size") || strings.Contains(err.Error(), "size limit"):
			return nil, permanent("the workbook is too large when unpacked", err)
		}
		return nil, permanent("the file is damaged or not a valid XLSX file", err)
	}
	defer f.Close()
	d := &Doc{}
	if p, err := f.GetDocProps(); err == nil && p != nil {
		d.Title = p.Title
	}
	cellsRead := 0
	for _, name := range f.GetSheetList() {
		if err := ctx.Err(); err != nil {
			return nil, &Error{Reason: "cancelled", Err: err}
		}
		rows, err := f.Rows(name)
		if err != nil {
			// A chart sheet has no rows.
			continue
		}
		var b strings.Builder
		for rows.Next() && cellsRead < maxSheetCells {
			cols, err := rows.Columns()
			if err != nil {
				rows.Close()
				return nil, permanent("a sheet of the workbook could not be read", err)
			}
			cellsRead += len(cols)
			writeRow(&b, cols)
		}
		if err := rows.Error(); err != nil {
			rows.Close()
			return nil, permanent("a sheet of the workbook could not be read", err)
		}
		rows.Close()
		text := b.String()
		if text != "" {
			text = "Sheet: " + name + "\n" + text
		}
		d.Sections = append(d.Sections, Section{Text: text, Label: name})
	}
	return d, nil
}
