package mailindex

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/stewardhq/steward/store/searchindex"
)

// RRFK is the reciprocal rank fusion constant (Cormack et al., 2009).
const RRFK = searchindex.RRFK

// filterSQL returns the WHERE clause over mails m for f (after the mailbox
// condition) and its arguments, for queries that go through many mails:
// a folder condition is a list of the folder's mails, built once.
func filterSQL(mailboxID string, f Filter) (string, []any) {
	return filterWhere(mailboxID, f, false)
}

// filterSQLPerMail is filterSQL for queries that check a few candidate
// mails one by one: a folder condition looks up the mail's locations
// (through locations_mail_folder), since a list of the folder's mails is not
// worth building there.
func filterSQLPerMail(mailboxID string, f Filter) (string, []any) {
	return filterWhere(mailboxID, f, true)
}

func filterWhere(mailboxID string, f Filter, perMail bool) (string, []any) {
	var w []string
	args := []any{mailboxID}
	if utf8.RuneCountInString(f.From) >= 3 || utf8.RuneCountInString(f.To) >= 3 {
		// The few mails of the trigram lookup drive the query; the
		// unary plus keeps the planner from scanning the mailbox instead.
		w = append(w, "+m.mailbox_id = ?")
	} else {
		w = append(w, "m.mailbox_id = ?")
	}
	// A mail whose last location went is pending removal: not found.
	w = append(w, "m.loc_count > 0")
	if f.Folder != "" || f.SpecialUse != "" {
		q := "m.id IN (SELECT l.mail_id FROM locations l JOIN folders fo ON fo.id = l.folder_id WHERE fo.mailbox_id = ?"
		end := ")"
		if perMail {
			q = "EXISTS (SELECT 1 FROM locations l INDEXED BY locations_mail_folder WHERE l.mail_id = m.id AND l.folder_id IN (SELECT fo.id FROM folders fo WHERE fo.mailbox_id = ?"
			end = "))"
		}
		args = append(args, mailboxID)
		if f.Folder != "" {
			q += " AND fo.path = ?"
			args = append(args, f.Folder)
		}
		if f.SpecialUse != "" {
			q += " AND fo.special_use = ?"
			args = append(args, f.SpecialUse)
		}
		w = append(w, q+end)
	}
	for _, p := range []struct{ col, text string }{{"from_text", f.From}, {"to_text", f.To}} {
		if p.text == "" {
			continue
		}
		if utf8.RuneCountInString(p.text) >= 3 {
			// The trigram index finds the substring; a shorter one has no
			// trigram to look up.
			w = append(w, "m.people_row IN (SELECT rowid FROM mails_people WHERE mails_people MATCH ?)")
			args = append(args, peopleMatch(p.col, p.text))
			continue
		}
		w = append(w, `m.`+p.col+` LIKE ? ESCAPE '\'`)
		args = append(args, likePattern(p.text))
	}
	if !f.After.IsZero() {
		w = append(w, "m.received >= ?")
		args = append(args, f.After.Unix())
	}
	if !f.Before.IsZero() {
		w = append(w, "m.received < ?")
		args = append(args, f.Before.Unix())
	}
	if f.Unread != nil {
		w = append(w, "m.any_seen = ?")
		args = append(args, b2i(!*f.Unread))
	}
	if f.Flagged != nil {
		w = append(w, "m.any_flagged = ?")
		args = append(args, b2i(*f.Flagged))
	}
	if f.Encrypted != nil {
		if *f.Encrypted {
			w = append(w, "m.encryption <> ''")
		} else {
			w = append(w, "m.encryption = ''")
		}
	}
	if f.HasAttachments != nil {
		w = append(w, "m.has_attachments = ?")
		args = append(args, b2i(*f.HasAttachments))
	}
	if f.Importance != "" {
		w = append(w, "m.importance = ?")
		args = append(args, f.Importance)
	}
	return strings.Join(w, " AND "), args
}

