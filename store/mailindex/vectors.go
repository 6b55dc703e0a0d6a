package mailindex

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"sync"

	"github.com/stewardhq/steward/store/searchindex"
)

// vectorCache keeps a mailbox's embeddings in memory, normalized, so a
// search by meaning does not read every blob from disk. A set is rebuilt
// when the index changed since it was loaded.
type vectorCache struct {
	mu   sync.Mutex
	sets map[string]*vectorSet
}

type vectorSet struct {
	gen    uint64
	dim    int
	chunks []int64
	mails  []string
	data   []float32 // len(chunks)*dim, each vector of length 1 (or 0)
	// ord numbers the distinct mails of the set: ord[i] is the mail of
	// chunk i, ids[ord[i]] its ID.
	ord []int32
	ids []string
}

func (x *Index) vectorSet(ctx context.Context, mailboxID, model string, dim int) (*vectorSet, error) {
	key := mailboxID + "\x00" + model + "\x00" + fmt.Sprint(dim)
	x.vectors.mu.Lock()
	defer x.vectors.mu.Unlock()
	gen := x.gen.Load()
	if s, ok := x.vectors.sets[key]; ok && s.gen == gen && gen%2 == 0 {
		return s, nil
	}
	// The mailbox's mails, so each vector's chunk needs no mail lookup.
	inBox, err := x.idSet(ctx, "load vectors", `SELECT id FROM mails WHERE mailbox_id = ?`, mailboxID)
	if err != nil {
		return nil, err
	}
	// CROSS JOIN reads the vectors in their table's order, which is the
	// order wanted: sorting 100,000 rows of blobs instead cost ten times
	// the reading.
	rows, err := x.db.QueryContext(ctx, `SELECT e.chunk_id, c.mail_id, e.vector FROM embeddings e CROSS JOIN chunks c ON c.id = e.chunk_id
		WHERE e.model = ? AND e.dim = ? ORDER BY e.chunk_id`, model, dim)
	if err != nil {
		return nil, fmt.Errorf("mailindex: load vectors: %w", err)
	}
	defer rows.Close()
	s := &vectorSet{gen: gen, dim: dim}
	m := searchindex.NewMatrix(dim)
	for rows.Next() {
		var id int64
		var mail string
		// RawBytes: the blob is decoded in place, not copied first.
		var blob sql.RawBytes
		if err := rows.Scan(&id, &mail, &blob); err != nil {
			return nil, fmt.Errorf("mailindex: load vectors: %w", err)
		}
		if !inBox[mail] || !m.AppendBlob(blob) {
			continue
		}
		s.chunks = append(s.chunks, id)
		s.mails = append(s.mails, mail)
	}
	m.Done()
	s.data = m.Data
	ordOf := map[string]int32{}
	s.ord = make([]int32, len(s.mails))
	for i, m := range s.mails {
		o, ok := ordOf[m]
		if !ok {
			o = int32(len(s.ids))
			ordOf[m] = o
			s.ids = append(s.ids, m)
		}
		s.ord[i] = o
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("mailindex: load vectors: %w", err)
	}
	if x.vectors.sets == nil {
		x.vectors.sets = map[string]*vectorSet{}
	}
	// Only a set loaded while no write ran (even generation, unchanged) is
	// kept for the next search.
	if gen%2 == 0 && x.gen.Load() == gen {
		x.vectors.sets[key] = s
	} else {
		delete(x.vectors.sets, key)
	}
	return s, nil
}

// isZero reports whether f filters nothing.
func (f Filter) isZero() bool {
	return f.Folder == "" && f.SpecialUse == "" && f.From == "" && f.To == "" && f.After.IsZero() && f.Before.IsZero() &&
		f.Unread == nil && f.Flagged == nil && f.Encrypted == nil && f.HasAttachments == nil && f.Importance == ""
}

// matchingMails returns the IDs of the mails meeting f.
func (x *Index) matchingMails(ctx context.Context, mailboxID string, f Filter) (map[string]bool, error) {
	where, args := filterSQL(mailboxID, f)
	return x.idSet(ctx, "filter mails", `SELECT m.id FROM mails m WHERE `+where, args...)
}

// idSet runs q, which selects one text column, and returns its values as
// a set; what names the step in an error.
func (x *Index) idSet(ctx context.Context, what, q string, args ...any) (map[string]bool, error) {
	return searchindex.IDSet(ctx, x.db, "mailindex: "+what, q, args...)
}

