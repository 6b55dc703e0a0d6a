package extracteval

import (
	"math"
	"strings"
	"testing"
)

func TestTokens(t *testing.T) {
	got := Tokens("It’s a café—in Zürich, 2024_x! 東京")
	want := []string{"It", "s", "a", "café", "in", "Zürich", "2024_x", "東京"}
	if len(got) != len(want) {
		t.Fatalf("Tokens = %q, want %q", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("Tokens = %q, want %q", got, want)
		}
	}
}

func TestScore(t *testing.T) {
	truth := "one two three four five six"
	if c := Score(truth, truth); c.Precision() != 1 || c.Recall() != 1 {
		t.Errorf("identical texts: %+v", c)
	}
	// Three shingles of truth; the prediction adds "seven": 3 shared, 1 extra.
	c := Score(truth, truth+" seven")
	if math.Abs(c.TP-0.75) > 1e-9 || math.Abs(c.FP-0.25) > 1e-9 || c.FN != 0 {
		t.Errorf("one extra word: %+v, want TP .75 FP .25", c)
	}
	if c := Score(truth, ""); c.Precision() != 0 || c.Recall() != 0 {
		t.Errorf("empty prediction: %+v", c)
	}
	if c := Score("", ""); c.Precision() != 1 || c.Recall() != 1 {
		t.Errorf("both empty: %+v", c)
	}
	r := Aggregate([]Counts{Score(truth, truth), Score(truth, truth+" seven")})
	if math.Abs(r.Precision-0.875) > 1e-9 || r.Recall != 1 {
		t.Errorf("Aggregate = %+v", r)
	}
}

func TestMarkdownWords(t *testing.T) {
	md := "# Title\n\nSee [the *report*](https://example.com/a_b?x=1 \"t\") and ![a chart](https://img.example/c.png) at <https://example.com/x>.\n\n_Emphasis_ keeps snake_case and \\*stars\\*.\n\n[1]: https://example.com/ref"
	got := Tokens(MarkdownWords(md))
	want := []string{"Title", "See", "the", "report", "and", "at", "Emphasis", "keeps", "snake_case", "and", "stars"}
	if len(got) != len(want) {
		t.Fatalf("words = %q, want %q", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("words = %q, want %q", got, want)
		}
	}
}

func TestMarkdownText(t *testing.T) {
	md := "## A *title*\n\n- item with [a link](https://x.example/) and `code`\n> quoted **bold** text\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nEscaped \\*star\\* and snake_case."
	got := strings.Join(strings.Fields(MarkdownText(md)), " ")
	want := "A title item with a link and code quoted bold text a b 1 2 Escaped *star* and snake_case."
	if got != want {
		t.Errorf("MarkdownText = %q\nwant %q", got, want)
	}
}
