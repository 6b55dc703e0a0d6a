package mailindex

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/stewardhq/steward/store/searchindex"
)

// A query with a common word cannot be ranked over every match by FTS5
// within the time a search may take: at 100,000 chunks, bm25 over a word
// that most chunks hold costs 150-300 ms. searchCommon ranks a bounded
// set of candidates instead, all with the same bm25 score in Go
// (wordScorer), the way Elasticsearch's common terms query and mail
// programs that list the newest matches first do:
//
//   - a filter that leaves at most fewScored chunks: those chunks, so the
//     answer is exact;
//   - a query that also has rarer words: the best chunks by the rare words
//     alone (FTS5 over every match of them), re-ranked by all the words;
//   - a query of common words only: the newest newestRanked chunks holding
//     all of them (or, when too few do, any of them).
const (
	fewScored    = 400
	newestRanked = 400
	rerankFactor = 4
)

func (x *Index) searchCommon(ctx context.Context, mailboxID string, f Filter, st *searchindex.TermStats, words, rare, common []string, limit int) ([]Hit, error) {
	sc, err := x.words.NewScorer(ctx, st, words)
	if err != nil {
		return nil, err
	}
	if !f.isZero() {
		few, err := x.fewMails(ctx, mailboxID, f, fewScored)
		if err != nil {
			return nil, err
		}
		if few {
			ids, ok, err := x.filterChunks(ctx, mailboxID, f, fewScored)
			if err != nil {
				return nil, err
			}
			if ok {
				return x.rankChunks(ctx, sc, ids, limit)
			}
		}
	}
	var cands []int64
	if len(rare) > 0 {
		text := strings.Join(rare, " ")
		hits, err := x.searchWordsExact(ctx, mailboxID, f, text, searchindex.MatchQuery(text), max(limit*rerankFactor, 100))
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			cands = append(cands, h.ChunkID)
		}
		if len(hits) >= limit {
			return x.rankChunks(ctx, sc, cands, limit)
		}
		// Too few mails hold a rare word: the common words add theirs.
	}
	n := max(newestRanked, limit*10)
	if !f.isZero() {
		// Each match is checked against the filter one by one.
		n = max(newestRanked/2, limit*5)
	}
	all, err := x.newestMatches(ctx, mailboxID, f, searchindex.QuoteWords(common, " AND "), n)
	if err != nil {
		return nil, err
	}
	cands = append(cands, all...)
	if x.distinctMails(ctx, cands) < limit && len(common) > 1 {
		any, err := x.newestMatches(ctx, mailboxID, f, searchindex.QuoteWords(common, " OR "), n)
		if err != nil {
			return nil, err
		}
		cands = append(cands, any...)
	}
	return x.rankChunks(ctx, sc, cands, limit)
}

