package searchindex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync"
)

// WordsSchema creates the word tables of the convention (see the package
// documentation) for a table `chunks` that already exists: the FTS5 table
// of the chunks' texts, its vocabulary, the trigger that removes a deleted
// chunk's text, and the counts of the common words.
const WordsSchema = `
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(text, tokenize='` + TokenizerName + `');
-- Per term, how many chunks hold it: tells a word search whether ranking
-- the whole table is cheap.
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vocab USING fts5vocab(chunks_fts, row);
CREATE TRIGGER IF NOT EXISTS chunks_fts_delete AFTER DELETE ON chunks BEGIN
	DELETE FROM chunks_fts WHERE rowid = old.id;
END;
-- The common words and how many chunks hold each.
CREATE TABLE IF NOT EXISTS term_stats(
	term TEXT PRIMARY KEY,
	docs INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS term_stats_meta(
	id INTEGER PRIMARY KEY CHECK (id = 1),
	chunks INTEGER NOT NULL,
	tokens INTEGER NOT NULL,
	max_chunk INTEGER NOT NULL,
	cut INTEGER NOT NULL
);
`

// Word statistics. FTS5 keeps no count of the chunks holding a word: it
// counts them by reading the word's whole list, as bm25 does for every
// query. For a word held by most chunks that costs more than a search may
// take (150-300 ms at 100,000 chunks), so the index keeps the counts of
// its common words in term_stats, refreshed when the chunks grew by a
// tenth, and ranks queries with such words in Go with the same bm25
// (Scorer).

// bm25 parameters, FTS5's defaults.
const (
	K1 = 1.2
	B  = 0.75
)

// CommonMin is the least number of chunks a common word is held by; a
// word is also common only when more than one chunk in CommonShare holds
// it. Below that, FTS5 ranks every match within the time a search may take.
const (
	CommonMin   = 1000
	CommonShare = 100
)

// TermStats is a snapshot of the word statistics.
type TermStats struct {
	Chunks   int64            // chunks when counted
	Tokens   int64            // words in them
	MaxChunk int64            // highest chunk ID when counted
	Cut      int64            // a word held by more chunks is common
	Docs     map[string]int64 // chunks holding each common word
}

// AvgLen is the average chunk length in words.
func (s *TermStats) AvgLen() float64 {
	if s.Chunks == 0 {
		return 1
	}
	return float64(s.Tokens) / float64(s.Chunks)
}

// IDF is FTS5's bm25 inverse document frequency.
func IDF(chunks, docs int64) float64 {
	v := math.Log((float64(chunks) - float64(docs) + 0.5) / (float64(docs) + 0.5))
	if v <= 0 {
		v = 1e-6
	}
	return v
}

// stale tells whether the chunks grew by more than a tenth since s was
// counted.
func (s *TermStats) stale(maxChunk int64) bool {
	return maxChunk-s.MaxChunk > s.Chunks/10
}

// Words keeps the word statistics of one index database and scores
// chunks with them. The zero value is not usable: set DB and Name.
type Words struct {
	// DB is the index database.
	DB *sql.DB
	// Name prefixes errors, e.g. "mailindex".
	Name string
	// CommonMin is the least number of chunks holding a common word; 0
	// means CommonMin (tests lower it).
	CommonMin int

	mu sync.Mutex
	s  *TermStats
}

func (w *Words) errorf(what string, err error) error {
	return fmt.Errorf("%s: %s: %w", w.Name, what, err)
}