// peopleMatch is the FTS5 query for text as a substring of column col of
// mails_people.
func peopleMatch(col, text string) string {
	return col + ` : "` + strings.ReplaceAll(strings.ToLower(text), `"`, `""`) + `"`
}

func likePattern(s string) string {
	s = strings.ToLower(s)
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(s) + "%"
}

// MatchQuery turns free text into an FTS5 query: every word quoted (so no
// operator in the text is obeyed) and joined by OR, ranked by bm25. It is
// empty when the text holds no word.
func MatchQuery(text string) string { return searchindex.MatchQuery(text) }

// SearchWords returns up to limit mails meeting f whose text matches
// query by words, best first (bm25), each with its best chunk.
//
// A query with a common word (see terms.go) is ranked by searchCommon;
// the others by FTS5 over every match, exactly.
func (x *Index) SearchWords(ctx context.Context, mailboxID string, f Filter, query string, limit int) ([]Hit, error) {
	mq := MatchQuery(query)
	if mq == "" || limit <= 0 {
		return nil, nil
	}
	words := searchindex.QueryWords(query)
	st, err := x.termStats(ctx, words...)
	if err != nil {
		return nil, err
	}
	rare, common := st.Split(words)
	if len(common) > 0 {
		return x.searchCommon(ctx, mailboxID, f, st, words, rare, common, limit)
	}
	return x.searchWordsExact(ctx, mailboxID, f, query, mq, limit)
}

// searchWordsExact ranks every chunk that holds a word of query by FTS5's
// bm25.
func (x *Index) searchWordsExact(ctx context.Context, mailboxID string, f Filter, query, mq string, limit int) ([]Hit, error) {
	if !f.isZero() {
		docs, err := x.words.Docs(ctx, searchindex.QueryWords(query))
		if err != nil {
			return nil, err
		}
		// When the words are common, ranking the whole table is costly;
		// a selective filter leaves few chunks: rank only those. With few
		// matches that pays too when an index says the filter's mails are
		// few.
		inFew := docs >= int64(x.commonDocs)
		if !inFew && docs <= int64(x.fewMatches) {
			if inFew, err = x.fewMails(ctx, mailboxID, f, fewScored); err != nil {
				return nil, err
			}
		}
		if inFew {
			hits, ok, err := x.wordsInFew(ctx, mailboxID, f, mq, limit)
			if err != nil || ok {
				return hits, err
			}
		}
	}
	// Fast path: the best-ranked chunks of the whole table, then the mails
	// among them that belong here and meet f. Ranked in order, the first
	// chunk seen of a mail is its best, so the first limit mails are the
	// answer once enough candidates were read.
	start := limit * 4
	if !f.isZero() {
		// Each round ranks every matching chunk again: with a filter, whose
		// mails are fewer among the best, start wider.
		start = limit * 16
	}
	for k := start; k <= maxCandidates; k *= 4 {
		hits, complete, err := x.wordCandidates(ctx, mailboxID, f, mq, k, limit)
		if err != nil {
			return nil, err
		}
		if complete {
			return hits, nil
		}
	}
	return x.searchWordsExhaustive(ctx, mailboxID, f, mq, limit)
}

// fewChunks is how many chunks a filter may leave for wordsInFew to rank
// only those rather than rank the whole table.
const fewChunks = 50000

// commonDocs is how many chunks must hold the words before a filtered
// search considers wordsInFew: below it, ranking the whole table is cheap.
const commonDocs = 2000

// fewMatches is how many matches of a filtered word search are ranked
// all at once, each checked against the filter.
const fewMatches = 4000

