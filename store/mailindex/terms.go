package mailindex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Word statistics. FTS5 keeps no count of the chunks holding a word: it
// counts them by reading the word's whole list, as bm25 does for every
// query. For a word held by most chunks that costs more than the search
// may take, so the index keeps the counts of its common words in
// term_stats, refreshed when the chunks grew by a tenth, and ranks
// queries with such words in Go (see SearchWords).

// bm25 parameters, FTS5's defaults.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// commonMin is the least number of chunks a common word is held by; a
// word is also common only when more than one chunk in commonShare holds
// it. Below that, FTS5 ranks every match within the time a search may take.
const (
	commonMin   = 1000
	commonShare = 100
)

// termStats is a snapshot of the word statistics.
type termStats struct {
	chunks   int64            // chunks when counted
	tokens   int64            // words in them
	maxChunk int64            // highest chunk ID when counted
	cut      int64            // a word held by more chunks is common
	docs     map[string]int64 // chunks holding each common word
}

func (s *termStats) avgLen() float64 {
	if s.chunks == 0 {
		return 1
	}
	return float64(s.tokens) / float64(s.chunks)
}

// idf is FTS5's bm25 inverse document frequency.
func idf(chunks, docs int64) float64 {
	v := math.Log((float64(chunks) - float64(docs) + 0.5) / (float64(docs) + 0.5))
	if v <= 0 {
		v = 1e-6
	}
	return v
}

// statsCache keeps the last snapshot read in this process.
type statsCache struct {
	mu sync.Mutex
	s  *termStats
}

// stale tells whether the chunks grew by more than a tenth since s was
// counted.
func (s *termStats) stale(maxChunk int64) bool {
	return maxChunk-s.maxChunk > s.chunks/10
}

// termStats returns the word statistics, counting them anew when there
// are none yet or the chunks grew by more than a tenth since.
func (x *Index) termStats(ctx context.Context) (*termStats, error) {
	var maxChunk int64
	if err := x.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) FROM chunks`).Scan(&maxChunk); err != nil {
		return nil, fmt.Errorf("mailindex: word statistics: %w", err)
	}
	x.stats.mu.Lock()
	defer x.stats.mu.Unlock()
	if s := x.stats.s; s != nil && !s.stale(maxChunk) {
		// Kept unless another process stored newer counts since.
		var at int64
		err := x.db.QueryRowContext(ctx, `SELECT max_chunk FROM term_stats_meta WHERE id = 1`).Scan(&at)
		if err != nil || at <= s.maxChunk {
			return s, nil
		}
	}
	s, err := x.loadStats(ctx)
	if err != nil {
		return nil, err
	}
	if s == nil || s.stale(maxChunk) {
		if s, err = x.countStats(ctx); err != nil {
			return nil, err
		}
	}
	x.stats.s = s
	return s, nil
}

// RefreshWordStats counts the word statistics anew when the chunks grew
// by more than a tenth since they were last counted. The indexer calls it
// after adding mails, so searches seldom have to.
func (x *Index) RefreshWordStats(ctx context.Context) error {
	_, err := x.termStats(ctx)
	return err
}

func (x *Index) loadStats(ctx context.Context) (*termStats, error) {
	s := &termStats{docs: map[string]int64{}}
	err := x.db.QueryRowContext(ctx, `SELECT chunks, tokens, max_chunk, cut FROM term_stats_meta WHERE id = 1`).
		Scan(&s.chunks, &s.tokens, &s.maxChunk, &s.cut)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("mailindex: word statistics: %w", err)
	}
	rows, err := x.db.QueryContext(ctx, `SELECT term, docs FROM term_stats`)
	if err != nil {
		return nil, fmt.Errorf("mailindex: word statistics: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		var n int64
		if err := rows.Scan(&t, &n); err != nil {
			return nil, fmt.Errorf("mailindex: word statistics: %w", err)
		}
		s.docs[t] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("mailindex: word statistics: %w", err)
	}
	return s, nil
}

// countStats reads the whole FTS5 vocabulary once (about a second at
// 100,000 chunks) and stores the common words.
func (x *Index) countStats(ctx context.Context) (*termStats, error) {
	s := &termStats{docs: map[string]int64{}}
	// Counted in a read transaction (one snapshot, no write lock held
	// while the vocabulary is read), stored in a short write one.
	tx, err := x.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("mailindex: count word statistics: %w", err)
	}
	err = func() error {
		defer tx.Rollback()
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(MAX(id), 0) FROM chunks`).Scan(&s.chunks, &s.maxChunk); err != nil {
			return err
		}
		s.cut = max(int64(x.commonMin), s.chunks/commonShare)
		rows, err := tx.QueryContext(ctx, `SELECT term, doc, cnt FROM chunks_vocab`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var t string
			var doc, cnt int64
			if err := rows.Scan(&t, &doc, &cnt); err != nil {
				return err
			}
			if !cjkPair(t) {
				// A pair shares its position with its first character,
				// and FTS5 counts positions in a chunk's length.
				s.tokens += cnt
			}
			if doc > s.cut {
				s.docs[t] = doc
			}
		}
		return rows.Err()
	}()
	if err != nil {
		return nil, fmt.Errorf("mailindex: count word statistics: %w", err)
	}
	// Storing only saves the next process the counting: an index this
	// process cannot write is still searched with the counts.
	_ = x.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM term_stats`); err != nil {
			return err
		}
		for t, n := range s.docs {
			if _, err := tx.ExecContext(ctx, `INSERT INTO term_stats(term, docs) VALUES(?, ?)`, t, n); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO term_stats_meta(id, chunks, tokens, max_chunk, cut) VALUES(1, ?, ?, ?, ?)`,
			s.chunks, s.tokens, s.maxChunk, s.cut)
		return err
	})
	return s, nil
}

