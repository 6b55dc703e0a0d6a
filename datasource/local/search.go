package local

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/stewardhq/steward/embed"
	"github.com/stewardhq/steward/store/docindex"
)

// MaxQueryChars is the longest query searched by meaning, as in the
// reference; a longer one is searched by words only.
const MaxQueryChars = 200_000

// PartialError is returned by Search, together with the hits of the words,
// when the search by meaning could not run: the source was searched by
// words only. Callers report it as PARTLY_SEARCHED and keep the hits.
type PartialError struct {
	// Reason says why, for the user.
	Reason string
	Err    error
}

func (e *PartialError) Error() string {
	if e.Err != nil {
		return "searched by words only: " + e.Reason + ": " + e.Err.Error()
	}
	return "searched by words only: " + e.Reason
}

func (e *PartialError) Unwrap() error { return e.Err }

// Search returns the passages of a source best matching q, best first, and
// whether more follow beyond Offset+Limit. Words (bm25) and, with
// q.Embedder, meaning (cosine over the source's vectors) are searched in
// parallel and fused by reciprocal rank (k = 60). When the search by
// meaning cannot run (the source was indexed without an embedding
// provider or with another model, the query is too long, the provider
// fails), the words' hits come back with a *PartialError. A source no run
// has indexed gives ErrNotIndexed.
func (ix *Index) Search(ctx context.Context, sourceID string, q Query) (hits []Hit, hasMore bool, err error) {
	if q.Limit < 0 || q.Offset < 0 {
		return nil, false, fmt.Errorf("search of %s: limit %d and offset %d must not be negative", sourceID, q.Limit, q.Offset)
	}
	src, ok, err := ix.x.Source(ctx, sourceID)
	if err != nil {
		return nil, false, err
	}
	if !ok {
		return nil, false, fmt.Errorf("%w: %s (index it first)", ErrNotIndexed, sourceID)
	}
	if strings.TrimSpace(q.Text) == "" || q.Limit == 0 {
		return nil, false, nil
	}
	dq := docindex.Query{Text: q.Text, Limit: q.Limit, Offset: q.Offset}
	var partial *PartialError
	if q.Embedder != nil {
		dq.Vector, dq.Model, partial = ix.queryVector(ctx, src, q)
	}
	page, err := ix.x.Search(ctx, sourceID, dq)
	if err != nil {
		return nil, false, err
	}
	if page.VectorErr != nil && partial == nil {
		partial = &PartialError{Reason: "the vectors of the source could not be read", Err: page.VectorErr}
	}
	hits = make([]Hit, len(page.Hits))
	for i, h := range page.Hits {
		hits[i] = Hit{
			Path: filepath.Join(src.Path, filepath.FromSlash(h.Path)), RelPath: h.Path, Title: h.Title, Text: h.Text,
			Chunk: h.Seq, Page: h.Page, Kind: h.Kind, Score: h.Score, Modified: h.Modified,
		}
		if src.File {
			hits[i].Path = src.Path
		}
	}
	if partial != nil {
		return hits, page.HasMore, partial
	}
	return hits, page.HasMore, nil
}

// queryVector embeds the query for a search by meaning, or says why it
// cannot be.
func (ix *Index) queryVector(ctx context.Context, src docindex.Source, q Query) ([]float32, string, *PartialError) {
	model := q.Embedder.Model()
	switch {
	case src.Model == "":
		return nil, "", &PartialError{Reason: "the source was indexed without an embedding provider"}
	case src.Model != model:
		return nil, "", &PartialError{Reason: fmt.Sprintf("the source was indexed with the embedding model %q, not %q: index it again", src.Model, model)}
	case utf8.RuneCountInString(q.Text) > MaxQueryChars:
		return nil, "", &PartialError{Reason: fmt.Sprintf("the query is longer than %d characters", MaxQueryChars)}
	}
	if c, err := ix.counter(model); err == nil {
		if n, limit := c.count(q.Text), embed.LimitsOf(q.Embedder).TokenLimit; n > limit {
			return nil, "", &PartialError{Reason: fmt.Sprintf("the query has %d tokens, more than the embedding provider's %d", n, limit)}
		}
	}
	vs, err := q.Embedder.Embed(ctx, []string{q.Text})
	if err != nil {
		return nil, "", &PartialError{Reason: "the embedding provider failed", Err: err}
	}
	if len(vs) != 1 || len(vs[0]) == 0 {
		return nil, "", &PartialError{Reason: "the embedding provider returned no vector"}
	}
	return vs[0], model, nil
}

// Status tells what the index holds of a source; a source no run has
// indexed gives a Status with Indexed false.
func (ix *Index) Status(ctx context.Context, sourceID string) (Status, error) {
	src, ok, err := ix.x.Source(ctx, sourceID)
	if err != nil || !ok {
		return Status{}, err
	}
	cov, err := ix.x.Coverage(ctx, sourceID, src.Model)
	if err != nil {
		return Status{}, err
	}
	st := Status{Indexed: true, Documents: cov.Documents, Chunks: cov.Chunks, Embedded: cov.Embedded, Model: src.Model, Bytes: cov.Bytes,
		LastRun: src.RunEnded, Complete: src.RunComplete}
	fs, err := ix.x.Failures(ctx, sourceID)
	if err != nil {
		return Status{}, err
	}
	for _, f := range fs {
		st.Skipped = append(st.Skipped, Skipped{Path: f.Path, Reason: f.Reason})
	}
	sortSkipped(st.Skipped)
	return st, nil
}

// Remove deletes everything the index holds of a source; removing one it
// does not hold is no error.
func (ix *Index) Remove(ctx context.Context, sourceID string) error {
	if err := ix.x.RemoveSource(ctx, sourceID); err != nil && !errors.Is(err, docindex.ErrNoSource) {
		return err
	}
	return nil
}