// wordsInFew answers when the mails of the mailbox meeting f hold fewer
// than fewChunks chunks (ok is false otherwise): one pass over the words'
// matches keeps those chunks, and only they are ranked. The rowid test is
// written +t.rowid so FTS5 is not handed it: looked up one rowid at a
// time, bm25 would recount the matches of every word for each. bm25 uses
// the statistics of the whole table, so the scores equal those of the
// other paths; ties fall back to chunk order.
func (x *Index) wordsInFew(ctx context.Context, mailboxID string, f Filter, mq string, limit int) ([]Hit, bool, error) {
	ids, few, err := x.filterChunks(ctx, mailboxID, f, x.fewChunks-1)
	if err != nil {
		return nil, false, err
	}
	if !few {
		return nil, false, nil
	}
	if len(ids) == 0 {
		return nil, true, nil
	}
	b, err := json.Marshal(ids)
	if err != nil {
		return nil, false, err
	}
	rows, err := x.db.QueryContext(ctx, `SELECT t.rowid, c.mail_id, t.rank FROM chunks_fts t CROSS JOIN chunks c ON c.id = t.rowid
		WHERE chunks_fts MATCH ? AND +t.rowid IN (SELECT value FROM json_each(?)) ORDER BY t.rank, t.rowid`, mq, string(b))
	if err != nil {
		return nil, false, fmt.Errorf("mailindex: search words: %w", err)
	}
	defer rows.Close()
	seen := map[string]bool{}
	var hits []Hit
	for rows.Next() && len(hits) < limit {
		var h Hit
		if err := rows.Scan(&h.ChunkID, &h.MailID, &h.Score); err != nil {
			return nil, false, fmt.Errorf("mailindex: search words: %w", err)
		}
		if seen[h.MailID] {
			continue
		}
		seen[h.MailID] = true
		h.Score = -h.Score // bm25 is lower-is-better
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("mailindex: search words: %w", err)
	}
	return hits, true, nil
}

// maxCandidates bounds the fast path before the exhaustive query runs.
const maxCandidates = 8192

