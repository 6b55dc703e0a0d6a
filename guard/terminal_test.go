package guard

import (
	"context"
	"strings"
	"testing"
)

// Issue 17 point 4: the filter reports terminal control sequences in
// fetched content and removes them from what the model sees; the text
// around them stays.
func TestTerminalControlSequences(t *testing.T) {
	f := New(Options{})
	for _, c := range []struct {
		name, in, out string
		// want lists a substring of each finding's snippet, in order; nil
		// means no finding.
		want []string
	}{
		{"clipboard, BEL", "Price \x1b]52;c;SGVsbG8=\x07 is ten.", "Price  is ten.", []string{"ESC ]52;c;SGVsbG8= BEL (writes the clipboard)"}},
		{"clipboard, ST", "A\x1b]52;c;SGVsbG8=\x1b\\B", "AB", []string{"(writes the clipboard)"}},
		{"title", "Title\x1b]0;pwned\x07 here", "Title here", []string{"(sets the window title)"}},
		{"clear screen", "Clear \x1b[2J screen", "Clear  screen", []string{"ESC [2J (erases the screen)"}},
		{"colour", "\x1b[1;31mred\x1b[0m text", "red text", []string{"ESC [1;31m", "ESC [0m"}},
		{"C1 CSI", "C1 \u009b2J x", "C1  x", []string{"<U+9B>2J (erases the screen)"}},
		{"C1 OSC with ST", "a\u009d0;t\u009cb", "ab", []string{"(sets the window title)"}},
		{"two-byte escape", "reset\x1bc done", "reset done", []string{"escape sequence ESC c"}},
		{"lone ESC at the end", "end\x1b", "end", []string{"a lone ESC"}},
		{"device control string", "x\x1bPq#0;2;0;0;0\x1b\\y", "xy", []string{"device control string"}},
		// Lone control characters go without a report; whitespace stays.
		{"backspace and NUL", "safe\x08\x08\x08\x08evil\x00!", "safeevil!", nil},
		{"whitespace", "a\tb\nc\r\nd\ve\ff", "a\tb\nc\r\nd\ve\ff", nil},
		// Written out as an escape, ESC is text a terminal does not obey.
		{"JSON escape", `{"t":"\u001b[2J"}`, `{"t":"\u001b[2J"}`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := f.FilterText(context.Background(), Source{Kind: WebContent, Label: "p"}, c.in)
			if o.Text != c.out {
				t.Errorf("text %q, want %q", o.Text, c.out)
			}
			if len(o.Findings) != len(c.want) {
				t.Fatalf("findings %+v, want %d", o.Findings, len(c.want))
			}
			for i, w := range c.want {
				if o.Findings[i].Rule != "terminal.control_sequence" || !strings.Contains(o.Findings[i].Snippet, w) {
					t.Errorf("finding %d: %+v, want rule terminal.control_sequence with %q", i, o.Findings[i], w)
				}
			}
		})
	}
	// An unterminated string sequence ends after maxTermString bytes: the
	// text after it is kept.
	long := "a\x1b]52;c;" + strings.Repeat("Q", 2*maxTermString) + " tail"
	o := f.FilterText(context.Background(), Source{Kind: WebContent, Label: "p"}, long)
	if !strings.HasSuffix(o.Text, " tail") || len(o.Text) >= len(long)-maxTermString+1 || len(o.Findings) != 1 {
		t.Errorf("unterminated sequence: %d bytes kept of %d, findings %+v", len(o.Text), len(long), o.Findings)
	}
}
