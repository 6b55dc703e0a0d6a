package textmodel

import (
	"fmt"
	"io/fs"
	"math"
	"path"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Passage is one training text.
type Passage struct {
	Text     string
	Category string // the attack category; empty for benign text
	Source   string // file:line, for reports
}

// Data is the training set.
type Data struct {
	Attacks, Benign []Passage
}

// Load reads the training files of fsys: every attacks*.txt holds
// "category | passage" lines, every benign*.txt one benign passage per line.
// Lines starting with '#' and blank lines are skipped; "⏎" stands for a line
// break. Files are read in name order.
func Load(fsys fs.FS) (Data, error) {
	d, err := LoadPart(fsys)
	if err != nil {
		return d, err
	}
	return d, Check(d)
}

// Check reports training data that lacks attack or benign passages.
func Check(d Data) error {
	if len(d.Attacks) == 0 || len(d.Benign) == 0 {
		return fmt.Errorf("training data needs attack and benign passages, has %d and %d", len(d.Attacks), len(d.Benign))
	}
	return nil
}

// LoadPart reads the training files of fsys like Load, but accepts a
// directory with only attacks or only benign passages: one part of the
// training data.
func LoadPart(fsys fs.FS) (Data, error) {
	var d Data
	names, err := fs.Glob(fsys, "*.txt")
	if err != nil {
		return d, err
	}
	sort.Strings(names)
	for _, name := range names {
		attack := strings.HasPrefix(name, "attacks")
		compose := strings.HasPrefix(name, "compose")
		if !attack && !compose && !strings.HasPrefix(name, "benign") {
			continue
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return d, err
		}
		if compose {
			ps, err := composeFile(path.Base(name), string(b))
			if err != nil {
				return d, err
			}
			d.Attacks = append(d.Attacks, ps...)
			continue
		}
		for i, line := range strings.Split(string(b), "\n") {
			line = strings.TrimRight(line, "\r")
			if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
				continue
			}
			p := Passage{Source: fmt.Sprintf("%s:%d", path.Base(name), i+1)}
			if attack {
				cat, text, ok := strings.Cut(line, " | ")
				if !ok {
					return d, fmt.Errorf("%s: line without category", p.Source)
				}
				p.Category, line = strings.TrimSpace(cat), text
			}
			p.Text = strings.ReplaceAll(line, "⏎", "\n")
			if attack {
				d.Attacks = append(d.Attacks, p)
			} else {
				d.Benign = append(d.Benign, p)
			}
		}
	}
	return d, nil
}

// composeFile expands a compose file: hand-written pieces under the
// headings "[addressee]", "[request <category>]" and "[tail]". Every
// request gives three passages: after one addressee, after another one and
// followed by a tail, and alone followed by a tail. The choice is fixed by
// the request's position.
func composeFile(name, s string) ([]Passage, error) {
	var addressees, tails []string
	type request struct{ text, cat, src string }
	var requests []request
	section, cat := "", ""
	for i, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			f := strings.Fields(line[1 : len(line)-1])
			if len(f) == 0 {
				return nil, fmt.Errorf("%s:%d: empty heading", name, i+1)
			}
			section, cat = f[0], ""
			if section == "request" {
				if len(f) != 2 {
					return nil, fmt.Errorf("%s:%d: a request heading needs a category", name, i+1)
				}
				cat = f[1]
			}
			continue
		}
		switch section {
		case "addressee":
			addressees = append(addressees, line)
		case "tail":
			tails = append(tails, line)
		case "request":
			requests = append(requests, request{line, cat, fmt.Sprintf("%s:%d", name, i+1)})
		default:
			return nil, fmt.Errorf("%s:%d: line outside a section", name, i+1)
		}
	}
	if len(addressees) == 0 || len(tails) == 0 || len(requests) == 0 {
		return nil, fmt.Errorf("%s: needs addressees, requests and tails", name)
	}
	var out []Passage
	for j, r := range requests {
		a1 := addressees[(j*7)%len(addressees)]
		a2 := addressees[(j*13+5)%len(addressees)]
		t1 := tails[(j*3)%len(tails)]
		t2 := tails[(j*5+1)%len(tails)]
		for _, text := range []string{join(a1, r.text), join(join(a2, r.text), t1), join(r.text, t2)} {
			out = append(out, Passage{Text: capitalize(text), Category: r.cat, Source: r.src})
		}
	}
	return out, nil
}

