package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/extracteval"
	"github.com/stewardhq/steward/internal/realpages"
)

// TestTrafilaturaEval scores the extractors on trafilatura's own
// evaluation corpus (adbar/trafilatura, tests/evaldata.json with the pages
// in tests/cache and tests/eval; Apache-2.0 code, third-party pages), which
// is not committed here: set STEWARD_TRAFILATURA_EVAL to that tests
// directory. Each page has up to six passages that must be in the output
// ("with") and up to six that must not ("without"), matched as
// whitespace-normalised substrings, and the counts are summed over the
// corpus, as tests/eval_common.py does. Steward's Markdown is reduced to
// plain text first (extracteval.MarkdownText).
func TestTrafilaturaEval(t *testing.T) {
	dir := os.Getenv("STEWARD_TRAFILATURA_EVAL")
	if dir == "" {
		t.Skip("STEWARD_TRAFILATURA_EVAL is not set to trafilatura's tests directory")
	}
	raw, err := os.ReadFile(filepath.Join(dir, "evaldata.json"))
	if err != nil {
		t.Fatal(err)
	}
	var data map[string]struct {
		File    string   `json:"file"`
		With    []string `json:"with"`
		Without []string `json:"without"`
	}
	if err := json.Unmarshal(raw, &data); err != nil {
		t.Fatalf("evaldata.json: %v", err)
	}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var ps []realpages.Page
	var items []string
	for i, k := range keys {
		var b []byte
		for _, sub := range []string{"cache", "eval"} {
			if b, err = os.ReadFile(filepath.Join(dir, sub, data[k].File)); err == nil {
				break
			}
		}
		if b == nil {
			t.Fatalf("%s: %s not found in cache/ or eval/", k, data[k].File)
		}
		ps = append(ps, realpages.Page{Name: fmt.Sprintf("p%d", i), HTML: b})
		items = append(items, k)
	}
	exs, stop := extractors(t, ps)
	defer stop()
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	for _, ex := range exs {
		var tp, fp, fn, tn int
		for i, p := range ps {
			out := ex.run(t, p)
			if ex.words != nil {
				out = extracteval.MarkdownText(out)
			}
			out = norm(out)
			item := data[items[i]]
			for _, w := range item.With {
				if strings.Contains(out, norm(w)) {
					tp++
				} else {
					fn++
				}
			}
			for _, w := range item.Without {
				if strings.Contains(out, norm(w)) {
					fp++
				} else {
					tn++
				}
			}
		}
		prec := float64(tp) / float64(tp+fp)
		rec := float64(tp) / float64(tp+fn)
		t.Logf("%-12s %d pages: F1 %.4f precision %.4f recall %.4f accuracy %.4f",
			ex.name, len(ps), 2*float64(tp)/float64(2*tp+fp+fn), prec, rec, float64(tp+tn)/float64(tp+tn+fp+fn))
	}
}
