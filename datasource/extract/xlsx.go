package extract

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/thedatashed/xlsxreader"
)

// maxSheetCells bounds the cells read of one workbook.
const maxSheetCells = 2_000_000

// cfbMagic starts a Compound File: an encrypted OOXML workbook is stored as
// one, never as a ZIP.
var cfbMagic = []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}

// xlsxText reads each sheet with github.com/thedatashed/xlsxreader, one
// section per sheet, each row a line of its non-empty cells' values
// separated by " | " (dates as ISO 8601). Before the reader sees the
// archive, every member's declared size is held to MaxUnpacked and their
// sum to 4×MaxUnpacked; archive/zip refuses a member that unpacks to more
// than it declares, so the declared sizes bound what is read.
func xlsxText(ctx context.Context, data []byte, lim Limits) (*Doc, error) {
	if bytes.HasPrefix(data, cfbMagic) {
		return nil, permanent("the workbook is protected by a password or saved in the old XLS format", nil)
	}
	src := &stoppableReaderAt{r: bytes.NewReader(data)}
	zr, err := zip.NewReader(src, int64(len(data)))
	if err != nil {
		return nil, permanent("the file is damaged or not a valid XLSX file", err)
	}
	if len(zr.File) > maxZipEntries {
		return nil, permanent(fmt.Sprintf("the XLSX file has more than %d parts", maxZipEntries), nil)
	}
	var total uint64
	for _, f := range zr.File {
		total += f.UncompressedSize64
		if f.UncompressedSize64 > uint64(lim.MaxUnpacked) || total > 4*uint64(lim.MaxUnpacked) {
			return nil, permanent("the workbook is too large when unpacked", errTooLarge{f.Name, lim.MaxUnpacked})
		}
	}
	x, err := xlsxreader.NewReaderZip(zr)
	if err != nil {
		return nil, permanent("the file is damaged or not a valid XLSX file", err)
	}
	d := &Doc{}
	d.Title = zipDocOf(zr, lim).coreTitle("docProps/core.xml")
	cellsRead := 0
	for _, name := range x.Sheets {
		if cellsRead >= maxSheetCells {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, &Error{Reason: "cancelled", Err: err}
		}
		var b strings.Builder
		cols := make([]string, 0, 16)
		rows := x.ReadRows(name)
		// The reader's goroutine ends when its sheet does; to end it early,
		// reads of the archive fail from then on and what it still sends is
		// drained.
		stop := func() {
			src.stop.Store(true)
			for range rows {
			}
		}
		for row := range rows {
			if row.Error != nil {
				stop()
				return nil, permanent("a sheet of the workbook could not be read", row.Error)
			}
			if err := ctx.Err(); err != nil {
				stop()
				return nil, &Error{Reason: "cancelled", Err: err}
			}
			if cellsRead >= maxSheetCells {
				stop()
				break
			}
			cols = cols[:0]
			for _, c := range row.Cells {
				cols = append(cols, c.Value)
			}
			cellsRead += len(cols)
			writeRow(&b, cols)
		}
		text := b.String()
		if text != "" {
			text = "Sheet: " + name + "\n" + text
		}
		d.Sections = append(d.Sections, Section{Text: text, Label: name})
	}
	return d, nil
}

// stoppableReaderAt reads the archive until it is stopped.
type stoppableReaderAt struct {
	r    *bytes.Reader
	stop atomic.Bool
}

func (s *stoppableReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if s.stop.Load() {
		return 0, errors.New("reading the workbook was stopped")
	}
	return s.r.ReadAt(p, off)
}