// join puts b after a, with a space unless a ends in punctuation of a
// script written without spaces.
func join(a, b string) string {
	last, _ := utf8.DecodeLastRuneInString(a)
	if last >= 0x3000 && last <= 0x303F || last >= 0xFF00 && last <= 0xFFEF {
		return a + b
	}
	return a + " " + b
}

func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// Training parameters. Every step is deterministic: a fixed seed, a fixed
// order, and products rounded explicitly (float64(…)) so no platform fuses
// them into different results.
const (
	seed      = 0x5eed
	folds     = 5
	repeats   = 3 // cross-validation runs, each with its own split
	quantMax  = 32767
	minWeight = 2 // quantized weights of smaller magnitude are dropped
)

// The operating point. The requirement is per text: at most TextTargetFP
// of benign texts may have any finding. The filter scores every window of
// a text, so a share p of benign windows over the threshold gives about
// 1 − (1 − p)^W flagged texts for a text of W windows (treating the windows
// as independent, which overstates it a little for overlapping pairs).
// Train therefore derives the per-window target from the training data:
// W is the largest number of windows the filter forms on any benign
// training passage (windowsPerText), the longest benign text the training
// data holds; the passages are excerpts, so a page the filter meets is at
// least that long and W is a lower bound, not a typical page. The window
// target is the largest p with 1 − (1 − p)^W ≤ TextTargetFP, and never more
// than MaxWindowFP, so a training set of short passages cannot loosen it.
// On the training data of this package the benign passages give a mean of
// 2.28 windows, a median of 1, a 99th percentile of 9 and a maximum of 13:
// W = 13, p = 0.000772 (MaxWindowFP does not bind). The passage-level check
// of cross-validation stays: at most PassageTargetFP of the held-out benign
// passages reach the threshold.
const (
	TextTargetFP    = 0.01
	MaxWindowFP     = 0.001
	PassageTargetFP = 0.005
)

// windowsPerText returns W: the most windows (of at least MinFeatures
// features, as the filter scores them) of any benign passage.
func windowsPerText(benign []Passage) int {
	m := &Model{Weights: make([]int16, 1<<Bits), Scale: 1}
	w := 1
	for _, p := range benign {
		n := 0
		m.Windows([]byte(p.Text), func(Window, bool) { n++ })
		w = max(w, n)
	}
	return w
}

// WindowTarget returns the largest share p of benign windows, to a
// millionth, for which a text of w windows is flagged with probability
// 1 − (1 − p)^w of at most TextTargetFP, capped at MaxWindowFP. The power is
// taken by repeated, explicitly rounded multiplication, so the result is
// the same on every platform.
func WindowTarget(w int) float64 {
	flagged := func(p float64) float64 {
		keep := 1.0
		for i := 0; i < w; i++ {
			keep = float64(keep * float64(1-p))
		}
		return 1 - keep
	}
	lo, hi := 0, int(MaxWindowFP*1e6) // in millionths
	if flagged(float64(hi)/1e6) <= TextTargetFP {
		return float64(hi) / 1e6
	}
	for lo+1 < hi { // flagged(lo) <= target < flagged(hi)
		mid := (lo + hi) / 2
		if flagged(float64(mid)/1e6) <= TextTargetFP {
			lo = mid
		} else {
			hi = mid
		}
	}
	return float64(lo) / 1e6
}

var (
	epochs = 8
	lambda = 5e-6
	eta0   = 0.2
	// negWeight weighs the benign class against the attack class.
	negWeight = 1.0
)

