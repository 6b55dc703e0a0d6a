package textmodel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
)

// magic starts an encoded model; the byte after it is Bits.
const magic = "GTM1"

// Model is a linear classifier over the hashed features. A window's score
// is Bias + Scale·Σw/√n, where Σw sums the quantized weights of the
// distinct features of each of the window's segments and n counts them; Threshold is the score from which a
// window counts as an injection.
type Model struct {
	Weights   []int16 // 1<<Bits, quantized
	Scale     float64
	Bias      float64
	Threshold float64
}

// Encode writes the model compactly: the header, then the non-zero weights
// as (index delta, value) varint pairs.
func (m *Model) Encode() []byte {
	out := append([]byte(magic), Bits)
	for _, f := range []float64{m.Scale, m.Bias, m.Threshold} {
		out = binary.LittleEndian.AppendUint64(out, math.Float64bits(f))
	}
	nz := 0
	for _, w := range m.Weights {
		if w != 0 {
			nz++
		}
	}
	out = binary.AppendUvarint(out, uint64(nz))
	last := 0
	for i, w := range m.Weights {
		if w != 0 {
			out = binary.AppendUvarint(out, uint64(i-last))
			out = binary.AppendVarint(out, int64(w))
			last = i
		}
	}
	return out
}

var errModel = errors.New("textmodel: malformed model")

// Decode reads a model written by Encode.
func Decode(b []byte) (*Model, error) {
	if len(b) < len(magic)+1+24 || string(b[:len(magic)]) != magic {
		return nil, errModel
	}
	if b[len(magic)] != Bits {
		return nil, fmt.Errorf("%w: %d feature bits, want %d", errModel, b[len(magic)], Bits)
	}
	b = b[len(magic)+1:]
	m := &Model{Weights: make([]int16, 1<<Bits)}
	m.Scale = math.Float64frombits(binary.LittleEndian.Uint64(b))
	m.Bias = math.Float64frombits(binary.LittleEndian.Uint64(b[8:]))
	m.Threshold = math.Float64frombits(binary.LittleEndian.Uint64(b[16:]))
	b = b[24:]
	nz, k := binary.Uvarint(b)
	if k <= 0 || nz > 1<<Bits {
		return nil, errModel
	}
	b = b[k:]
	idx := 0
	for j := uint64(0); j < nz; j++ {
		d, k := binary.Uvarint(b)
		if k <= 0 {
			return nil, errModel
		}
		b = b[k:]
		w, k := binary.Varint(b)
		if k <= 0 || w < math.MinInt16 || w > math.MaxInt16 {
			return nil, errModel
		}
		b = b[k:]
		if d > 1<<Bits || idx+int(d) >= 1<<Bits {
			return nil, errModel
		}
		idx += int(d)
		m.Weights[idx] = int16(w)
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", errModel, len(b))
	}
	return m, nil
}

// seen marks the features of the current segment: stamp[h] == gen. One
// byte per bucket keeps it small enough to stay in the cache next to the
// weights; it is cleared every 255 segments.
type seen struct {
	stamp []uint8
	gen   uint8
}

var seenPool = sync.Pool{New: func() any { return &seen{stamp: make([]uint8, 1<<Bits)} }}

func getSeen() *seen { return seenPool.Get().(*seen) }

// next starts a new segment.
func (d *seen) next() {
	d.gen++
	if d.gen == 0 {
		clear(d.stamp)
		d.gen = 1
	}
}

// sum adds up the weights of the distinct features of a segment and
// counts them.
func (m *Model) sum(seg []byte, d *seen) (s int64, n int) {
	d.next()
	Features(seg, func(h uint32) {
		if d.stamp[h] != d.gen {
			d.stamp[h] = d.gen
			s += int64(m.Weights[h])
			n++
		}
	})
	return s, n
}

// distinct appends the distinct feature buckets of a segment to dst, in
// the order they first occur.
func distinct(seg []byte, dst []uint32, d *seen) []uint32 {
	d.next()
	Features(seg, func(h uint32) {
		if d.stamp[h] != d.gen {
			d.stamp[h] = d.gen
			dst = append(dst, h)
		}
	})
	return dst
}

func (m *Model) score(s int64, n int) float64 {
	if n == 0 {
		return m.Bias
	}
	return m.Bias + m.Scale*float64(s)/math.Sqrt(float64(n))
}

// Score returns the score of text taken as one window: the distinct
// features of each of its segments together.
func (m *Model) Score(text []byte) float64 {
	var s int64
	var n int
	d := getSeen()
	defer seenPool.Put(d)
	for _, sg := range Segments(text) {
		a, b := m.sum(text[sg.Start:sg.End], d)
		s, n = s+a, n+b
	}
	return m.score(s, n)
}

// MinFeatures is the fewest distinct features a window needs to be scored:
// the score of a shorter one (a lone word, a dotted name) rests on too
// little evidence.
const MinFeatures = 16

// Window is a scored run of one or two adjacent segments: text[Start:End].
type Window struct {
	Start, End int
	Score      float64
}

// Windows scores every segment of text alone and every two adjacent
// segments together, and calls fn for each window that has at least
// MinFeatures features. Each segment's features
// are extracted once; a pair's score comes from the sums of its two
// segments.
func (m *Model) Windows(text []byte, fn func(Window, bool)) {
	segs := Segments(text)
	d := getSeen()
	defer seenPool.Put(d)
	var prev Segment
	var ps int64
	var pn int
	for i, sg := range segs {
		s, n := m.sum(text[sg.Start:sg.End], d)
		if n >= MinFeatures {
			fn(Window{sg.Start, sg.End, m.score(s, n)}, false)
		}
		if i > 0 && pn+n >= MinFeatures {
			fn(Window{prev.Start, sg.End, m.score(ps+s, pn+n)}, true)
		}
		prev, ps, pn = sg, s, n
	}
}

// Flagged returns the windows of text (with at least MinFeatures features)
// that score at least the threshold:
// every such segment, and every such pair of adjacent segments neither of
// which is flagged alone. They come in the order of their start.
func (m *Model) Flagged(text []byte) []Window { return m.FlaggedAt(text, m.Threshold) }

// FlaggedAt is Flagged with another threshold.
func (m *Model) FlaggedAt(text []byte, threshold float64) []Window {
	var out []Window
	var prev Window
	var ps int64
	var pn int
	prevHit := false
	d := getSeen()
	defer seenPool.Put(d)
	for i, sg := range Segments(text) {
		s, n := m.sum(text[sg.Start:sg.End], d)
		w := Window{sg.Start, sg.End, m.score(s, n)}
		hit := n >= MinFeatures && w.Score >= threshold
		if i > 0 && !hit && !prevHit && pn+n >= MinFeatures {
			if p := (Window{prev.Start, sg.End, m.score(ps+s, pn+n)}); p.Score >= threshold {
				out = append(out, p)
			}
		}
		if hit {
			out = append(out, w)
		}
		prev, ps, pn, prevHit = w, s, n, hit
	}
	return out
}

// MaxScore returns the highest score of any window of text, or -Inf for a
// text without segments.
func (m *Model) MaxScore(text []byte) float64 {
	best := math.Inf(-1)
	m.Windows(text, func(w Window, _ bool) { best = max(best, w.Score) })
	return best
}
