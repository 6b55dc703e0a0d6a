package web

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	para := strings.Repeat("a", 40) + "\n\n" + strings.Repeat("b", 40) + "\n\n" + strings.Repeat("c", 40)
	tests := []struct {
		name string
		in   string
		max  int
		want string
		cut  bool
	}{
		{"fits", "short", 10, "short", false},
		{"exact", "12345", 5, "12345", false},
		{"hard-cut-small-max", "abcdefghijklmnopqrstuvwxyz0123", 10, "abcdefghij", true},
		{"hard-cut-25", strings.Repeat("x", 30), 25, strings.Repeat("x", 25), true},
		{"zero", "abc", 0, "", true},
		{"negative", "abc", -5, "", true},
		// limit = 100-26 = 74: the last "\n\n" before it is at 40 ≥ 37.
		{"paragraph", para, 100, strings.Repeat("a", 40) + "\n\n" + TruncationMarker, true},
		// limit = 110-26 = 84: "\n\n" at 82 ≥ 42.
		{"later-paragraph", para, 110, strings.Repeat("a", 40) + "\n\n" + strings.Repeat("b", 40) + "\n\n" + TruncationMarker, true},
		// No paragraph break in the second half, but a line break.
		{"line", strings.Repeat("a", 60) + "\n" + strings.Repeat("b", 60), 100, strings.Repeat("a", 60) + "\n\n" + TruncationMarker, true},
		// Breaks only in the first half: cut at the limit.
		{"hard-limit", "ab\n\n" + strings.Repeat("z", 200), 100, "ab\n\n" + strings.Repeat("z", 70) + "\n\n" + TruncationMarker, true},
		// Trailing spaces before the marker are trimmed.
		{"trim", strings.Repeat("a", 60) + "   \n" + strings.Repeat("b", 60), 100, strings.Repeat("a", 60) + "\n\n" + TruncationMarker, true},
		// Runes, not bytes: 200 umlauts cut to 74 of them.
		{"runes", strings.Repeat("ü", 200), 100, strings.Repeat("ü", 74) + "\n\n" + TruncationMarker, true},
		{"emoji", strings.Repeat("😀", 30), 27, "😀\n\n" + TruncationMarker, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, cut := Truncate(tc.in, tc.max)
			if got != tc.want || cut != tc.cut {
				t.Errorf("Truncate = %q, %v\nwant       %q, %v", got, cut, tc.want, tc.cut)
			}
		})
	}
}

func FuzzTruncate(f *testing.F) {
	f.Add("hello\n\nworld", 8)
	f.Add(strings.Repeat("a\n", 100), 50)
	f.Add("ü😀\n\n\nx", 27)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max > 1<<20 || max < -10 {
			return
		}
		got, cut := Truncate(s, max)
		n := utf8.RuneCountInString(s)
		limit := max
		if limit < 0 {
			limit = 0
		}
		if !cut {
			if got != s || n > limit {
				t.Fatalf("not cut but changed or too long: %q max %d", got, max)
			}
			return
		}
		if utf8.RuneCountInString(got) > limit {
			t.Fatalf("result of %d runes exceeds max %d", utf8.RuneCountInString(got), max)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("cut produced invalid UTF-8")
		}
		if limit >= 26 && !strings.HasSuffix(got, "\n\n"+TruncationMarker) {
			t.Fatalf("missing marker: %q", got)
		}
	})
}
