package confluence

import (
	"strings"
	"testing"
	"unicode"

	"github.com/stewardhq/steward/internal/confluencetest"
)

// wantClauses checks that cql parses, by the fake's own CQL parser, into
// exactly: <field> ~ phrase AND type IN (page, blogpost) [AND space = key],
// with both values quoted and arriving unchanged.
func wantClauses(t testing.TB, cql, field, phrase, space string) {
	t.Helper()
	e, err := confluencetest.ParseCQL(cql)
	if err != nil {
		t.Fatalf("the CQL %q does not parse: %v", cql, err)
	}
	parts := confluencetest.Conjuncts(e)
	want := 2
	if space != "" {
		want = 3
	}
	if len(parts) != want {
		t.Fatalf("the CQL %q has %d conditions joined by AND, want %d: %v", cql, len(parts), want, e)
	}
	c, ok := parts[0].(*confluencetest.Clause)
	if !ok || c.Field != field || c.Op != "~" || len(c.Values) != 1 || !c.Quoted[0] || c.Values[0] != phrase {
		t.Fatalf("first condition of %q is %v, want %s ~ %q", cql, parts[0], field, phrase)
	}
	ty, ok := parts[1].(*confluencetest.Clause)
	if !ok || ty.Field != "type" || ty.Op != "in" || strings.Join(ty.Values, ",") != "page,blogpost" {
		t.Fatalf("second condition of %q is %v", cql, parts[1])
	}
	if space != "" {
		sp, ok := parts[2].(*confluencetest.Clause)
		if !ok || sp.Field != "space" || sp.Op != "=" || !sp.Quoted[0] || sp.Values[0] != space {
			t.Fatalf("third condition of %q is %v, want space = %q", cql, parts[2], space)
		}
	}
}

func TestBuildCQLKeepsEveryPhraseOnePhrase(t *testing.T) {
	cases := []struct{ name, phrase, space string }{
		{"plain words", "vpn setup", ""},
		{"with a space", "backup policy", "OPS"},
		// The seed's rule: a phrase full of CQL operators and quotes stays
		// one phrase, and the space condition cannot be escaped from.
		{"operators and quotes", `budget" OR space = "HR" AND title ~ "salary`, "OPS"},
		{"closing everything", `x") OR (type = page OR space != "`, "DEV"},
		{"backslash before quote", `a\" OR space = HR OR text ~ \"`, "OPS"},
		{"trailing backslash", `path C:\temp\`, ""},
		{"reserved words", "and or not in order by empty null", "IN"},
		{"cql functions", `currentUser() AND creator = currentUser()`, ""},
		{"lucene syntax", `"exact phrase" wild* fuzz~ ?one`, ""},
		{"personal space", "notes", "~jdoe"},
		{"space key trying to escape", "notes", `OPS" OR space = "HR`},
		{"single quotes", `it's 'quoted'`, "'A'"},
		{"unicode", "Straßenbahn 東京 🚀", "ÄÖÜ"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantClauses(t, buildCQL(fieldSiteSearch, c.phrase, c.space), fieldSiteSearch, c.phrase, c.space)
			wantClauses(t, buildCQL(fieldText, c.phrase, c.space), fieldText, c.phrase, c.space)
		})
	}
}

func TestCQLStringEscapes(t *testing.T) {
	for in, want := range map[string]string{
		`plain`:       `"plain"`,
		`a"b`:         `"a\"b"`,
		`a\b`:         `"a\\b"`,
		`\"`:          `"\\\""`,
		"line\nbreak": `"line break"`,
	} {
		if got := cqlString(in); got != want {
			t.Errorf("cqlString(%q) = %s, want %s", in, got, want)
		}
	}
}

// FuzzBuildCQL: whatever phrase and space key arrive, the fake's parser
// reads exactly one text condition holding the phrase and, when given, one
// space condition holding the key (control characters become spaces).
func FuzzBuildCQL(f *testing.F) {
	f.Add("vpn setup", "")
	f.Add(`budget" OR space = "HR`, "OPS")
	f.Add(`\\\"`, `\`)
	f.Add("a\x00b", "~x")
	f.Add(`) OR (`, `" OR "`)
	f.Fuzz(func(t *testing.T, phrase, space string) {
		if strings.TrimSpace(space) == "" {
			space = ""
		}
		// Invalid UTF-8 reads as one U+FFFD per byte when ranged over.
		expect := func(s string) string {
			var b strings.Builder
			for _, r := range s {
				if unicode.IsControl(r) {
					r = ' '
				}
				b.WriteRune(r)
			}
			return b.String()
		}
		wantClauses(t, buildCQL(fieldSiteSearch, phrase, space), fieldSiteSearch, expect(phrase), expect(space))
	})
}
