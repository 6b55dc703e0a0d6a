package extract

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/ledongthuc/pdf"
)

// maxFormDepth bounds how deep form XObjects nest (a loop of forms
// referring to each other ends there).
const maxFormDepth = 8

// pdfText reads the text of each page with github.com/ledongthuc/pdf's
// parser and content-stream interpreter. Its own text readers skip form
// XObjects (where many producers put a page's whole text) and join words
// that are only set apart by position, so the text operators are
// interpreted here: forms are followed, a line move starts a new line, a
// wide gap in a TJ array or a jump along the line becomes a space.
func pdfText(ctx context.Context, data []byte) (*Doc, error) {
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		if strings.Contains(err.Error(), "encrypt") || strings.Contains(err.Error(), "password") {
			return nil, permanent("the PDF is encrypted", err)
		}
		return nil, permanent("the file is damaged or not a valid PDF file", err)
	}
	d := &Doc{}
	info := r.Trailer().Key("Info")
	if t := info.Key("Title"); t.Kind() == pdf.String {
		d.Title = t.Text()
	}
	n := r.NumPage()
	if n <= 0 {
		return nil, permanent("the PDF has no pages", ErrNoText)
	}
	for i := 1; i <= n; i++ {
		if err := ctx.Err(); err != nil {
			return nil, &Error{Reason: "cancelled", Err: err}
		}
		p := r.Page(i)
		if p.V.IsNull() {
			continue
		}
		var w pdfWriter
		if err := w.page(p); err != nil {
			return nil, permanent(fmt.Sprintf("page %d of the PDF could not be read", i), err)
		}
		d.Sections = append(d.Sections, Section{Text: w.text(), Page: i})
	}
	return d, nil
}

type pdfWriter struct {
	b strings.Builder
	// The text line matrix (scale a, d; origin e, f) and where the last
	// text shown ended on the line (x), in the same space.
	a, d, e, f float64
	x          float64
	size       float64
	haveLine   bool
	pendingGap bool
}

func (w *pdfWriter) text() string {
	// Collapse runs of spaces the gaps produced.
	lines := strings.Split(w.b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	return strings.TrimSpace(collapseBlankLines(strings.Join(lines, "\n")))
}

func collapseBlankLines(s string) string {
	for strings.Contains(s, "\n\n\n") {
		s = strings.ReplaceAll(s, "\n\n\n", "\n\n")
	}
	return s
}

func (w *pdfWriter) page(p pdf.Page) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	contents := p.V.Key("Contents")
	if contents.Kind() == pdf.Null {
		return nil
	}
	w.stream(contents, inherited(p.V, "Resources"), 0)
	return nil
}

// inherited looks a page attribute up the page tree.
func inherited(v pdf.Value, key string) pdf.Value {
	for i := 0; i < 64 && !v.IsNull(); i++ {
		if r := v.Key(key); !r.IsNull() {
			return r
		}
		v = v.Key("Parent")
	}
	return pdf.Value{}
}

func (w *pdfWriter) newline() {
	if w.b.Len() > 0 {
		w.b.WriteByte('\n')
	}
	w.pendingGap = false
}

func (w *pdfWriter) show(s string) {
	if s == "" {
		return
	}
	if w.pendingGap {
		w.b.WriteByte(' ')
		w.pendingGap = false
	}
	w.b.WriteString(s)
}

// moveTo handles a new line origin (e, f): another line when it moves
// up or down by more than a third of the font size, a space when it jumps
// forward (or back) along the line by more than a fifth of it beyond the
// end of the last text.
func (w *pdfWriter) moveTo(e, f float64) {
	em := math.Abs(w.size * w.d)
	if em == 0 {
		em = 1
	}
	switch {
	case !w.haveLine:
	case math.Abs(f-w.f) > em/3:
		w.newline()
	case e-w.x > em/5 || e < w.x-em:
		w.pendingGap = true
	}
	w.e, w.f, w.x, w.haveLine = e, f, e, true
}