func (x *Index) wordCandidates(ctx context.Context, mailboxID string, f Filter, mq string, k, limit int) ([]Hit, bool, error) {
	rows, err := x.db.QueryContext(ctx, `SELECT rowid, rank FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank LIMIT ?`, mq, k)
	if err != nil {
		return nil, false, fmt.Errorf("mailindex: search words: %w", err)
	}
	type cand struct {
		id    int64
		score float64
	}
	var cands []cand
	for rows.Next() {
		var c cand
		if err := rows.Scan(&c.id, &c.score); err != nil {
			rows.Close()
			return nil, false, fmt.Errorf("mailindex: search words: %w", err)
		}
		cands = append(cands, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("mailindex: search words: %w", err)
	}
	exhausted := len(cands) < k
	if len(cands) == 0 {
		return nil, true, nil
	}
	where, args := filterSQLPerMail(mailboxID, f)
	seen := map[string]bool{}
	var hits []Hit
	// The candidates are checked against f a page at a time, in rank
	// order, so a search that most mails pass checks few more than it
	// returns.
	page := max(2*limit, 64)
	for from := 0; from < len(cands); from += page {
		part := cands[from:min(from+page, len(cands))]
		ids := make([]int64, len(part))
		for i, c := range part {
			ids[i] = c.id
		}
		list, err := json.Marshal(ids)
		if err != nil {
			return nil, false, err
		}
		// CROSS JOIN keeps the listed chunks (looked up by rowid) as the
		// outer loop.
		mrows, err := x.db.QueryContext(ctx, `SELECT c.id, c.mail_id FROM json_each(?) j CROSS JOIN chunks c ON c.id = j.value
			CROSS JOIN mails m ON m.id = c.mail_id WHERE `+where, append([]any{string(list)}, args...)...)
		if err != nil {
			return nil, false, fmt.Errorf("mailindex: search words: %w", err)
		}
		mailOf := map[int64]string{}
		for mrows.Next() {
			var id int64
			var mail string
			if err := mrows.Scan(&id, &mail); err != nil {
				mrows.Close()
				return nil, false, fmt.Errorf("mailindex: search words: %w", err)
			}
			mailOf[id] = mail
		}
		mrows.Close()
		if err := mrows.Err(); err != nil {
			return nil, false, fmt.Errorf("mailindex: search words: %w", err)
		}
		for _, c := range part {
			mail, ok := mailOf[c.id]
			if !ok || seen[mail] {
				continue
			}
			seen[mail] = true
			hits = append(hits, Hit{MailID: mail, ChunkID: c.id, Score: -c.score})
			if len(hits) == limit {
				return hits, true, nil
			}
		}
	}
	return hits, exhausted, nil
}

func (x *Index) searchWordsExhaustive(ctx context.Context, mailboxID string, f Filter, mq string, limit int) ([]Hit, error) {
	where, args := filterSQLPerMail(mailboxID, f)
	// bm25 cannot stand inside an aggregate; the materialized CTE ranks
	// every matching chunk first, then each mail keeps its best.
	q := `WITH h AS MATERIALIZED (
			SELECT c.mail_id AS mail_id, c.id AS chunk_id, bm25(chunks_fts) AS score FROM chunks_fts
			JOIN chunks c ON c.id = chunks_fts.rowid JOIN mails m ON m.id = c.mail_id
			WHERE chunks_fts MATCH ? AND ` + where + `)
		SELECT mail_id, chunk_id, MIN(score) FROM h GROUP BY mail_id ORDER BY MIN(score), mail_id LIMIT ?`
	rows, err := x.db.QueryContext(ctx, q, append(append([]any{mq}, args...), limit)...)
	if err != nil {
		return nil, fmt.Errorf("mailindex: search words: %w", err)
	}
	defer rows.Close()
	var out []Hit
	for rows.Next() {
		var h Hit
		if err := rows.Scan(&h.MailID, &h.ChunkID, &h.Score); err != nil {
			return nil, fmt.Errorf("mailindex: search words: %w", err)
		}
		h.Score = -h.Score // bm25 is lower-is-better
		out = append(out, h)
	}
	return out, rows.Err()
}

// EncodeVector writes a vector as a little-endian float32 blob.
func EncodeVector(v []float32) []byte { return searchindex.EncodeVector(v) }

// DecodeVector reads a little-endian float32 blob.
func DecodeVector(b []byte) []float32 { return searchindex.DecodeVector(b) }

// Cosine is the cosine similarity of two vectors of equal length; 0 when
// either is zero.
func Cosine(a, b []float32) float64 { return searchindex.Cosine(a, b) }

// BestPerMail keeps the first (best) chunk of each mail, in order.
func BestPerMail(hits []Hit) []Hit {
	seen := map[string]bool{}
	var out []Hit
	for _, h := range hits {
		if seen[h.MailID] {
			continue
		}
		seen[h.MailID] = true
		out = append(out, h)
	}
	return out
}

// Fuse merges ranked lists by reciprocal rank fusion with k = RRFK: each
// mail scores Σ 1/(k + rank) over the lists it appears in (ranks from 1,
// best chunk per mail), and keeps the chunk of the earliest list that has
// it. Ties keep the order of the earlier list, so the first list wins.
func Fuse(lists ...[]Hit) []Hit {
	best := make([][]Hit, len(lists))
	keys := make([][]string, len(lists))
	for i, l := range lists {
		best[i] = BestPerMail(l)
		keys[i] = make([]string, len(best[i]))
		for j, h := range best[i] {
			keys[i][j] = h.MailID
		}
	}
	fused := searchindex.Fuse(keys...)
	hits := make([]Hit, len(fused))
	for i, f := range fused {
		hits[i] = best[f.List][f.Rank]
		hits[i].Score = f.Score
	}
	return hits
}

// ChunkTexts returns the text of chunks by ID; IDs of chunks that are
// gone are left out.
func (x *Index) ChunkTexts(ctx context.Context, ids []int64) (map[int64]string, error) {
	return x.chunkTextsIn(ctx, ids)
}

// PendingChunks returns up to limit chunks of a mailbox with an ID above
// after, not yet embedded with model (never embedded, or with another
// model), in ID order. Pass the last ID of one call to the next.
func (x *Index) PendingChunks(ctx context.Context, mailboxID, model string, after int64, limit int) ([]ChunkText, error) {
	// CROSS JOIN keeps chunks, read in ID order from after, as the outer
	// loop: each call then costs what it returns, not the whole mailbox.
	rows, err := x.db.QueryContext(ctx, `SELECT c.id, t.text FROM chunks c CROSS JOIN mails m ON m.id = c.mail_id
		CROSS JOIN chunks_fts t ON t.rowid = c.id
		WHERE c.id > ? AND m.mailbox_id = ? AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.chunk_id = c.id AND e.model = ?)
		ORDER BY c.id LIMIT ?`, after, mailboxID, model, limit)
	if err != nil {
		return nil, fmt.Errorf("mailindex: pending chunks: %w", err)
	}
	defer rows.Close()
	var out []ChunkText
	for rows.Next() {
		var c ChunkText
		if err := rows.Scan(&c.ID, &c.Text); err != nil {
			return nil, fmt.Errorf("mailindex: pending chunks: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// SetEmbeddings stores the embeddings of chunks, made with model.
func (x *Index) SetEmbeddings(ctx context.Context, model string, vecs map[int64][]float32) error {
	if len(vecs) == 0 {
		return nil
	}
	return x.withTx(ctx, func(tx *sql.Tx) error {
		if err := searchindex.StoreVectors(ctx, tx, model, vecs); err != nil {
			return fmt.Errorf("mailindex: set embeddings: %w", err)
		}
		return nil
	})
}

// EmbeddingCoverage counts a mailbox's chunks and those embedded with model.
func (x *Index) EmbeddingCoverage(ctx context.Context, mailboxID, model string) (chunks, embedded int64, err error) {
	err = x.db.QueryRowContext(ctx, `SELECT COUNT(*), COUNT(e.chunk_id)
		FROM chunks c JOIN mails m ON m.id = c.mail_id LEFT JOIN embeddings e ON e.chunk_id = c.id AND e.model = ?
		WHERE m.mailbox_id = ?`, model, mailboxID).Scan(&chunks, &embedded)
	if err != nil {
		return 0, 0, fmt.Errorf("mailindex: embedding coverage: %w", err)
	}
	return chunks, embedded, nil
}

// List returns the IDs of mails meeting f, most recently received first,
// skipping offset and returning up to limit; more tells whether further
// mails exist.
func (x *Index) List(ctx context.Context, mailboxID string, f Filter, offset, limit int) (ids []string, more bool, err error) {
	where, args := filterSQL(mailboxID, f)
	rows, err := x.db.QueryContext(ctx, `SELECT m.id FROM mails m WHERE `+where+` ORDER BY m.received DESC, m.id LIMIT ? OFFSET ?`,
		append(args, limit+1, offset)...)
	if err != nil {
		return nil, false, fmt.Errorf("mailindex: list: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, false, fmt.Errorf("mailindex: list: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("mailindex: list: %w", err)
	}
	if len(ids) > limit {
		return ids[:limit], true, nil
	}
	return ids, false, nil
}

// Summaries returns what a result list shows of the given mails, in the
// order of ids; unknown IDs are left out. It reads all of them with three
// queries (mails, locations, attachments), whatever their number: a result
// page would otherwise pay three prepared statements per mail.
func (x *Index) Summaries(ctx context.Context, mailboxID string, ids []string) ([]Summary, error) {
	if len(ids) == 0 {
		return []Summary{}, nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, fmt.Errorf("mailindex: mails: %w", err)
	}
	byID := make(map[string]*Summary, len(ids))
	rows, err := x.db.QueryContext(ctx, `SELECT id, sent, received, addresses, subject, importance, encryption, has_attachments, message_id, in_reply_to
		FROM mails WHERE +mailbox_id=? AND id IN (SELECT value FROM json_each(?))`, mailboxID, string(list))
	if err != nil {
		return nil, fmt.Errorf("mailindex: mails: %w", err)
	}
	for rows.Next() {
		s, err := scanSummary(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		byID[s.ID] = &s
	}
	if err := closeRows(rows, "mails"); err != nil {
		return nil, err
	}
	if err := x.eachLocation(ctx, `l.mail_id IN (SELECT value FROM json_each(?))`, string(list), func(mailID string, l Location) {
		if s := byID[mailID]; s != nil {
			s.Locations = append(s.Locations, l)
		}
	}); err != nil {
		return nil, err
	}
	if err := x.eachAttachment(ctx, `mail_id IN (SELECT value FROM json_each(?))`, string(list), false, func(mailID string, a Attachment) {
		if s := byID[mailID]; s != nil {
			s.Attachments = append(s.Attachments, a)
		}
	}); err != nil {
		return nil, err
	}
	out := make([]Summary, 0, len(byID))
	for _, id := range ids {
		if s := byID[id]; s != nil {
			out = append(out, *s)
			delete(byID, id) // an ID asked for twice is listed once
		}
	}
	return out, nil
}

// rowScanner is *sql.Row and *sql.Rows.
type rowScanner interface{ Scan(dest ...any) error }

// scanSummary reads the mails columns that Summaries and summary select.
func scanSummary(r rowScanner) (Summary, error) {
	var s Summary
	var sent, received int64
	var addrs string
	if err := r.Scan(&s.ID, &sent, &received, &addrs, &s.Subject, &s.Importance, &s.Encryption,
		&s.HasAttachments, &s.MessageID, &s.InReplyTo); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return s, ErrNotFound
		}
		return s, fmt.Errorf("mailindex: mail: %w", err)
	}
	s.Sent, s.Received = fromUnix(sent), fromUnix(received)
	if err := json.Unmarshal([]byte(addrs), &s.Addresses); err != nil {
		return s, fmt.Errorf("mailindex: mail addresses: %w", err)
	}
	return s, nil
}

func closeRows(rows *sql.Rows, what string) error {
	err := rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("mailindex: %s: %w", what, err)
	}
	return nil
}

func (x *Index) summary(ctx context.Context, mailboxID, id string) (Summary, error) {
	s, err := scanSummary(x.db.QueryRowContext(ctx, `SELECT id, sent, received, addresses, subject, importance, encryption, has_attachments, message_id, in_reply_to
		FROM mails WHERE mailbox_id=? AND id=?`, mailboxID, id))
	if err != nil {
		return s, err
	}
	if s.Locations, err = x.locations(ctx, id); err != nil {
		return s, err
	}
	if s.Attachments, err = x.attachments(ctx, id, false); err != nil {
		return s, err
	}
	return s, nil
}

func (x *Index) locations(ctx context.Context, mailID string) ([]Location, error) {
	var out []Location
	err := x.eachLocation(ctx, `l.mail_id = ?`, mailID, func(_ string, l Location) { out = append(out, l) })
	return out, err
}

// eachLocation calls fn for each location that where (on locations l,
// with one argument) selects, ordered by mail, folder path and UID.
func (x *Index) eachLocation(ctx context.Context, where string, arg any, fn func(mailID string, l Location)) error {
	rows, err := x.db.QueryContext(ctx, `SELECT l.mail_id, f.path, f.special_use, l.uid, l.seen, l.flagged, l.answered, l.draft, l.deleted
		FROM locations l JOIN folders f ON f.id = l.folder_id WHERE `+where+` ORDER BY l.mail_id, f.path, l.uid`, arg)
	if err != nil {
		return fmt.Errorf("mailindex: locations: %w", err)
	}
	for rows.Next() {
		var mailID string
		var l Location
		if err := rows.Scan(&mailID, &l.Folder, &l.SpecialUse, &l.UID, &l.Flags.Seen, &l.Flags.Flagged, &l.Flags.Answered, &l.Flags.Draft, &l.Flags.Deleted); err != nil {
			rows.Close()
			return fmt.Errorf("mailindex: locations: %w", err)
		}
		fn(mailID, l)
	}
	return closeRows(rows, "locations")
}

func (x *Index) attachments(ctx context.Context, mailID string, withText bool) ([]Attachment, error) {
	var out []Attachment
	err := x.eachAttachment(ctx, `mail_id = ?`, mailID, withText, func(_ string, a Attachment) { out = append(out, a) })
	return out, err
}

// eachAttachment calls fn for each attachment of the mails that where
// (on parts, with one argument) selects, ordered by mail and number; the
// text is read only withText.
func (x *Index) eachAttachment(ctx context.Context, where string, arg any, withText bool, fn func(mailID string, a Attachment)) error {
	col := "''"
	if withText {
		col = "text"
	}
	rows, err := x.db.QueryContext(ctx, `SELECT mail_id, number, name, type, size, state, `+col+` FROM parts WHERE `+where+` AND kind='ATTACHMENT' ORDER BY mail_id, number`, arg)
	if err != nil {
		return fmt.Errorf("mailindex: attachments: %w", err)
	}
	for rows.Next() {
		var mailID string
		var a Attachment
		if err := rows.Scan(&mailID, &a.Number, &a.Name, &a.Type, &a.Size, &a.State, &a.Text); err != nil {
			rows.Close()
			return fmt.Errorf("mailindex: attachments: %w", err)
		}
		fn(mailID, a)
	}
	return closeRows(rows, "attachments")
}

// Mail returns a mail with its parts and locations, or ErrNotFound.
func (x *Index) Mail(ctx context.Context, mailboxID, id string) (*Mail, error) {
	s, err := x.summary(ctx, mailboxID, id)
	if err != nil {
		return nil, err
	}
	m := &Mail{ID: s.ID, MailboxID: mailboxID, MessageID: s.MessageID, InReplyTo: s.InReplyTo, Sent: s.Sent, Received: s.Received,
		Addresses: s.Addresses, Subject: s.Subject, Importance: s.Importance, Encryption: s.Encryption, HasAttachments: s.HasAttachments,
		Locations: s.Locations}
	var refs string
	if err := x.db.QueryRowContext(ctx, `SELECT content_key, refs, size FROM mails WHERE id=?`, id).Scan(&m.ContentKey, &refs, &m.Size); err != nil {
		return nil, fmt.Errorf("mailindex: mail: %w", err)
	}
	m.References = strings.Fields(refs)
	rows, err := x.db.QueryContext(ctx, `SELECT kind, text FROM parts WHERE mail_id=? AND kind IN ('HEADERS','BODY')`, id)
	if err != nil {
		return nil, fmt.Errorf("mailindex: mail parts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var kind, text string
		if err := rows.Scan(&kind, &text); err != nil {
			return nil, fmt.Errorf("mailindex: mail parts: %w", err)
		}
		if kind == "HEADERS" {
			m.Headers = text
		} else {
			m.Body = text
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("mailindex: mail parts: %w", err)
	}
	if m.Attachments, err = x.attachments(ctx, id, true); err != nil {
		return nil, err
	}
	return m, nil
}

// MailIDByMessageID returns the ID of the mail with the given Message-ID
// that still lies in a folder.
func (x *Index) MailIDByMessageID(ctx context.Context, mailboxID, messageID string) (string, bool, error) {
	if messageID == "" {
		return "", false, nil
	}
	var id string
	err := x.db.QueryRowContext(ctx, `SELECT m.id FROM mails m WHERE m.mailbox_id=? AND m.message_id=?
		AND m.loc_count > 0 ORDER BY m.received LIMIT 1`, mailboxID, messageID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("mailindex: by message id: %w", err)
	}
	return id, true, nil
}

// Group-by keys for Count.
const (
	GroupNone   = ""
	GroupFolder = "folder"
	GroupSender = "sender"
)

// Count counts the mails meeting f (a mail in two folders counts once),
// grouped by folder or sender on request, the largest maxGroups groups
// first. Server counts come from the last sync of the counted folders.
func (x *Index) Count(ctx context.Context, mailboxID string, f Filter, groupBy string, maxGroups int) (Count, error) {
	where, args := filterSQL(mailboxID, f)
	c := Count{ServerMessages: -1, ServerUnseen: -1}
	if err := x.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM mails m WHERE `+where, args...).Scan(&c.Mails); err != nil {
		return c, fmt.Errorf("mailindex: count: %w", err)
	}
	// Server counts: the folders the filter counts in.
	fq := `SELECT COUNT(*), COALESCE(SUM(server_messages),0), COALESCE(SUM(server_unseen),0), COALESCE(MIN(server_messages),-1), COALESCE(MIN(server_unseen),-1)
		FROM folders WHERE mailbox_id=?`
	fargs := []any{mailboxID}
	if f.Folder != "" {
		fq += " AND path=?"
		fargs = append(fargs, f.Folder)
	}
	if f.SpecialUse != "" {
		fq += " AND special_use=?"
		fargs = append(fargs, f.SpecialUse)
	}
	var n, sm, su, minM, minU int64
	if err := x.db.QueryRowContext(ctx, fq, fargs...).Scan(&n, &sm, &su, &minM, &minU); err != nil {
		return c, fmt.Errorf("mailindex: count server: %w", err)
	}
	if n > 0 && minM >= 0 {
		c.ServerMessages = sm
	}
	if n > 0 && minU >= 0 {
		c.ServerUnseen = su
	}
	var q string
	switch groupBy {
	case GroupNone:
		return c, nil
	case GroupFolder:
		q = `SELECT fo.path, COUNT(DISTINCT m.id), fo.server_messages, fo.server_unseen FROM mails m
			JOIN locations lg ON lg.mail_id = m.id JOIN folders fo ON fo.id = lg.folder_id
			WHERE ` + where
		if f.Folder != "" {
			q += " AND fo.path = ?"
			args = append(args, f.Folder)
		}
		if f.SpecialUse != "" {
			q += " AND fo.special_use = ?"
			args = append(args, f.SpecialUse)
		}
		q += ` GROUP BY fo.id ORDER BY 2 DESC, fo.path LIMIT ?`
	case GroupSender:
		q = `SELECT m.from_addr, COUNT(*), -1, -1 FROM mails m WHERE ` + where + ` GROUP BY m.from_addr ORDER BY 2 DESC, m.from_addr LIMIT ?`
	default:
		return c, fmt.Errorf("mailindex: count: unknown grouping %q: use folder or sender", groupBy)
	}
	rows, err := x.db.QueryContext(ctx, q, append(args, maxGroups+1)...)
	if err != nil {
		return c, fmt.Errorf("mailindex: count groups: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var g Group
		if err := rows.Scan(&g.Key, &g.Mails, &g.ServerMessages, &g.ServerUnseen); err != nil {
			return c, fmt.Errorf("mailindex: count groups: %w", err)
		}
		c.Groups = append(c.Groups, g)
	}
	if err := rows.Err(); err != nil {
		return c, fmt.Errorf("mailindex: count groups: %w", err)
	}
	if len(c.Groups) > maxGroups {
		c.Groups, c.MoreGroups = c.Groups[:maxGroups], true
	}
	return c, nil
}

// Stats are the size figures of a mailbox in the index.
type Stats struct {
	Mails    int64 `json:"mails"`
	Chunks   int64 `json:"chunks"`
	Embedded int64 `json:"embedded_chunks"`
}

// Stats counts a mailbox's mails and chunks.
func (x *Index) Stats(ctx context.Context, mailboxID string) (Stats, error) {
	var s Stats
	if err := x.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM mails WHERE mailbox_id=?`, mailboxID).Scan(&s.Mails); err != nil {
		return s, fmt.Errorf("mailindex: stats: %w", err)
	}
	if err := x.db.QueryRowContext(ctx, `SELECT COUNT(*), COUNT(e.chunk_id) FROM chunks c JOIN mails m ON m.id=c.mail_id
		LEFT JOIN embeddings e ON e.chunk_id = c.id WHERE m.mailbox_id=?`, mailboxID).Scan(&s.Chunks, &s.Embedded); err != nil {
		return s, fmt.Errorf("mailindex: stats: %w", err)
	}
	return s, nil
}
