package guard

import (
	"regexp"
	"testing"
)

// The rules' regular expressions are compiled on first use; each must
// compile, so that no text can make one panic later.
func TestEveryRuleCompiles(t *testing.T) {
	rules := allRules()
	if len(rules) < 20 {
		t.Fatalf("only %d rules", len(rules))
	}
	for _, r := range rules {
		for _, l := range []*lazyRegexp{r.re, r.keywords} {
			if l == nil {
				continue
			}
			if _, err := regexp.Compile(l.String()); err != nil {
				t.Errorf("rule %s: %v", r.id, err)
			}
		}
	}
}