// SearchVector returns up to limit mails meeting f closest to vec by exact
// cosine over their chunks embedded with model, each with its best chunk.
func (x *Index) SearchVector(ctx context.Context, mailboxID string, f Filter, model string, vec []float32, limit int) ([]Hit, error) {
	if len(vec) == 0 || limit <= 0 {
		return nil, nil
	}
	set, err := x.vectorSet(ctx, mailboxID, model, len(vec))
	if err != nil {
		return nil, err
	}
	var eligible map[string]bool
	if !f.isZero() {
		// A filter an index answers with few mails: list them.
		few, err := x.fewMails(ctx, mailboxID, f, fewScored)
		if err != nil {
			return nil, err
		}
		if few {
			if eligible, err = x.matchingMails(ctx, mailboxID, f); err != nil {
				return nil, err
			}
		}
	}
	q := append([]float32(nil), vec...)
	searchindex.Normalize(q)
	// Each mail's best chunk.
	best := make([]float32, len(set.ids))
	bestChunk := make([]int32, len(set.ids))
	for i := range best {
		best[i] = float32(math.Inf(-1))
	}
	for i, o := range set.ord {
		if eligible != nil && !eligible[set.ids[o]] {
			continue
		}
		d := searchindex.Dot(q, set.data[i*set.dim:(i+1)*set.dim])
		if d > best[o] || d == best[o] && set.chunks[i] < set.chunks[bestChunk[o]] {
			best[o], bestChunk[o] = d, int32(i)
		}
	}
	hits := make([]Hit, 0, len(best))
	for o, b := range best {
		if !math.IsInf(float64(b), -1) {
			i := bestChunk[o]
			hits = append(hits, Hit{MailID: set.ids[o], ChunkID: set.chunks[i], Score: float64(b)})
		}
	}
	if eligible != nil {
		return topHits(hits, limit), nil
	}
	// Otherwise the best mails are checked against f (and, without a
	// filter, for mails pending removal) a window at a time, wider each
	// round, until limit of them pass or every mail was checked.
	var out []Hit
	checked := 0
	for k := 16 * limit; ; k *= 4 {
		top := topHits(hits, min(k, len(hits)))
		if out, err = x.meeting(ctx, mailboxID, f, top[:], limit, &checked, out); err != nil {
			return nil, err
		}
		if len(out) >= limit || len(top) == len(hits) {
			return out, nil
		}
		if 4*k > x.maxVectorChecks {
			// f passes few of the best: list the mails meeting it once.
			eligible, err := x.matchingMails(ctx, mailboxID, f)
			if err != nil {
				return nil, err
			}
			rest := make([]Hit, 0, len(hits)-checked)
			for _, h := range hits[checked:] {
				if eligible[h.MailID] {
					rest = append(rest, h)
				}
			}
			return append(out, topHits(rest, limit-len(out))...), nil
		}
	}
}

// maxVectorChecks is how many of the best mails a search by meaning
// checks against its filter one window at a time before it lists the
// mails meeting the filter instead.
const maxVectorChecks = 16384

// meeting appends to out, in order, the hits of top[*checked:] whose mail
// meets f and has a location, until out holds limit; *checked advances
// past the hits looked at.
func (x *Index) meeting(ctx context.Context, mailboxID string, f Filter, top []Hit, limit int, checked *int, out []Hit) ([]Hit, error) {
	where, args := filterSQLPerMail(mailboxID, f)
	for *checked < len(top) && len(out) < limit {
		page := top[*checked:min(*checked+4*limit, len(top))]
		*checked += len(page)
		ids := make([]string, len(page))
		for i, h := range page {
			ids[i] = h.MailID
		}
		list, err := json.Marshal(ids)
		if err != nil {
			return nil, err
		}
		// CROSS JOIN keeps the listed mails as the outer loop.
		ok, err := x.idSet(ctx, "filter mails", `SELECT m.id FROM json_each(?) j CROSS JOIN mails m ON m.id = j.value WHERE `+where,
			append([]any{string(list)}, args...)...)
		if err != nil {
			return nil, err
		}
		for _, h := range page {
			if ok[h.MailID] && len(out) < limit {
				out = append(out, h)
			}
		}
	}
	return out, nil
}

// hitBefore orders vector hits: higher score first, then lower chunk ID.
// Chunk IDs are unique, so the order is total.
func hitBefore(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.ChunkID < b.ChunkID
}

// topHits returns the first k hits in hitBefore order, sorted, without
// sorting all of them; it reorders hits.
func topHits(hits []Hit, k int) []Hit { return searchindex.TopK(hits, k, hitBefore) }
