package docindex

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/stewardhq/steward/store/searchindex"
)

// Hit is a chunk found, with its document.
type Hit struct {
	ChunkID int64
	// Score is bm25 (words), cosine (vectors) or the fused score: higher
	// is better.
	Score float64
	// The fields below are filled by Search (not by SearchWords or
	// SearchVector).
	Path     string
	Title    string
	Kind     string
	Text     string
	Seq      int
	Page     int
	Modified time.Time
}

// hitBefore orders hits: higher score first, then lower chunk ID. Chunk
// IDs are unique, so the order is total.
func hitBefore(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.ChunkID < b.ChunkID
}

// Candidate sizes of the common-word search (see SearchWords).
const (
	rerankFactor = 4
	newestRanked = 400
	// maxCandidates bounds the rounds over FTS5's best matches before the
	// query of all the source's matches runs.
	maxCandidates = 8192
)

// SearchWords returns up to limit chunks of a source matching the words
// of text, best first by bm25.
func (x *Index) SearchWords(ctx context.Context, sourceID, text string, limit int) ([]Hit, error) {
	mq := searchindex.MatchQuery(text)
	if mq == "" || limit <= 0 {
		return nil, nil
	}
	src, err := sourceNum(ctx, x.db, sourceID)
	if err != nil {
		return nil, err
	}
	words := searchindex.QueryWords(text)
	st, err := x.words.Stats(ctx, words...)
	if err != nil {
		return nil, err
	}
	rare, common := st.Split(words)
	// A source holding less than half of the chunks has few of the whole
	// table's best matches: its own are ranked at once.
	direct := false
	if n, err := x.sourceChunks(ctx, src); err != nil {
		return nil, err
	} else if 2*n < st.Chunks {
		direct = true
	}
	if len(common) == 0 {
		return x.wordsExact(ctx, src, mq, limit, direct)
	}
	// A common word: FTS5 would read its whole list to rank it. The
	// candidates are ranked in Go with the same bm25.
	sc, err := x.words.NewScorer(ctx, st, words)
	if err != nil {
		return nil, err
	}
	var cands []int64
	if len(rare) > 0 {
		hits, err := x.wordsExact(ctx, src, searchindex.QuoteWords(rare, " OR "), max(limit*rerankFactor, 100), direct)
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			cands = append(cands, h.ChunkID)
		}
		if len(hits) >= limit {
			return x.rank(ctx, sc, cands, limit)
		}
		// Too few chunks hold a rare word: the common words add theirs.
	}
	n := max(newestRanked, limit*10)
	all, err := x.lastMatches(ctx, src, searchindex.QuoteWords(common, " AND "), n)
	if err != nil {
		return nil, err
	}
	cands = append(cands, all...)
	if len(all) < limit && len(common) > 1 {
		any, err := x.lastMatches(ctx, src, searchindex.QuoteWords(common, " OR "), n)
		if err != nil {
			return nil, err
		}
		cands = append(cands, any...)
	}
	return x.rank(ctx, sc, cands, limit)
}

// wordsExact ranks every chunk of the source matching the FTS5 query mq
// by FTS5's bm25. Unless direct, the best chunks of the whole table are
// read first, a widening window at a time, keeping the source's; when the
// source holds few of them (or direct), one query ranks the source's
// matches alone.
func (x *Index) wordsExact(ctx context.Context, src int64, mq string, limit int, direct bool) ([]Hit, error) {
	for k := limit * 4; k <= maxCandidates && !direct; k *= 4 {
		hits, complete, err := x.wordCandidates(ctx, src, mq, k, limit)
		if err != nil {
			return nil, err
		}
		if complete {
			return hits, nil
		}
	}
	rows, err := x.db.QueryContext(ctx, `SELECT t.rowid, t.rank FROM chunks_fts t CROSS JOIN chunks c ON c.id = t.rowid
		WHERE chunks_fts MATCH ? AND c.src = ? ORDER BY t.rank, t.rowid LIMIT ?`, mq, src, limit)
	if err != nil {
		return nil, wrap("search words", err)
	}
	return scanHits(rows, true)
}

func scanHits(rows *sql.Rows, negate bool) ([]Hit, error) {
	defer rows.Close()
	var out []Hit
	for rows.Next() {
		var h Hit
		if err := rows.Scan(&h.ChunkID, &h.Score); err != nil {
			return nil, wrap("search words", err)
		}
		if negate {
			h.Score = -h.Score // bm25 is lower-is-better
		}
		out = append(out, h)
	}
	return out, wrap("search words", rows.Err())
}

