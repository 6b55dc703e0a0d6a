// Command trainmodel trains the guard package's local classifier from the
// training files and writes the encoded model. guard runs it through
// go generate:
//
//	go run ./internal/textmodel/cmd/trainmodel testdata/train localmodel.bin
//
// More training directories may come before the model file (for example
// the public attacks scripts/fetch-training-attacks.sh writes); their
// passages are added in the order the directories are given.
//
// -threshold sets the operating point instead of the cross-validated one
// (at least that one): the threshold chosen on real benign pages by
// pagethreshold.
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"

	"github.com/stewardhq/steward/guard/internal/textmodel"
)

func main() {
	threshold := flag.Float64("threshold", 0, "operating point, if higher than the cross-validated one")
	flag.Parse()
	args := flag.Args()
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: trainmodel [-threshold t] <training dir>... <model file>")
		os.Exit(2)
	}
	dirs, out := args[:len(args)-1], args[len(args)-1]
	var d textmodel.Data
	for i, dir := range dirs {
		di, err := textmodel.LoadPart(os.DirFS(dir))
		if err == nil && i == len(dirs)-1 {
			err = textmodel.Check(textmodel.Data{Attacks: append(d.Attacks, di.Attacks...), Benign: append(d.Benign, di.Benign...)})
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "trainmodel:", dir+":", err)
			os.Exit(1)
		}
		d.Attacks = append(d.Attacks, di.Attacks...)
		d.Benign = append(d.Benign, di.Benign...)
	}
	m, rep := textmodel.Train(d)
	if *threshold > m.Threshold {
		fmt.Printf("threshold %.6f instead of the cross-validated %.6f\n", *threshold, m.Threshold)
		m.Threshold = *threshold
	}
	if err := os.WriteFile(out, m.Encode(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "trainmodel:", err)
		os.Exit(1)
	}
	fmt.Printf("%d attack and %d benign passages, %d training windows, %d weights\n", rep.Attacks, rep.Benign, rep.Examples, rep.Weights)
	fmt.Printf("windows per text W = %d (most windows of a benign passage); per-window target %.6f for at most %.0f%% of texts flagged\n",
		rep.WindowsPerText, rep.WindowTargetFP, 100*textmodel.TextTargetFP)
	fmt.Printf("cross-validation (%d folds, 3 splits): threshold %.4f; held-out benign windows over it %.2f%% of %d, benign passages %.2f%%; attack passages caught %.1f%%\n",
		5, rep.Threshold, 100*rep.CVWindowFP, rep.BenignWindows, 100*rep.CVPassageFP, 100*rep.CVRecall)
	cats := make([]string, 0, len(rep.CategoryRecall))
	for c := range rep.CategoryRecall {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	for _, c := range cats {
		fmt.Printf("  %-20s %.1f%%\n", c, 100*rep.CategoryRecall[c])
	}
	if os.Getenv("TRAINMODEL_VERBOSE") != "" {
		for _, s := range rep.CVMissed {
			fmt.Println("missed:", s)
		}
		for _, s := range rep.CVFalsePositives {
			fmt.Println("false positive:", s)
		}
		for _, s := range rep.TopBenign {
			fmt.Println("top benign window:", s)
		}
		for _, s := range rep.RecallAt {
			fmt.Println(s)
		}
	}
}
