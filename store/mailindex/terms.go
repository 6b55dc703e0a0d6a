package mailindex

import (
	"context"

	"github.com/stewardhq/steward/store/searchindex"
)

// Word statistics: the counts of the common words, which let a query with
// such a word be ranked in Go (see searchindex.Words and SearchWords).

// termStats returns the word statistics, counting them anew when there
// are none yet or the chunks grew by more than a tenth since; given the
// words of a query, perhaps of those words only (see searchindex.Words.Stats).
func (x *Index) termStats(ctx context.Context, words ...string) (*searchindex.TermStats, error) {
	return x.words.Stats(ctx, words...)
}

// RefreshWordStats counts the word statistics anew when the chunks grew
// by more than a tenth since they were last counted. The indexer calls it
// after adding mails, so searches seldom have to.
func (x *Index) RefreshWordStats(ctx context.Context) error {
	_, err := x.termStats(ctx)
	return err
}
