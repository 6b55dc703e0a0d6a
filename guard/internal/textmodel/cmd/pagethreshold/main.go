// Command pagethreshold chooses a local classifier's operating point on
// real benign pages: it scores every *.txt file of a directory (one page
// each) with the model and prints the lowest threshold, rounded up to a
// millionth, at which at most the given share of the pages has a window
// flagged, with the share at the model's own threshold:
//
//	go run ./internal/textmodel/cmd/pagethreshold model.bin pages-dir 0.01
package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/stewardhq/steward/guard/internal/textmodel"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: pagethreshold <model file> <pages dir> <share>")
		os.Exit(2)
	}
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail(err)
	}
	m, err := textmodel.Decode(raw)
	if err != nil {
		fail(err)
	}
	share, err := strconv.ParseFloat(os.Args[3], 64)
	if err != nil {
		fail(err)
	}
	names, err := filepath.Glob(filepath.Join(os.Args[2], "*.txt"))
	if err != nil {
		fail(err)
	}
	slices.Sort(names)
	var scores []float64
	over := 0
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			fail(err)
		}
		s := m.MaxScore(b)
		if s >= m.Threshold {
			over++
		}
		scores = append(scores, s)
	}
	if len(scores) == 0 {
		fail(fmt.Errorf("no pages in %s", os.Args[2]))
	}
	slices.SortFunc(scores, func(a, b float64) int { return -cmpF(a, b) })
	k := int(share * float64(len(scores)))
	t := math.Inf(-1)
	if k < len(scores) {
		t = math.Floor(scores[k]*1e6)/1e6 + 1e-6
	}
	fmt.Printf("%d pages; at the model's threshold %.6f: %d flagged (%.2f%%); threshold for at most %.2f%%: %.6f\n",
		len(scores), m.Threshold, over, 100*float64(over)/float64(len(scores)), 100*share, t)
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "pagethreshold:", err)
	os.Exit(1)
}
