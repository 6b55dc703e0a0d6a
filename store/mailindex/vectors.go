package mailindex

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
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
}

func (x *Index) vectorSet(ctx context.Context, mailboxID, model string, dim int) (*vectorSet, error) {
	key := mailboxID + "\x00" + model + "\x00" + fmt.Sprint(dim)
	x.vectors.mu.Lock()
	defer x.vectors.mu.Unlock()
	gen := x.gen.Load()
	if s, ok := x.vectors.sets[key]; ok && s.gen == gen && gen%2 == 0 {
		return s, nil
	}
	rows, err := x.db.QueryContext(ctx, `SELECT e.chunk_id, c.mail_id, e.vector FROM embeddings e JOIN chunks c ON c.id = e.chunk_id
		JOIN mails m ON m.id = c.mail_id WHERE m.mailbox_id = ? AND e.model = ? AND e.dim = ? ORDER BY e.chunk_id`, mailboxID, model, dim)
	if err != nil {
		return nil, fmt.Errorf("mailindex: load vectors: %w", err)
	}
	defer rows.Close()
	s := &vectorSet{gen: gen, dim: dim}
	for rows.Next() {
		var id int64
		var mail string
		var blob []byte
		if err := rows.Scan(&id, &mail, &blob); err != nil {
			return nil, fmt.Errorf("mailindex: load vectors: %w", err)
		}
		v := DecodeVector(blob)
		if len(v) != dim {
			continue
		}
		normalize(v)
		s.chunks = append(s.chunks, id)
		s.mails = append(s.mails, mail)
		s.data = append(s.data, v...)
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

func normalize(v []float32) {
	var n float64
	for _, f := range v {
		n += float64(f) * float64(f)
	}
	if n == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(n))
	for i := range v {
		v[i] *= inv
	}
}

// isZero reports whether f filters nothing.
func (f Filter) isZero() bool {
	return f.Folder == "" && f.SpecialUse == "" && f.From == "" && f.To == "" && f.After.IsZero() && f.Before.IsZero() &&
		f.Unread == nil && f.Flagged == nil && f.Encrypted == nil && f.HasAttachments == nil && f.Importance == ""
}

// matchingMails returns the IDs of the mails meeting f.
func (x *Index) matchingMails(ctx context.Context, mailboxID string, f Filter) (map[string]bool, error) {
	where, args := filterSQL(mailboxID, f)
	rows, err := x.db.QueryContext(ctx, `SELECT m.id FROM mails m WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("mailindex: filter mails: %w", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("mailindex: filter mails: %w", err)
		}
		out[id] = true
	}
	return out, rows.Err()
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
		if eligible, err = x.matchingMails(ctx, mailboxID, f); err != nil {
			return nil, err
		}
	}
	q := append([]float32(nil), vec...)
	normalize(q)
	best := map[string]int{}
	var hits []Hit
	for i, mail := range set.mails {
		if eligible != nil && !eligible[mail] {
			continue
		}
		v := set.data[i*set.dim : (i+1)*set.dim]
		var dot float32
		for j, a := range q {
			dot += a * v[j]
		}
		h := Hit{MailID: mail, ChunkID: set.chunks[i], Score: float64(dot)}
		if k, ok := best[mail]; ok {
			if h.Score > hits[k].Score {
				hits[k] = h
			}
			continue
		}
		best[mail] = len(hits)
		hits = append(hits, h)
	}
	if eligible != nil {
		return topHits(hits, limit), nil
	}
	// Without a filter the set may hold mails pending removal: keep only
	// those still in a folder, from a few more than needed, or from all
	// when too many of those went.
	top := topHits(slices.Clone(hits), 4*limit)
	out, err := x.located(ctx, top, limit)
	if err != nil {
		return nil, err
	}
	if len(out) < limit && len(top) < len(hits) {
		if out, err = x.located(ctx, topHits(hits, len(hits)), limit); err != nil {
			return nil, err
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
func topHits(hits []Hit, k int) []Hit {
	if k <= 0 {
		return nil
	}
	if len(hits) <= k {
		sort.Slice(hits, func(i, j int) bool { return hitBefore(hits[i], hits[j]) })
		return hits
	}
	// hits[:k] is a heap whose root is the worst of the best k so far.
	top := hits[:k]
	worse := func(i, j int) bool { return hitBefore(top[j], top[i]) }
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= k {
				return
			}
			w := l
			if r := l + 1; r < k && worse(r, l) {
				w = r
			}
			if !worse(w, i) {
				return
			}
			top[i], top[w] = top[w], top[i]
			i = w
		}
	}
	for i := k/2 - 1; i >= 0; i-- {
		down(i)
	}
	for _, h := range hits[k:] {
		if hitBefore(h, top[0]) {
			top[0] = h
			down(0)
		}
	}
	sort.Slice(top, func(i, j int) bool { return hitBefore(top[i], top[j]) })
	return top
}

// located keeps, in order, the first limit hits whose mail has a location.
func (x *Index) located(ctx context.Context, hits []Hit, limit int) ([]Hit, error) {
	out := hits[:0:0]
	for start := 0; start < len(hits) && len(out) < limit; start += limit {
		page := hits[start:min(start+limit, len(hits))]
		ids := make([]string, len(page))
		for i, h := range page {
			ids[i] = h.MailID
		}
		rows, err := x.db.QueryContext(ctx, `SELECT id FROM mails WHERE loc_count > 0 AND id IN (`+strings.Repeat("?,", len(ids)-1)+`?)`, toAny(ids)...)
		if err != nil {
			return nil, fmt.Errorf("mailindex: check locations: %w", err)
		}
		ok := map[string]bool{}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, fmt.Errorf("mailindex: check locations: %w", err)
			}
			ok[id] = true
		}
		rows.Close()
		for _, h := range page {
			if ok[h.MailID] && len(out) < limit {
				out = append(out, h)
			}
		}
	}
	return out, nil
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
