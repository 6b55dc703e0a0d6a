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
	var cands []chunkRow
	if len(rare) > 0 {
		text := strings.Join(rare, " ")
		hits, err := x.searchWordsExact(ctx, mailboxID, f, text, searchindex.MatchQuery(text), max(limit*rerankFactor, 100))
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			cands = append(cands, chunkRow{id: h.ChunkID, mail: h.MailID})
		}
		if len(hits) >= limit {
			return x.rankChunkRows(ctx, sc, cands, limit)
		}
		// Too few mails hold a rare word: the common words add theirs.
	}
	n := max(newestRanked, limit*5)
	if !f.isZero() {
		// Each match is checked against the filter one by one.
		n = max(newestRanked/2, limit*5)
	}
	// Without a filter, in an index of this mailbox alone, the newest
	// matches need not be looked up in mails one by one (the most costly
	// part of the search: mail IDs are random, so each lookup reads pages
	// of its own); only the mails that make the answer are then checked
	// for not pending removal.
	alone := f.isZero() && x.onlyMailbox(ctx, mailboxID)
	all, err := x.newestMatches(ctx, mailboxID, f, searchindex.QuoteWords(common, " AND "), n, !alone)
	if err != nil {
		return nil, err
	}
	cands = append(cands, all...)
	if distinctMails(cands) < limit && len(common) > 1 {
		any, err := x.newestMatches(ctx, mailboxID, f, searchindex.QuoteWords(common, " OR "), n, !alone)
		if err != nil {
			return nil, err
		}
		cands = append(cands, any...)
	}
	hits, err := x.rankChunkRows(ctx, sc, cands, -1)
	if err != nil || !alone {
		return cutHits(hits, limit), err
	}
	return x.liveHits(ctx, hits, limit)
}

// onlyMailbox tells whether every mail of the index is mailboxID's (two
// lookups in mails_received; false on error, which only costs time).
func (x *Index) onlyMailbox(ctx context.Context, mailboxID string) bool {
	var other bool
	err := x.db.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM mails WHERE mailbox_id < ?) OR EXISTS(SELECT 1 FROM mails WHERE mailbox_id > ?)`,
		mailboxID, mailboxID).Scan(&other)
	return err == nil && !other
}

// liveHits keeps, in order, the first limit hits whose mails are not
// pending removal (a mail whose last location went), checking a page of
// mails at a time.
func (x *Index) liveHits(ctx context.Context, hits []Hit, limit int) ([]Hit, error) {
	var out []Hit
	page := max(limit+limit/4, 32)
	for from := 0; from < len(hits) && len(out) < limit; from += page {
		part := hits[from:min(from+page, len(hits))]
		ids := make([]string, len(part))
		for i, h := range part {
			ids[i] = h.MailID
		}
		list, err := searchindex.JSONList(ids)
		if err != nil {
			return nil, err
		}
		live, err := x.idSet(ctx, "search words", `SELECT id FROM mails WHERE id IN (SELECT value FROM json_each(?)) AND loc_count > 0`, list)
		if err != nil {
			return nil, err
		}
		for _, h := range part {
			if live[h.MailID] && len(out) < limit {
				out = append(out, h)
			}
		}
	}
	return out, nil
}

// cutHits keeps the first limit hits (all when limit is negative).
func cutHits(hits []Hit, limit int) []Hit {
	if limit >= 0 && len(hits) > limit {
		return hits[:limit]
	}
	return hits
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

// chunkRow is a candidate chunk: its ID, its mail and, when read with
// it, its text (hasText).
type chunkRow struct {
	id         int64
	mail, text string
	hasText    bool
}

// newestMatches returns the last-indexed n chunks matching the FTS5 query
// mq whose mails meet f, with their mails and texts: one pass over the
// newest rows, instead of a lookup per chunk in three more queries.
//
// With joinMails false, the mails are not read: every chunk matching mq
// is a candidate, whichever mail it is of (for an index of one mailbox
// and no filter, see searchCommon).
func (x *Index) newestMatches(ctx context.Context, mailboxID string, f Filter, mq string, n int, joinMails bool) ([]chunkRow, error) {
	// CROSS JOIN keeps the FTS5 table outside, read from its last rowid.
	q := `SELECT t.rowid, c.mail_id, t.text FROM chunks_fts t CROSS JOIN chunks c ON c.id = t.rowid WHERE chunks_fts MATCH ? ORDER BY t.rowid DESC LIMIT ?`
	args := []any{mq, n}
	if joinMails {
		where, wargs := filterSQLPerMail(mailboxID, f)
		q = `SELECT t.rowid, c.mail_id, t.text FROM chunks_fts t CROSS JOIN chunks c ON c.id = t.rowid CROSS JOIN mails m ON m.id = c.mail_id
		WHERE chunks_fts MATCH ? AND ` + where + ` ORDER BY t.rowid DESC LIMIT ?`
		args = append(append([]any{mq}, wargs...), n)
	}
	rows, err := x.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("mailindex: search words: %w", err)
	}
	defer rows.Close()
	var out []chunkRow
	for rows.Next() {
		r := chunkRow{hasText: true}
		if err := rows.Scan(&r.id, &r.mail, &r.text); err != nil {
			return nil, fmt.Errorf("mailindex: search words: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("mailindex: search words: %w", err)
	}
	return out, nil
}

// distinctMails counts the mails of candidate chunks.
func distinctMails(rows []chunkRow) int {
	seen := map[string]bool{}
	for _, r := range rows {
		seen[r.mail] = true
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
	rows := make([]chunkRow, len(ids))
	for i, id := range ids {
		rows[i].id = id
	}
	return x.rankChunkRows(ctx, sc, rows, limit)
}

// rankChunkRows is rankChunks for candidates whose mails and texts may be
// known already; the others are read in one query each. A negative limit
// keeps every mail.
func (x *Index) rankChunkRows(ctx context.Context, sc *searchindex.Scorer, cands []chunkRow, limit int) ([]Hit, error) {
	seenID := map[int64]bool{}
	uniq := cands[:0:0]
	var needText, needMail []int64
	for _, c := range cands {
		if seenID[c.id] {
			continue
		}
		seenID[c.id] = true
		uniq = append(uniq, c)
		if !c.hasText {
			needText = append(needText, c.id)
		}
		if c.mail == "" {
			needMail = append(needMail, c.id)
		}
	}
	texts, err := x.chunkTextsIn(ctx, needText)
	if err != nil {
		return nil, err
	}
	mails, err := x.chunkMails(ctx, needMail)
	if err != nil {
		return nil, err
	}
	var hits []Hit
	for _, c := range uniq {
		if !c.hasText {
			t, ok := texts[c.id]
			if !ok {
				continue // removed meanwhile
			}
			c.text = t
		}
		if c.mail == "" {
			m, ok := mails[c.id]
			if !ok {
				continue // removed meanwhile
			}
			c.mail = m
		}
		if s := sc.Score(c.text); s > 0 {
			hits = append(hits, Hit{MailID: c.mail, ChunkID: c.id, Score: s})
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].ChunkID < hits[j].ChunkID
	})
	return cutHits(BestPerMail(hits), limit), nil
}