// Report describes a training run.
type Report struct {
	Attacks, Benign   int     // passages
	Examples          int     // training windows
	BenignWindows     int     // held-out benign windows scored in cross-validation
	WindowsPerText    int     // W: the most windows of a benign training passage
	WindowTargetFP    float64 // the per-window target derived from W (WindowTarget)
	Threshold         float64
	CVWindowFP        float64 // share of held-out benign windows at or over the threshold
	CVPassageFP       float64 // share of held-out benign passages with a window over it
	CVRecall          float64 // share of held-out attack passages with a window over it
	CVMissed          []string
	CVFalsePositives  []string
	Weights           int      // non-zero weights of the final model
	TopBenign         []string // the highest-scoring held-out benign windows
	RecallAt          []string // cross-validated recall at looser thresholds
	CategoryRecall    map[string]float64
	categoryN, catHit map[string]int
}

// rng is splitmix64.
type rng uint64

func (r *rng) next() uint64 {
	*r += 0x9e3779b97f4a7c15
	z := uint64(*r)
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func (r *rng) shuffle(n int, swap func(i, j int)) {
	for i := n - 1; i > 0; i-- {
		j := int(r.next() % uint64(i+1))
		swap(i, j)
	}
}

// example is a sparse feature vector, scaled by 1/√n.
type example struct {
	idx []uint32
	val []float64
	y   float64
	n   int // distinct features summed over the segments
}

// vectorize builds the features of a window the way Model.Score sees
// them: the distinct features of each segment, summed over the segments.
func vectorize(text string, y float64) example {
	counts := map[uint32]int{}
	n := 0
	b := []byte(text)
	var buf []uint32
	d := getSeen()
	defer seenPool.Put(d)
	for _, sg := range Segments(b) {
		buf = distinct(b[sg.Start:sg.End], buf[:0], d)
		for _, h := range buf {
			counts[h]++
		}
		n += len(buf)
	}
	e := example{y: y, n: n}
	for h := range counts {
		e.idx = append(e.idx, h)
	}
	slices.Sort(e.idx)
	norm := math.Sqrt(float64(max(n, 1)))
	for _, h := range e.idx {
		e.val = append(e.val, float64(counts[h])/norm)
	}
	return e
}

// windowTexts returns the texts of the windows of a passage as the filter
// scores them: each segment and each two adjacent segments.
func windowTexts(text string) []string {
	b := []byte(text)
	segs := Segments(b)
	var out []string
	for i, s := range segs {
		out = append(out, text[s.Start:s.End])
		if i > 0 {
			out = append(out, text[segs[i-1].Start:s.End])
		}
	}
	return out
}

// examples builds the training windows: every window of a benign passage
// is a negative; an attack passage is a positive as a whole, and once more
// after a benign segment, as the filter sees it next to ordinary text.
func examples(attacks, benign []Passage) []example {
	var out []example
	var benignSegs []string
	for _, p := range benign {
		for _, w := range windowTexts(p.Text) {
			if e := vectorize(w, -1); e.n >= MinFeatures {
				out = append(out, e)
			}
		}
		b := []byte(p.Text)
		for _, s := range Segments(b) {
			benignSegs = append(benignSegs, p.Text[s.Start:s.End])
		}
	}
	for i, p := range attacks {
		out = append(out, vectorize(p.Text, 1))
		if len(benignSegs) > 0 {
			out = append(out, vectorize(benignSegs[(i*7919)%len(benignSegs)]+" "+p.Text, 1))
		}
	}
	return out
}

// fit trains a linear model with stochastic gradient descent on the
// modified Huber loss, L2-regularized, with the classes weighted to equal
// total weight, and returns it quantized (threshold unset).
func fit(ex []example) *Model {
	var pos, neg float64
	for _, e := range ex {
		if e.y > 0 {
			pos++
		} else {
			neg++
		}
	}
	cw := map[float64]float64{1: float64(len(ex)) / float64(2*pos), -1: negWeight * float64(len(ex)) / float64(2*neg)}
	v := make([]float64, 1<<Bits)
	a, bias := 1.0, 0.0
	order := make([]int, len(ex))
	for i := range order {
		order[i] = i
	}
	r := rng(seed)
	t := 0.0
	for ep := 0; ep < epochs; ep++ {
		r.shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, k := range order {
			e := &ex[k]
			eta := eta0 / float64(1+float64(eta0*lambda*t))
			t++
			dot := 0.0
			for j, h := range e.idx {
				dot += float64(v[h] * e.val[j])
			}
			p := float64(a*dot) + bias
			z := float64(e.y * p)
			a *= 1 - float64(eta*lambda)
			if z >= 1 {
				continue
			}
			g := -4 * e.y
			if z >= -1 {
				g = float64(-2*float64(1-z)) * e.y
			}
			g = float64(g * cw[e.y])
			step := float64(eta*g) / a
			for j, h := range e.idx {
				v[h] -= float64(step * e.val[j])
			}
			bias -= float64(0.1 * float64(eta*g))
			if a < 1e-6 {
				for i := range v {
					v[i] = float64(v[i] * a)
				}
				a = 1
			}
		}
	}
	maxAbs := 0.0
	for _, x := range v {
		maxAbs = max(maxAbs, math.Abs(float64(x*a)))
	}
	m := &Model{Weights: make([]int16, 1<<Bits), Bias: bias, Scale: 1}
	if maxAbs == 0 {
		return m
	}
	m.Scale = maxAbs / quantMax
	for i, x := range v {
		q := math.Round(float64(x*a) / m.Scale)
		if math.Abs(q) >= minWeight {
			m.Weights[i] = int16(q)
		}
	}
	return m
}

// cutoff returns the lowest threshold, rounded up to a millionth, that at
// most the share target of n scores (given in descending order) reach.
func cutoff(score func(int) float64, n int, target float64) float64 {
	k := int(float64(target * float64(n))) // scores allowed to reach it
	if k >= n {
		return math.Inf(-1)
	}
	return math.Floor(score(k)*1e6)/1e6 + 1e-6
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// Train derives a model from the training data. It picks the threshold by
// cross-validation, repeated with different splits: the lowest score that
// at most WindowTarget(W) of the held-out benign windows and at most
// PassageTargetFP of the held-out benign passages reach, W being the most
// windows of a benign training passage (see TextTargetFP). Then it trains
// on all of the data.
func Train(d Data) (*Model, Report) {
	rep := Report{Attacks: len(d.Attacks), Benign: len(d.Benign), categoryN: map[string]int{}, catHit: map[string]int{}}
	fold := func(n int, salt uint64) []int {
		perm := make([]int, n)
		for i := range perm {
			perm[i] = i
		}
		r := rng(seed ^ salt)
		r.shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		f := make([]int, n)
		for pos, i := range perm {
			f[i] = pos % folds
		}
		return f
	}
	// Passages composed from the same request share their source and their
	// fold, so no request is tested on its own variants.
	srcIndex := map[string]int{}
	var srcs []string
	for _, p := range d.Attacks {
		if _, ok := srcIndex[p.Source]; !ok {
			srcIndex[p.Source] = len(srcs)
			srcs = append(srcs, p.Source)
		}
	}
	type scored struct {
		score float64
		src   string
	}
	var benignWin []scored
	// One entry per repetition and passage: the highest window score of
	// the passage when it was held out.
	var benignMax, attackMax []float64
	// The folds of all splits are fitted in parallel; their results are
	// put together in a fixed order, so the outcome does not depend on the
	// scheduling.
	type foldResult struct {
		am, bm []float64 // by passage, for the held-out ones
		win    []scored
	}
	results := make([]foldResult, repeats*folds)
	afs := make([][]int, repeats)
	bfs := make([][]int, repeats)
	for rep := 0; rep < repeats; rep++ {
		sf := fold(len(srcs), uint64(2*rep+1))
		afs[rep] = make([]int, len(d.Attacks))
		for i, p := range d.Attacks {
			afs[rep][i] = sf[srcIndex[p.Source]]
		}
		bfs[rep] = fold(len(d.Benign), uint64(2*rep+2))
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	for job := range results {
		rep, k := job/folds, job%folds
		af, bf := afs[rep], bfs[rep]
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			var ta, tb []Passage
			for i, p := range d.Attacks {
				if af[i] != k {
					ta = append(ta, p)
				}
			}
			for i, p := range d.Benign {
				if bf[i] != k {
					tb = append(tb, p)
				}
			}
			m := fit(examples(ta, tb))
			r := foldResult{am: make([]float64, len(d.Attacks)), bm: make([]float64, len(d.Benign))}
			for i, p := range d.Attacks {
				if af[i] == k {
					r.am[i] = m.MaxScore([]byte(p.Text))
				}
			}
			for i, p := range d.Benign {
				if bf[i] != k {
					continue
				}
				r.bm[i] = math.Inf(-1)
				m.Windows([]byte(p.Text), func(w Window, _ bool) {
					r.win = append(r.win, scored{w.Score, p.Source})
					r.bm[i] = max(r.bm[i], w.Score)
				})
			}
			results[job] = r
		}()
	}
	wg.Wait()
	for rep := 0; rep < repeats; rep++ {
		am := make([]float64, len(d.Attacks))
		bm := make([]float64, len(d.Benign))
		for k := 0; k < folds; k++ {
			r := results[rep*folds+k]
			for i := range am {
				if afs[rep][i] == k {
					am[i] = r.am[i]
				}
			}
			for i := range bm {
				if bfs[rep][i] == k {
					bm[i] = r.bm[i]
				}
			}
			benignWin = append(benignWin, r.win...)
		}
		attackMax = append(attackMax, am...)
		benignMax = append(benignMax, bm...)
	}
	sort.SliceStable(benignWin, func(i, j int) bool { return benignWin[i].score > benignWin[j].score })
	passages := slices.Clone(benignMax)
	slices.SortFunc(passages, func(a, b float64) int { return cmpDesc(a, b) })
	// The threshold lets at most the window target of the held-out benign
	// windows and at most PassageTargetFP of the held-out benign passages
	// reach it.
	rep.WindowsPerText = windowsPerText(d.Benign)
	rep.WindowTargetFP = WindowTarget(rep.WindowsPerText)
	th := max(cutoff(func(i int) float64 { return benignWin[i].score }, len(benignWin), rep.WindowTargetFP),
		cutoff(func(i int) float64 { return passages[i] }, len(passages), PassageTargetFP))
	rep.Threshold = th
	for _, w := range benignWin[:min(12, len(benignWin))] {
		rep.TopBenign = append(rep.TopBenign, fmt.Sprintf("%.3f %s", w.score, w.src))
	}
	for _, q := range []float64{0.01, 0.02, 0.05} {
		t := benignWin[min(int(q*float64(len(benignWin))), len(benignWin)-1)].score
		n := 0
		for _, s := range attackMax {
			if s > t {
				n++
			}
		}
		rep.RecallAt = append(rep.RecallAt, fmt.Sprintf("recall at %.0f%% window FP: %.1f%%", 100*q, 100*float64(n)/float64(len(attackMax))))
	}
	rep.BenignWindows = len(benignWin)
	over := 0
	for _, w := range benignWin {
		if w.score >= th {
			over++
		}
	}
	rep.CVWindowFP = float64(over) / float64(len(benignWin))
	fpP := 0
	for k, s := range benignMax {
		if s >= th {
			fpP++
			rep.CVFalsePositives = append(rep.CVFalsePositives, d.Benign[k%len(d.Benign)].Source)
		}
	}
	rep.CVPassageFP = float64(fpP) / float64(len(benignMax))
	hit := 0
	for k, s := range attackMax {
		c := d.Attacks[k%len(d.Attacks)].Category
		rep.categoryN[c]++
		if s >= th {
			hit++
			rep.catHit[c]++
		} else {
			rep.CVMissed = append(rep.CVMissed, d.Attacks[k%len(d.Attacks)].Source)
		}
	}
	rep.CVRecall = float64(hit) / float64(len(attackMax))
	rep.CategoryRecall = map[string]float64{}
	for c, n := range rep.categoryN {
		rep.CategoryRecall[c] = float64(rep.catHit[c]) / float64(n)
	}
	ex := examples(d.Attacks, d.Benign)
	rep.Examples = len(ex)
	m := fit(ex)
	m.Threshold = th
	for _, w := range m.Weights {
		if w != 0 {
			rep.Weights++
		}
	}
	return m, rep
}
