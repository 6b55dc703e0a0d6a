package confluence

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/confluencetest"
	"github.com/stewardhq/steward/internal/webtest"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
)

// Wrong arguments are refused with a message the model can correct itself
// from, before anything is sent.
func TestArgumentsAreRefusedBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	w := newCloud(t, confluencetest.Options{})
	tl, _ := w.tool(t, &webtest.Reports{}, Deps{})
	for args, want := range map[string]string{
		`{}`:              "'query'",
		`{"query":""}`:    "'query'",
		`{"query":"   "}`: "'query'",
		`{"query":42}`:    "'query'",
		`{"query":"` + strings.Repeat("a", 201) + `"}`: "at most 200",
		`{"query":"a\nb"}`:                                               "control characters",
		`{"query":"vpn","space_key":""}`:                                 "'space_key'",
		`{"query":"vpn","space_key":"a\tb"}`:                             "control characters",
		`{"query":"vpn","space_key":"` + strings.Repeat("K", 256) + `"}`: "at most 255",
		`{"query":"vpn","page":0}`:                                       "'page'",
		`{"query":"vpn","page":"2"}`:                                     "'page'",
		`{"query":"vpn","cql":"type = page"}`:                            "not known",
		`{"query":"vpn","url":"https://evil"}`:                           "not known",
	} {
		_, err := call(t, tl, cloudSettings(w), args, policy.High)
		if err == nil {
			t.Errorf("%s was accepted", args)
			continue
		}
		if _, ok := tool.AsArgumentError(err); !ok {
			t.Errorf("%s: %v is no argument error", args, err)
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %q lacks %q", args, err, want)
		}
	}
	if n := len(w.Requests()); n != 0 {
		t.Fatalf("%d requests for refused arguments", n)
	}
}

func TestHasMoreResults(t *testing.T) {
	base, _ := url.Parse("https://wiki.example.org/confluence/")
	link := func(p string) string { return "[x](https://wiki.example.org/confluence" + p + ") " }
	var full, five strings.Builder
	for i := range 10 {
		full.WriteString(link("/display/OPS/P" + string(rune('a'+i))))
		if i < 5 {
			five.WriteString(link("/display/OPS/P" + string(rune('a'+i))))
		}
	}
	for _, c := range []struct {
		md    string
		start int
		want  bool
	}{
		{full.String(), 0, true},
		{five.String(), 0, false},
		{five.String() + link("/dosearchsite.action?cql=x&startIndex=10"), 0, true},
		{five.String() + link("/dosearchsite.action?cql=x&startIndex=0"), 10, false},
		{five.String() + "[n](https://evil.example.org/confluence/dosearchsite.action?startIndex=50)", 0, false},
		{strings.Repeat(link("/display/OPS/Same"), 12), 0, false},
	} {
		if got := hasMoreResults(c.md, base, c.start); got != c.want {
			t.Errorf("hasMoreResults(%q, %d) = %v", c.md, c.start, got)
		}
	}
}