// wordCandidates reads the k best matches of the whole table and keeps
// those of the source, up to limit; complete tells whether they are the
// answer (limit found, or every match read).
func (x *Index) wordCandidates(ctx context.Context, src int64, mq string, k, limit int) ([]Hit, bool, error) {
	rows, err := x.db.QueryContext(ctx, `SELECT rowid, rank FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank, rowid LIMIT ?`, mq, k)
	if err != nil {
		return nil, false, wrap("search words", err)
	}
	cands, err := scanHits(rows, true)
	if err != nil {
		return nil, false, err
	}
	if len(cands) == 0 {
		return nil, true, nil
	}
	ids := make([]int64, len(cands))
	for i, c := range cands {
		ids[i] = c.ChunkID
	}
	inSrc, err := x.chunksOf(ctx, src, ids)
	if err != nil {
		return nil, false, err
	}
	var hits []Hit
	for _, c := range cands {
		if inSrc[c.ChunkID] {
			hits = append(hits, c)
			if len(hits) == limit {
				return hits, true, nil
			}
		}
	}
	return hits, len(cands) < k, nil
}

// sourceChunks is how many chunks the source holds, counted once per
// generation of the index.
func (x *Index) sourceChunks(ctx context.Context, src int64) (int64, error) {
	gen := x.gen.Load()
	x.counts.mu.Lock()
	defer x.counts.mu.Unlock()
	if x.counts.gen != gen || x.counts.n == nil {
		x.counts.gen, x.counts.n = gen, map[int64]int64{}
	}
	if n, ok := x.counts.n[src]; ok {
		return n, nil
	}
	var n int64
	if err := x.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM chunks WHERE src = ?`, src).Scan(&n); err != nil {
		return 0, wrap("search words", err)
	}
	// A count read while a write ran (odd generation) is not kept.
	if gen%2 == 0 && x.gen.Load() == gen {
		x.counts.n[src] = n
	}
	return n, nil
}

// chunksOf tells which of ids are chunks of the source.
func (x *Index) chunksOf(ctx context.Context, src int64, ids []int64) (map[int64]bool, error) {
	list, err := searchindex.JSONList(ids)
	if err != nil {
		return nil, err
	}
	// CROSS JOIN keeps the listed chunks (looked up by rowid) outside.
	got, err := searchindex.Int64s(ctx, x.db, "docindex: search words",
		`SELECT c.id FROM json_each(?) j CROSS JOIN chunks c ON c.id = j.value WHERE c.src = ?`, list, src)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]bool, len(got))
	for _, id := range got {
		out[id] = true
	}
	return out, nil
}

// lastMatches returns the IDs of the last-indexed n chunks of the source
// matching the FTS5 query mq.
func (x *Index) lastMatches(ctx context.Context, src int64, mq string, n int) ([]int64, error) {
	// CROSS JOIN keeps the FTS5 table outside, read from its last rowid.
	return searchindex.Int64s(ctx, x.db, "docindex: search words", `SELECT t.rowid FROM chunks_fts t CROSS JOIN chunks c ON c.id = t.rowid
		WHERE chunks_fts MATCH ? AND c.src = ? ORDER BY t.rowid DESC LIMIT ?`, mq, src, n)
}

// rank scores the candidate chunks with sc, keeps those holding a word of
// the query and returns the best limit.
func (x *Index) rank(ctx context.Context, sc *searchindex.Scorer, ids []int64, limit int) ([]Hit, error) {
	seen := map[int64]bool{}
	uniq := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			uniq = append(uniq, id)
		}
	}
	texts, err := searchindex.TextsByID(ctx, x.db, "docindex: search words",
		`SELECT rowid, text FROM chunks_fts WHERE rowid IN (SELECT value FROM json_each(?))`, uniq)
	if err != nil {
		return nil, err
	}
	var hits []Hit
	for _, id := range uniq {
		if t, ok := texts[id]; ok {
			if s := sc.Score(t); s > 0 {
				hits = append(hits, Hit{ChunkID: id, Score: s})
			}
		}
	}
	return searchindex.TopK(hits, limit, hitBefore), nil
}

// vectorCache keeps each source's vectors of a model in memory,
// normalized, so a search by meaning does not read every blob from disk.
// A set is rebuilt when the index changed since it was loaded.
type vectorCache struct {
	mu   sync.Mutex
	sets map[string]*vectorSet
}

type vectorSet struct {
	gen    uint64
	source string
	chunks []int64
	m      *searchindex.Matrix
}

func (c *vectorCache) drop(sourceID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, s := range c.sets {
		if s.source == sourceID {
			delete(c.sets, k)
		}
	}
}

func (x *Index) vectorSet(ctx context.Context, src int64, sourceID, model string, dim int) (*vectorSet, error) {
	key := sourceID + "\x00" + model + "\x00" + fmt.Sprint(dim)
	x.vectors.mu.Lock()
	defer x.vectors.mu.Unlock()
	gen := x.gen.Load()
	if s, ok := x.vectors.sets[key]; ok && s.gen == gen && gen%2 == 0 {
		return s, nil
	}
	// Another set of this source is of an older generation: let it go
	// before the new one is read.
	for k, s := range x.vectors.sets {
		if s.source == sourceID {
			delete(x.vectors.sets, k)
		}
	}
	// CROSS JOIN reads the source's chunks in ID order, each vector by its
	// key.
	rows, err := x.db.QueryContext(ctx, `SELECT c.id, e.vector FROM chunks c CROSS JOIN embeddings e ON e.chunk_id = c.id
		WHERE c.src = ? AND e.model = ? AND e.dim = ? ORDER BY c.id`, src, model, dim)
	if err != nil {
		return nil, wrap("load vectors", err)
	}
	defer rows.Close()
	s := &vectorSet{gen: gen, source: sourceID, m: searchindex.NewMatrix(dim)}
	for rows.Next() {
		var id int64
		// RawBytes: the blob is decoded in place, not copied first.
		var blob sql.RawBytes
		if err := rows.Scan(&id, &blob); err != nil {
			return nil, wrap("load vectors", err)
		}
		if s.m.AppendBlob(blob) {
			s.chunks = append(s.chunks, id)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("load vectors", err)
	}
	s.m.Done()
	if x.vectors.sets == nil {
		x.vectors.sets = map[string]*vectorSet{}
	}
	// Only a set loaded while no write ran (even generation, unchanged) is
	// kept for the next search.
	if gen%2 == 0 && x.gen.Load() == gen {
		x.vectors.sets[key] = s
	}
	return s, nil
}

// SearchVector returns up to limit chunks of a source closest to vec by
// exact cosine over their vectors of model, best first.
func (x *Index) SearchVector(ctx context.Context, sourceID, model string, vec []float32, limit int) ([]Hit, error) {
	if len(vec) == 0 || limit <= 0 {
		return nil, nil
	}
	src, err := sourceNum(ctx, x.db, sourceID)
	if err != nil {
		return nil, err
	}
	set, err := x.vectorSet(ctx, src, sourceID, model, len(vec))
	if err != nil {
		return nil, err
	}
	q := append([]float32(nil), vec...)
	searchindex.Normalize(q)
	n := len(set.chunks)
	if n == 0 {
		return nil, nil
	}
	// The rows are compared in parallel parts, each keeping its own best
	// limit, merged at the end.
	parts := min(runtime.GOMAXPROCS(0), max(1, n/8192))
	tops := make([][]Hit, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*n/parts, (p+1)*n/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			hits := make([]Hit, hi-lo)
			dim := set.m.Dim
			for i := lo; i < hi; i++ {
				hits[i-lo] = Hit{ChunkID: set.chunks[i], Score: float64(searchindex.Dot(q, set.m.Data[i*dim:(i+1)*dim]))}
			}
			tops[p] = searchindex.TopK(hits, limit, hitBefore)
		}()
	}
	wg.Wait()
	var all []Hit
	for _, t := range tops {
		all = append(all, t...)
	}
	return searchindex.TopK(all, limit, hitBefore), nil
}

// Query is a hybrid search of one source.
type Query struct {
	// Text is searched by words.
	Text string
	// Vector, of Model, is searched by meaning; nil for words only.
	Vector []float32
	Model  string
	// Limit and Offset select the page of the fused ranking.
	Limit, Offset int
}

// Page is one page of a hybrid search.
type Page struct {
	Hits []Hit
	// HasMore tells whether more chunks follow the page.
	HasMore bool
	// VectorErr reports that the vector channel failed while the words
	// answered: Hits then hold the words' page alone.
	VectorErr error
}

// Search runs the word and the vector search of a source in parallel, each
// for the first Offset+Limit+1 chunks, fuses them by reciprocal rank (the
// vector list first, so it wins ties) and returns the page with each
// chunk's text and document. A failing word search fails the search.
func (x *Index) Search(ctx context.Context, sourceID string, q Query) (Page, error) {
	var p Page
	if strings.TrimSpace(q.Text) == "" || q.Limit <= 0 {
		return p, nil
	}
	if q.Offset < 0 {
		q.Offset = 0
	}
	window := q.Offset + q.Limit + 1
	var words, vecs []Hit
	var wordErr, vecErr error
	var wg sync.WaitGroup
	if len(q.Vector) > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			vecs, vecErr = x.SearchVector(ctx, sourceID, q.Model, q.Vector, window)
		}()
	}
	words, wordErr = x.SearchWords(ctx, sourceID, q.Text, window)
	wg.Wait()
	if wordErr != nil {
		return p, wordErr
	}
	ids := func(hs []Hit) []int64 {
		out := make([]int64, len(hs))
		for i, h := range hs {
			out[i] = h.ChunkID
		}
		return out
	}
	var fused []searchindex.Fused[int64]
	if len(q.Vector) > 0 && vecErr == nil {
		// Words first: on a tie the lexical order decides, since vectors
		// at equal distances come back in no fixed order.
		fused = searchindex.Fuse(ids(words), ids(vecs))
	} else {
		fused = searchindex.Fuse(ids(words))
	}
	p.VectorErr = vecErr
	p.HasMore = len(fused) > q.Offset+q.Limit
	if q.Offset >= len(fused) {
		return p, nil
	}
	page := fused[q.Offset:min(len(fused), q.Offset+q.Limit)]
	p.Hits = make([]Hit, len(page))
	for i, f := range page {
		p.Hits[i] = Hit{ChunkID: f.Key, Score: f.Score}
	}
	if err := x.fill(ctx, p.Hits); err != nil {
		return Page{}, err
	}
	// A chunk removed since it was ranked is left out.
	kept := p.Hits[:0]
	for _, h := range p.Hits {
		if h.Path != "" {
			kept = append(kept, h)
		}
	}
	p.Hits = kept
	return p, nil
}

// fill reads the texts and documents of hits; a chunk removed meanwhile
// keeps empty fields.
func (x *Index) fill(ctx context.Context, hits []Hit) error {
	if len(hits) == 0 {
		return nil
	}
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.ChunkID
	}
	list, err := searchindex.JSONList(ids)
	if err != nil {
		return err
	}
	rows, err := x.db.QueryContext(ctx, `SELECT c.id, c.seq, c.page, t.text, d.path, d.title, d.kind, d.mtime
		FROM json_each(?) j CROSS JOIN chunks c ON c.id = j.value CROSS JOIN chunks_fts t ON t.rowid = c.id
		CROSS JOIN documents d ON d.id = c.doc_id`, list)
	if err != nil {
		return wrap("read hits", err)
	}
	defer rows.Close()
	at := make(map[int64]int, len(hits))
	for i, h := range hits {
		at[h.ChunkID] = i
	}
	for rows.Next() {
		var id, mt int64
		var h Hit
		if err := rows.Scan(&id, &h.Seq, &h.Page, &h.Text, &h.Path, &h.Title, &h.Kind, &mt); err != nil {
			return wrap("read hits", err)
		}
		i := at[id]
		h.ChunkID, h.Score, h.Modified = id, hits[i].Score, fromNano(mt)
		hits[i] = h
	}
	return wrap("read hits", rows.Err())
}

// ChunkPaths returns the paths of the documents of chunks (by chunk ID),
// as SearchWords and SearchVector leave them out; a chunk removed
// meanwhile is missing from the answer.
func (x *Index) ChunkPaths(ctx context.Context, ids []int64) (map[int64]string, error) {
	list, err := searchindex.JSONList(ids)
	if err != nil {
		return nil, err
	}
	rows, err := x.db.QueryContext(ctx, `SELECT c.id, d.path FROM json_each(?) j CROSS JOIN chunks c ON c.id = j.value
		CROSS JOIN documents d ON d.id = c.doc_id`, list)
	if err != nil {
		return nil, wrap("read chunk paths", err)
	}
	defer rows.Close()
	out := make(map[int64]string, len(ids))
	for rows.Next() {
		var id int64
		var p string
		if err := rows.Scan(&id, &p); err != nil {
			return nil, wrap("read chunk paths", err)
		}
		out[id] = p
	}
	return out, wrap("read chunk paths", rows.Err())
}