// cjkPair tells a token that is a pair of CJK characters.
func cjkPair(t string) bool {
	r1, n := utf8.DecodeRuneInString(t)
	if n == 0 || !isCJK(r1) {
		return false
	}
	r2, m := utf8.DecodeRuneInString(t[n:])
	return m > 0 && n+m == len(t) && isCJK(r2)
}

// foldWord folds a word the way the FTS5 tokenizer unicode61 with
// remove_diacritics 2 does: lower case, without combining marks.
func foldWord(w string) string {
	ascii := true
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(w)
	}
	var b strings.Builder
	for _, r := range norm.NFD.String(w) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// isTokenRune tells the characters unicode61 keeps in words: letters,
// numbers and private-use characters.
func isTokenRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
}

// queryWords returns the distinct tokens of a query as the tokenizer
// makes them (folded words; CJK characters in pairs), at most 64.
func queryWords(text string) []string {
	var out []string
	seen := map[string]bool{}
	_ = tokenize(text, true, func(w string, _, _ int, _ bool) error {
		if w != "" && !seen[w] && len(out) < 64 {
			seen[w] = true
			out = append(out, w)
		}
		return nil
	})
	return out
}

// wordScorer ranks chunk texts by bm25 in Go, with the statistics of
// termStats for common words and of the FTS5 vocabulary for the others.
type wordScorer struct {
	words  []string
	weight map[string]float64 // idf of each query word
	avgLen float64
}

// newScorer looks up how many chunks hold each word of the query.
func (x *Index) newScorer(ctx context.Context, st *termStats, words []string) (*wordScorer, error) {
	sc := &wordScorer{words: words, weight: map[string]float64{}, avgLen: st.avgLen()}
	for _, w := range words {
		docs, ok := st.docs[w]
		if !ok {
			// Not common: reading its list is cheap.
			if err := x.db.QueryRowContext(ctx, `SELECT COALESCE((SELECT doc FROM chunks_vocab WHERE term = ?), 0)`, w).Scan(&docs); err != nil {
				return nil, fmt.Errorf("mailindex: search words: %w", err)
			}
		}
		sc.weight[w] = idf(st.chunks, docs)
	}
	return sc, nil
}

// score is the bm25 score of text for the query: the sum over the query's
// words in text of idf * tf*(k1+1) / (tf + k1*(1-b+b*len/avgLen)).
func (sc *wordScorer) score(text string) float64 {
	tf := make(map[string]int, len(sc.words))
	for _, w := range sc.words {
		tf[w] = 0
	}
	n := 0
	_ = tokenize(text, false, func(w string, _, _ int, colocated bool) error {
		if !colocated {
			n++
		}
		if c, ok := tf[w]; ok {
			tf[w] = c + 1
		}
		return nil
	})
	norm := bm25K1 * (1 - bm25B + bm25B*float64(n)/sc.avgLen)
	var s float64
	for w, c := range tf {
		if c == 0 {
			continue
		}
		t := float64(c)
		s += sc.weight[w] * t * (bm25K1 + 1) / (t + norm)
	}
	return s
}
