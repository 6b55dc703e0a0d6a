package guard

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Terminal control sequences in fetched text. A page, a mail or a model's
// source may carry bytes that a terminal obeys rather than shows: ESC ] 52
// writes the clipboard, ESC ] 0 sets the window title, ESC [ 2J clears the
// screen, a backspace overwrites what was written before it. None of them
// is text a model needs, and a text that holds them was written for a
// terminal, not for a reader. The filter removes them from what the model
// sees and reports each escape sequence; lone control characters (other
// than tab, newline, carriage return, vertical tab and form feed) are
// removed silently, as the other invisible characters are.

// maxTermString bounds the string of an OSC, DCS, SOS, PM or APC sequence
// the filter reads to its terminator; a longer one ends there.
const maxTermString = 4096

// isTermControl tells a character that starts a control sequence or is a
// control character a terminal acts on: C0 controls other than the
// whitespace ones, DEL, and the C1 controls U+0080..U+009F.
func isTermControl(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f':
		return false
	case r < 0x20 || r == 0x7F:
		return true
	case r >= 0x80 && r <= 0x9F:
		return true
	}
	return false
}

// termSequence returns the length in bytes of the control sequence or
// character that starts at s[i] (which isTermControl accepted), and a
// description of it for the report, empty for a lone control character
// that introduces nothing.
func termSequence(s string, i int) (n int, what string) {
	r, size := utf8.DecodeRuneInString(s[i:])
	intro := byte(0) // the sequence's kind: '[', ']', 'P', 'X', '^', '_' or 0
	j := i + size
	switch {
	case r == 0x1B:
		if j >= len(s) {
			return size, "a lone ESC"
		}
		c := s[j]
		switch c {
		case '[', ']', 'P', 'X', '^', '_':
			intro = c
			j++
		default:
			// ESC, intermediates 0x20..0x2F, one final byte 0x30..0x7E.
			for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2F {
				j++
			}
			if j < len(s) && s[j] >= 0x30 && s[j] <= 0x7E {
				j++
			}
			return j - i, "escape sequence " + describeTerm(s[i:j])
		}
	case r == 0x9B:
		intro = '['
	case r == 0x9D:
		intro = ']'
	case r == 0x90:
		intro = 'P'
	case r == 0x98:
		intro = 'X'
	case r == 0x9E:
		intro = '^'
	case r == 0x9F:
		intro = '_'
	default:
		return size, ""
	}
	if intro == '[' {
		// CSI: parameters 0x30..0x3F, intermediates 0x20..0x2F, a final
		// byte 0x40..0x7E.
		for j < len(s) && s[j] >= 0x30 && s[j] <= 0x3F {
			j++
		}
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2F {
			j++
		}
		if j < len(s) && s[j] >= 0x40 && s[j] <= 0x7E {
			j++
		}
		return j - i, "control sequence " + describeTerm(s[i:j]) + csiMeaning(s[i:j])
	}
	// A string sequence, ended by BEL, ESC \ or ST (U+009C).
	start := j
	for j < len(s) && j-start < maxTermString {
		if s[j] == 0x07 {
			j++
			break
		}
		if s[j] == 0x1B && j+1 < len(s) && s[j+1] == '\\' {
			j += 2
			break
		}
		if strings.HasPrefix(s[j:], "\u009c") {
			j += len("\u009c")
			break
		}
		j++
	}
	desc := "operating system command"
	switch intro {
	case 'P':
		desc = "device control string"
	case 'X', '^', '_':
		desc = "private string sequence"
	}
	return j - i, desc + " " + describeTerm(s[i:j]) + oscMeaning(intro, s[start:j])
}

func csiMeaning(seq string) string {
	switch {
	case strings.HasSuffix(seq, "J"):
		return " (erases the screen)"
	case strings.HasSuffix(seq, "K"):
		return " (erases the line)"
	case strings.HasSuffix(seq, "H") || strings.HasSuffix(seq, "A") || strings.HasSuffix(seq, "F"):
		return " (moves the cursor)"
	}
	return ""
}

func oscMeaning(intro byte, body string) string {
	if intro != ']' {
		return ""
	}
	num := body
	if k := strings.IndexByte(num, ';'); k >= 0 {
		num = num[:k]
	}
	switch num {
	case "52":
		return " (writes the clipboard)"
	case "0", "1", "2":
		return " (sets the window title)"
	case "8":
		return " (a hyperlink)"
	}
	return ""
}

// describeTerm shows a control sequence with its control characters
// spelled out (ESC, BEL, U+009B…), at most 40 characters of it.
func describeTerm(seq string) string {
	var b strings.Builder
	shown := 0
	for _, r := range seq {
		if shown >= 40 {
			b.WriteString("…")
			break
		}
		shown++
		switch {
		case r == 0x1B:
			b.WriteString("ESC ")
		case r == 0x07:
			b.WriteString(" BEL")
		case r < 0x20 || r == 0x7F || (r >= 0x80 && r <= 0x9F):
			b.WriteString("<U+" + strings.ToUpper(strconv.FormatInt(int64(r), 16)) + ">")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
