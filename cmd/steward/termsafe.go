package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"unicode/utf8"

	"golang.org/x/term"
)

// termWriter makes text inert on a terminal: every control character but
// newline and tab (C0, DEL, the C1 range, which holds the 8-bit CSI and
// OSC), and every byte that is not UTF-8, is written as a visible \u00XX
// escape, so that a page or a model answer cannot set the clipboard (ESC ]
// 52), the window title (ESC ] 0), clear the screen (ESC [ 2J) or do
// anything else a terminal would take from an escape sequence. The escape
// is valid inside a JSON string too, so --json output stays JSON.
// A character split across writes is held until its rest arrives.
type termWriter struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte
}

func (t *termWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	buf := append(t.pending, p...)
	t.pending = nil
	out := make([]byte, 0, len(buf))
	for i := 0; i < len(buf); {
		b := buf[i]
		if b < utf8.RuneSelf {
			if (b < 0x20 && b != '\n' && b != '\t') || b == 0x7f {
				out = fmt.Appendf(out, `\u%04x`, b)
			} else {
				out = append(out, b)
			}
			i++
			continue
		}
		if !utf8.FullRune(buf[i:]) {
			t.pending = append([]byte(nil), buf[i:]...)
			break
		}
		r, size := utf8.DecodeRune(buf[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			out = fmt.Appendf(out, `\u%04x`, buf[i])
		case r >= 0x80 && r <= 0x9f:
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, buf[i:i+size]...)
		}
		i += size
	}
	if _, err := t.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes a character left incomplete, escaped.
func (t *termWriter) Flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.pending) == 0 {
		return nil
	}
	var out []byte
	for _, b := range t.pending {
		out = fmt.Appendf(out, `\u%04x`, b)
	}
	t.pending = nil
	_, err := t.w.Write(out)
	return err
}

// isTerminal reports whether w is a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