// Stats returns the word statistics, counting them anew when there are
// none yet or the chunks grew by more than a tenth since.
//
// Given the words of a query, a process that holds no snapshot yet reads
// the stored counts of those words alone (one lookup each in term_stats,
// instead of every common word): the returned snapshot then knows only
// them and is not kept. Without words, the whole snapshot is read and
// kept.
func (w *Words) Stats(ctx context.Context, words ...string) (*TermStats, error) {
	var maxChunk int64
	if err := w.DB.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) FROM chunks`).Scan(&maxChunk); err != nil {
		return nil, w.errorf("word statistics", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if s := w.s; s != nil && !s.stale(maxChunk) {
		// Kept unless another process stored newer counts since.
		var at int64
		err := w.DB.QueryRowContext(ctx, `SELECT max_chunk FROM term_stats_meta WHERE id = 1`).Scan(&at)
		if err != nil || at <= s.MaxChunk {
			return s, nil
		}
	}
	s, err := w.load(ctx, words)
	if err != nil {
		return nil, err
	}
	if s == nil || s.stale(maxChunk) {
		if s, err = w.count(ctx); err != nil {
			return nil, err
		}
	} else if len(words) > 0 {
		return s, nil
	}
	w.s = s
	return s, nil
}

// Forget drops the snapshot kept in memory, e.g. after chunks were deleted
// in bulk.
func (w *Words) Forget() {
	w.mu.Lock()
	w.s = nil
	w.mu.Unlock()
}

// Load reads the stored statistics; nil when none are stored.
func (w *Words) Load(ctx context.Context) (*TermStats, error) { return w.load(ctx, nil) }

// load reads the stored statistics, of the given words only when there
// are any; nil when none are stored.
func (w *Words) load(ctx context.Context, words []string) (*TermStats, error) {
	s := &TermStats{Docs: map[string]int64{}}
	err := w.DB.QueryRowContext(ctx, `SELECT chunks, tokens, max_chunk, cut FROM term_stats_meta WHERE id = 1`).
		Scan(&s.Chunks, &s.Tokens, &s.MaxChunk, &s.Cut)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, w.errorf("word statistics", err)
	}
	q, args := `SELECT term, docs FROM term_stats`, []any(nil)
	if len(words) > 0 {
		list, err := jsonList(words)
		if err != nil {
			return nil, w.errorf("word statistics", err)
		}
		q, args = `SELECT term, docs FROM term_stats WHERE term IN (SELECT value FROM json_each(?))`, []any{list}
	}
	rows, err := w.DB.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, w.errorf("word statistics", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		var n int64
		if err := rows.Scan(&t, &n); err != nil {
			return nil, w.errorf("word statistics", err)
		}
		s.Docs[t] = n
	}
	if err := rows.Err(); err != nil {
		return nil, w.errorf("word statistics", err)
	}
	return s, nil
}

// count reads the whole FTS5 vocabulary once (about a second at 100,000
// chunks) and stores the common words.
func (w *Words) count(ctx context.Context) (*TermStats, error) {
	s := &TermStats{Docs: map[string]int64{}}
	// Counted in a read transaction (one snapshot, no write lock held
	// while the vocabulary is read), stored in a short write one.
	tx, err := w.DB.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, w.errorf("count word statistics", err)
	}
	commonMin := w.CommonMin
	if commonMin <= 0 {
		commonMin = CommonMin
	}
	err = func() error {
		defer tx.Rollback()
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(MAX(id), 0) FROM chunks`).Scan(&s.Chunks, &s.MaxChunk); err != nil {
			return err
		}
		s.Cut = max(int64(commonMin), s.Chunks/CommonShare)
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
			if !CJKPair(t) {
				// A pair shares its position with its first character,
				// and FTS5 counts positions in a chunk's length.
				s.Tokens += cnt
			}
			if doc > s.Cut {
				s.Docs[t] = doc
			}
		}
		return rows.Err()
	}()
	if err != nil {
		return nil, w.errorf("count word statistics", err)
	}
	// Storing only saves the next process the counting: an index this
	// process cannot write is still searched with the counts.
	_ = func() error {
		tx, err := w.DB.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, `DELETE FROM term_stats`); err != nil {
			return err
		}
		for t, n := range s.Docs {
			if _, err := tx.ExecContext(ctx, `INSERT INTO term_stats(term, docs) VALUES(?, ?)`, t, n); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO term_stats_meta(id, chunks, tokens, max_chunk, cut) VALUES(1, ?, ?, ?, ?)`,
			s.Chunks, s.Tokens, s.MaxChunk, s.Cut); err != nil {
			return err
		}
		return tx.Commit()
	}()
	return s, nil
}

// Split parts the words of a query into the common ones (counted in st)
// and the rarer ones, keeping their order.
func (st *TermStats) Split(words []string) (rare, common []string) {
	for _, w := range words {
		if _, ok := st.Docs[w]; ok {
			common = append(common, w)
		} else {
			rare = append(rare, w)
		}
	}
	return rare, common
}

// Docs sums, from the FTS5 vocabulary, how many chunks hold each word of
// words. It only chooses a plan: every plan gives the same answer.
func (w *Words) Docs(ctx context.Context, words []string) (int64, error) {
	if len(words) == 0 {
		return 0, nil
	}
	list, err := jsonList(words)
	if err != nil {
		return 0, err
	}
	var docs int64
	if err := w.DB.QueryRowContext(ctx, `SELECT COALESCE(SUM(doc), 0) FROM chunks_vocab WHERE term IN (SELECT value FROM json_each(?))`,
		list).Scan(&docs); err != nil {
		return 0, w.errorf("search words", err)
	}
	return docs, nil
}

// Scorer ranks chunk texts by bm25 in Go, with the statistics of TermStats
// for common words and of the FTS5 vocabulary for the others; its scores
// equal FTS5's bm25 (negated: higher is better).
type Scorer struct {
	words  []string
	idf    []float64 // of each query word
	avgLen float64
	// ascii tells that every query word is a lower-case run of ASCII
	// letters and digits, as the tokenizer makes ASCII words: a text of
	// ASCII alone is then scored by a scan that folds no word.
	ascii bool
	// byLen has, for each word length up to 63, a bit per word (the first
	// 64) of that length.
	byLen [64]uint64
}

// NewScorer looks up how many chunks hold each word of the query.
func (w *Words) NewScorer(ctx context.Context, st *TermStats, words []string) (*Scorer, error) {
	sc := &Scorer{words: words, idf: make([]float64, len(words)), avgLen: st.AvgLen(), ascii: len(words) <= 64}
	for i, word := range words {
		docs, ok := st.Docs[word]
		if !ok {
			// Not common: reading its list is cheap.
			if err := w.DB.QueryRowContext(ctx, `SELECT COALESCE((SELECT doc FROM chunks_vocab WHERE term = ?), 0)`, word).Scan(&docs); err != nil {
				return nil, w.errorf("search words", err)
			}
		}
		sc.idf[i] = IDF(st.Chunks, docs)
		if !lowerASCIIWord(word) || len(word) >= len(sc.byLen) {
			sc.ascii = false
		} else if i < 64 {
			sc.byLen[len(word)] |= 1 << i
		}
	}
	return sc, nil
}

// lowerASCIIWord tells a non-empty run of a-z and 0-9.
func lowerASCIIWord(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return w != ""
}

// Score is the bm25 score of text for the query: the sum over the query's
// words in text of idf * tf*(k1+1) / (tf + k1*(1-b+b*len/avgLen)).
func (sc *Scorer) Score(text string) float64 {
	tf := make([]int, len(sc.words))
	n, ok := 0, false
	if sc.ascii {
		n, ok = sc.countASCII(text, tf)
	}
	if !ok {
		clear(tf)
		n = 0
		at := make(map[string]int, len(sc.words))
		for i, w := range sc.words {
			at[w] = i
		}
		_ = Tokenize(text, false, func(w string, _, _ int, colocated bool) error {
			if !colocated {
				n++
			}
			if i, ok := at[w]; ok {
				tf[i]++
			}
			return nil
		})
	}
	norm := K1 * (1 - B + B*float64(n)/sc.avgLen)
	var s float64
	for i, c := range tf {
		if c == 0 {
			continue
		}
		t := float64(c)
		s += sc.idf[i] * t * (K1 + 1) / (t + norm)
	}
	return s
}

// countASCII counts the tokens of text and, in tf, the query words among
// them, when text is ASCII; ok is false (and the counts unfinished) at
// the first byte that is not.
func (sc *Scorer) countASCII(text string, tf []int) (n int, ok bool) {
	i := 0
	for i < len(text) {
		c := text[i]
		if c >= 0x80 {
			return 0, false
		}
		if !asciiAlnum(c) {
			i++
			continue
		}
		j := i + 1
		for j < len(text) && asciiAlnum(text[j]) {
			j++
		}
		if j < len(text) && text[j] >= 0x80 {
			return 0, false
		}
		n++
		if l := j - i; l < len(sc.byLen) {
			for m := sc.byLen[l]; m != 0; m &= m - 1 {
				k := bits.TrailingZeros64(m)
				if equalFoldASCII(text[i:j], sc.words[k]) {
					tf[k]++
					break
				}
			}
		}
		i = j
	}
	return n, true
}

func asciiAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// equalFoldASCII tells whether s, ASCII letters and digits, lower-cased
// is w (lower-case already), both of one length.
func equalFoldASCII(s, w string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[i] {
			return false
		}
	}
	return true
}
