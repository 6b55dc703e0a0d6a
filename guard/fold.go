package guard

import (
	"strings"
	"unicode"

	"github.com/stewardhq/steward/guard/internal/textmodel"
)

// foldRune maps a character for phrase matching: lower case, accents and
// width dropped, look-alike letters of other scripts mapped to Latin,
// typographic quotes and dashes made plain, every space made ' '. It returns
// -1 for characters matching ignores (Markdown emphasis). The local
// classifier folds its input the same way.
func foldRune(r rune) rune { return textmodel.Fold(r) }

// foldString folds a whole pattern the way buildView folds a text.
func foldString(s string) string {
	var b strings.Builder
	space := true
	for _, r := range s {
		f := foldRune(r)
		switch {
		case f < 0:
		case f == ' ':
			if !space {
				b.WriteByte(' ')
				space = true
			}
		default:
			space = false
			b.WriteRune(f)
		}
	}
	return strings.TrimRight(b.String(), " ")
}

// isWordRune reports whether r continues a word for boundary checks.
func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// spacedScript reports whether words of r's script are separated by spaces,
// so that a phrase must start and end at word boundaries.
func spacedScript(r rune) bool {
	return r < 0x2E80
}