// fewMails tells whether one of the conditions of f that an index answers
// (folder, sender or recipient of three or more characters, date range)
// holds at most n mails, counting no further than n+1.
func (x *Index) fewMails(ctx context.Context, mailboxID string, f Filter, n int) (bool, error) {
	type count struct {
		q    string
		args []any
	}
	var cs []count
	if f.Folder != "" || f.SpecialUse != "" {
		q := `SELECT 1 FROM locations l JOIN folders fo ON fo.id = l.folder_id WHERE fo.mailbox_id = ?`
		args := []any{mailboxID}
		if f.Folder != "" {
			q += ` AND fo.path = ?`
			args = append(args, f.Folder)
		}
		if f.SpecialUse != "" {
			q += ` AND fo.special_use = ?`
			args = append(args, f.SpecialUse)
		}
		cs = append(cs, count{q, args})
	}
	for _, p := range []struct{ col, text string }{{"from_text", f.From}, {"to_text", f.To}} {
		if utf8.RuneCountInString(p.text) >= 3 {
			cs = append(cs, count{`SELECT 1 FROM mails_people WHERE mails_people MATCH ?`, []any{peopleMatch(p.col, p.text)}})
		}
	}
	if !f.After.IsZero() || !f.Before.IsZero() {
		q := `SELECT 1 FROM mails WHERE mailbox_id = ?`
		args := []any{mailboxID}
		if !f.After.IsZero() {
			q += ` AND received >= ?`
			args = append(args, f.After.Unix())
		}
		if !f.Before.IsZero() {
			q += ` AND received < ?`
			args = append(args, f.Before.Unix())
		}
		cs = append(cs, count{q, args})
	}
	for _, c := range cs {
		var k int
		if err := x.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM (`+c.q+` LIMIT ?)`, append(c.args, n+1)...).Scan(&k); err != nil {
			return false, fmt.Errorf("mailindex: search words: %w", err)
		}
		if k <= n {
			return true, nil
		}
	}
	return false, nil
}

// filterChunks lists the chunks of the mails meeting f when there are at
// most n (ok is false otherwise).
func (x *Index) filterChunks(ctx context.Context, mailboxID string, f Filter, n int) ([]int64, bool, error) {
	where, args := filterSQL(mailboxID, f)
	ids, err := x.chunkIDs(ctx, `SELECT c.id FROM mails m JOIN chunks c ON c.mail_id = m.id WHERE `+where+` LIMIT ?`, append(args, n+1)...)
	return ids, len(ids) <= n, err
}

// chunkIDs runs q, which selects one integer column, and returns its
// values in order.
func (x *Index) chunkIDs(ctx context.Context, q string, args ...any) ([]int64, error) {
	return searchindex.Int64s(ctx, x.db, "mailindex: search words", q, args...)
}

// newestMatches returns the IDs of the last-indexed n chunks matching the
// FTS5 query mq whose mails meet f.
func (x *Index) newestMatches(ctx context.Context, mailboxID string, f Filter, mq string, n int) ([]int64, error) {
	where, args := filterSQLPerMail(mailboxID, f)
	// CROSS JOIN keeps the FTS5 table outside, read from its last rowid.
	return x.chunkIDs(ctx, `SELECT t.rowid FROM chunks_fts t CROSS JOIN chunks c ON c.id = t.rowid CROSS JOIN mails m ON m.id = c.mail_id
		WHERE chunks_fts MATCH ? AND `+where+` ORDER BY t.rowid DESC LIMIT ?`, append(append([]any{mq}, args...), n)...)
}

// distinctMails counts the mails of chunk IDs (0 on error: the caller
// then widens, which is always correct).
func (x *Index) distinctMails(ctx context.Context, ids []int64) int {
	m, err := x.chunkMails(ctx, ids)
	if err != nil {
		return 0
	}
	seen := map[string]bool{}
	for _, mail := range m {
		seen[mail] = true
	}
	return len(seen)
}

// chunkMails maps chunk IDs to their mails.
func (x *Index) chunkMails(ctx context.Context, ids []int64) (map[int64]string, error) {
	return x.chunkColumn(ctx, `SELECT id, mail_id FROM chunks WHERE id IN (SELECT value FROM json_each(?))`, ids)
}

// chunkTextsIn reads the texts of chunks in one query from the FTS5
// content table.
func (x *Index) chunkTextsIn(ctx context.Context, ids []int64) (map[int64]string, error) {
	return x.chunkColumn(ctx, `SELECT id, c0 FROM chunks_fts_content WHERE id IN (SELECT value FROM json_each(?))`, ids)
}

// chunkColumn runs q, which selects a chunk ID and a text for the chunk
// IDs of its JSON list parameter, and maps one to the other.
func (x *Index) chunkColumn(ctx context.Context, q string, ids []int64) (map[int64]string, error) {
	return searchindex.TextsByID(ctx, x.db, "mailindex: read chunks", q, ids)
}

// rankChunks scores the candidate chunks, keeps those holding a word of
// the query and returns the best chunk of the best limit mails.
func (x *Index) rankChunks(ctx context.Context, sc *searchindex.Scorer, ids []int64, limit int) ([]Hit, error) {
	seenID := map[int64]bool{}
	uniq := ids[:0:0]
	for _, id := range ids {
		if !seenID[id] {
			seenID[id] = true
			uniq = append(uniq, id)
		}
	}
	texts, err := x.chunkTextsIn(ctx, uniq)
	if err != nil {
		return nil, err
	}
	mails, err := x.chunkMails(ctx, uniq)
	if err != nil {
		return nil, err
	}
	var hits []Hit
	for _, id := range uniq {
		t, ok := texts[id]
		mail, ok2 := mails[id]
		if !ok || !ok2 {
			continue // removed meanwhile
		}
		if s := sc.Score(t); s > 0 {
			hits = append(hits, Hit{MailID: mail, ChunkID: id, Score: s})
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].ChunkID < hits[j].ChunkID
	})
	out := BestPerMail(hits)
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
