package textcut

import "testing"

func TestChars(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"", 3, ""}, {"abc", 3, "abc"}, {"abcd", 3, "abc..."}, {"Grüße", 3, "Grü..."}, {"日本語", 2, "日本..."}, {"x", 0, "..."},
	} {
		if got := Chars(c.in, c.max); got != c.want {
			t.Errorf("Chars(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}

func TestReadable(t *testing.T) {
	for _, c := range []struct {
		in        string
		max       int
		keepLines bool
		want      string
	}{
		{"a\nb\tc\x1b[2J", 20, true, "a\nb\tc [2J"},
		{"a\nb\tc\x1b[2J", 20, false, "a b c [2J"},
		{"abcdef", 6, false, "abcdef"},
		{"abcdefg", 6, false, "abcde…"},
		{"äöüßxyz", 4, false, "äöü…"},
		{"ok\xffbad", 10, false, "ok\uFFFDbad"},
	} {
		if got := Readable(c.in, c.max, c.keepLines); got != c.want {
			t.Errorf("Readable(%q, %d, %v) = %q, want %q", c.in, c.max, c.keepLines, got, c.want)
		}
	}
}