// advance moves the end of the text by the width of the codes shown with
// font (1/1000 of the size per unit; half the size per character when the
// font gives no widths).
func (w *pdfWriter) advance(font *pdf.Font, raw, decoded string) {
	var units float64
	if font != nil && font.V.Key("Subtype").Name() != "Type0" && font.V.Key("Widths").Len() > 0 {
		for i := 0; i < len(raw); i++ {
			units += font.Width(int(raw[i]))
		}
	} else {
		units = 500 * float64(len([]rune(decoded)))
	}
	w.x += units / 1000 * w.size * w.a
}

func (w *pdfWriter) stream(strm, res pdf.Value, depth int) {
	var enc pdf.TextEncoding = nopEncoding{}
	var font *pdf.Font
	fontRes := res.Key("Font")
	// Each stream has its own resources, so its own fonts.
	fonts := map[string]*pdf.Font{}
	var leading float64
	show := func(raw string) {
		t := enc.Decode(raw)
		w.show(t)
		w.advance(font, raw, t)
	}
	pdf.Interpret(strm, func(stk *pdf.Stack, op string) {
		n := stk.Len()
		args := make([]pdf.Value, n)
		for i := n - 1; i >= 0; i-- {
			args[i] = stk.Pop()
		}
		num := func(i int) float64 {
			if i < len(args) {
				return args[i].Float64()
			}
			return 0
		}
		// Td moves the line origin by (tx, ty) in text space.
		td := func(tx, ty float64) { w.moveTo(w.e+tx*w.a, w.f+ty*w.d) }
		switch op {
		case "BT":
			w.a, w.d = 1, 1
			w.moveTo(0, w.f)
			w.pendingGap = true
		case "ET":
			w.pendingGap = true
		case "Tf":
			if len(args) < 2 {
				return
			}
			name := args[0].Name()
			w.size = num(1)
			f, ok := fonts[name]
			if !ok {
				f = &pdf.Font{V: fontRes.Key(name)}
				fonts[name] = f
			}
			font = f
			if f.V.IsNull() {
				enc, font = nopEncoding{}, nil
			} else {
				enc = f.Encoder()
			}
		case "TL":
			leading = num(0)
		case "Td":
			td(num(0), num(1))
		case "TD":
			leading = -num(1)
			td(num(0), num(1))
		case "Tm":
			if len(args) == 6 {
				w.a, w.d = num(0), num(3)
				if w.a == 0 {
					w.a = 1
				}
				if w.d == 0 {
					w.d = 1
				}
				w.moveTo(num(4), num(5))
			}
		case "T*":
			td(0, -leading)
		case "'", "\"":
			td(0, -leading)
			if len(args) > 0 {
				show(args[len(args)-1].RawString())
			}
		case "Tj":
			if len(args) > 0 {
				show(args[0].RawString())
			}
		case "TJ":
			if len(args) == 0 {
				return
			}
			a := args[0]
			for i := 0; i < a.Len(); i++ {
				x := a.Index(i)
				switch x.Kind() {
				case pdf.String:
					show(x.RawString())
				case pdf.Integer, pdf.Real:
					// A number moves the next glyph back by 1/1000 em: a
					// gap of more than a fifth of an em sets words apart.
					if x.Float64() < -200 {
						w.pendingGap = true
					}
					w.x -= x.Float64() / 1000 * w.size * w.a
				}
			}
		case "Do":
			if len(args) < 1 || depth >= maxFormDepth {
				return
			}
			xo := res.Key("XObject").Key(args[0].Name())
			if xo.Key("Subtype").Name() != "Form" {
				return
			}
			inner := xo.Key("Resources")
			if inner.IsNull() {
				inner = res
			}
			w.pendingGap = true
			saved := *w
			w.stream(xo, inner, depth+1)
			// The form's text state is its own.
			w.a, w.d, w.e, w.f, w.x, w.size = saved.a, saved.d, saved.e, saved.f, saved.x, saved.size
		}
	})
}

// nopEncoding reads text shown without a known font as it is.
type nopEncoding struct{}

func (nopEncoding) Decode(raw string) string { return raw }
