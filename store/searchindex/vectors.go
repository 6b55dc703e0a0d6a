package searchindex

import (
	"encoding/binary"
	"math"
	"slices"
	"sort"
)

// VectorSchema creates the table of the chunks' vectors for a table
// `chunks` that already exists: one vector per chunk, apart from the
// chunk, so storing it does not rewrite the chunk's row, with the model
// that made it.
const VectorSchema = `
CREATE TABLE IF NOT EXISTS embeddings(
	chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
	model TEXT NOT NULL,
	dim INTEGER NOT NULL,
	vector BLOB NOT NULL
);
`

// EncodeVector writes a vector as a little-endian float32 blob.
func EncodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// DecodeVector reads a little-endian float32 blob.
func DecodeVector(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// Cosine is the cosine similarity of two vectors of equal length; 0 when
// either is zero.
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / (math.Sqrt(na) * math.Sqrt(nb))
}

// Normalize scales v to length 1 in place (a zero vector stays zero).
func Normalize(v []float32) {
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

// Dot is the dot product of two vectors of equal length.
func Dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// Matrix gathers vectors of one dimension, normalized, row after row in
// one slice. They are gathered in blocks and joined once at the end:
// growing one slice of 100 MB copied it again and again.
type Matrix struct {
	Dim int
	// Data holds the rows after Done: row i is Data[i*Dim:(i+1)*Dim].
	Data   []float32
	blocks [][]float32
	rows   int
}

// matrixBlock is how many rows a block holds.
const matrixBlock = 4096

// NewMatrix returns an empty matrix of rows of dim values.
func NewMatrix(dim int) *Matrix { return &Matrix{Dim: dim} }

// AppendBlob decodes a little-endian float32 blob as the next row,
// normalized; it reports false (and adds nothing) when the blob is not of
// the matrix's dimension. The blob is not kept, so it may be a
// sql.RawBytes.
func (m *Matrix) AppendBlob(blob []byte) bool {
	if len(blob) != 4*m.Dim {
		return false
	}
	if len(m.blocks) == 0 || len(m.blocks[len(m.blocks)-1]) == matrixBlock*m.Dim {
		m.blocks = append(m.blocks, make([]float32, 0, matrixBlock*m.Dim))
	}
	last := &m.blocks[len(m.blocks)-1]
	at := len(*last)
	*last = (*last)[:at+m.Dim]
	v := (*last)[at:]
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(blob[4*i:]))
	}
	Normalize(v)
	m.rows++
	return true
}

// Done joins the blocks into Data.
func (m *Matrix) Done() {
	m.Data = slices.Concat(m.blocks...)
	m.blocks = nil
}

// Rows is how many rows the matrix holds.
func (m *Matrix) Rows() int { return m.rows }

// Row returns row i (after Done).
func (m *Matrix) Row(i int) []float32 { return m.Data[i*m.Dim : (i+1)*m.Dim] }

// TopK returns the first k items in the order before gives, sorted,
// without sorting all of them; it reorders items. before must be a total
// order for the answer not to depend on the input's order.
func TopK[T any](items []T, k int, before func(a, b T) bool) []T {
	if k <= 0 {
		return nil
	}
	if len(items) <= k {
		sort.Slice(items, func(i, j int) bool { return before(items[i], items[j]) })
		return items
	}
	// items[:k] is a heap whose root is the worst of the best k so far.
	top := items[:k]
	worse := func(i, j int) bool { return before(top[j], top[i]) }
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
	for _, h := range items[k:] {
		if before(h, top[0]) {
			top[0] = h
			down(0)
		}
	}
	sort.Slice(top, func(i, j int) bool { return before(top[i], top[j]) })
	return top
}

// RRFK is the reciprocal rank fusion constant (Cormack et al., 2009).
const RRFK = 60

// Fused is one item of a fusion with its score.
type Fused[K comparable] struct {
	Key   K
	Score float64
	// List is the index of the first list that holds the key.
	List int
	// Rank is the key's rank (from 0) in that list.
	Rank int
}

// Fuse merges ranked lists of keys by reciprocal rank fusion with k =
// RRFK: each key scores Σ 1/(k + rank) over the lists it appears in
// (ranks from 1; a key repeated in a list counts at its first place
// only). Ties keep the order in which keys were first seen, list by list,
// so the first list wins.
func Fuse[K comparable](lists ...[]K) []Fused[K] {
	type acc struct {
		Fused[K]
		order int
	}
	by := map[K]*acc{}
	var all []*acc
	for li, l := range lists {
		seen := make(map[K]bool, len(l))
		rank := 0
		for _, k := range l {
			if seen[k] {
				continue
			}
			seen[k] = true
			a, ok := by[k]
			if !ok {
				a = &acc{Fused: Fused[K]{Key: k, List: li, Rank: rank}, order: len(all)}
				by[k] = a
				all = append(all, a)
			}
			a.Score += 1.0 / float64(RRFK+rank+1)
			rank++
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].Score != all[j].Score {
			return all[i].Score > all[j].Score
		}
		return all[i].order < all[j].order
	})
	out := make([]Fused[K], len(all))
	for i, a := range all {
		out[i] = a.Fused
	}
	return out
}
