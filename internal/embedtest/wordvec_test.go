package embedtest

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestLoadWordVectorsBothFormatsAndSIF(t *testing.T) {
	dir := t.TempDir()
	glove := filepath.Join(dir, "g.txt")
	if err := os.WriteFile(glove, []byte("the 1 0 0\nwing 0 1 0\nwings 0 0.9 0.1\nslipstream 0 0 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wink := filepath.Join(dir, "w.json")
	if err := os.WriteFile(wink, []byte(`{"precision":8,"dimensions":3,"size":4,"words":["the","wing","wings","slipstream"],`+
		`"vectors":{"the":[1,0,0,1,0],"wing":[0,1,0,1,1],"wings":[0,0.9,0.1,0.9,2],"slipstream":[0,0,1,1,3]},"unkVector":[0,0,0,0,-1]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{glove, wink} {
		wv, err := LoadWordVectors(p, func(w string) bool { return w != "wings" })
		if err != nil {
			t.Fatal(err)
		}
		if wv.Dim != 3 || wv.Words != 4 || wv.Len() != 3 || wv.Has("wings") || !wv.Has("slipstream") || wv.rank["slipstream"] != 4 {
			t.Fatalf("%s: dim %d, words %d, kept %d, ranks %v", p, wv.Dim, wv.Words, wv.Len(), wv.rank)
		}
		m := SIF(wv)
		// The more frequent a word, the less it weighs.
		if the, wing, slip := m("The")[0], m("WING")[1], m("slipstream")[2]; !(0 < the && the < wing && wing < slip) {
			t.Errorf("%s: weights of the, wing, slipstream: %v %v %v", p, the, wing, slip)
		}
		// The average of the known words' weighted vectors.
		v, want := m("the wing; unknown-words"), []float32{m("the")[0] / 2, m("wing")[1] / 2, 0}
		for i := range v {
			if math.Abs(float64(v[i]-want[i])) > 1e-9 {
				t.Errorf("%s: vector %v, want %v", p, v, want)
			}
		}
		if z := m("nothing known"); z[0] == 0 || math.Abs(float64(z[1])) > 0 {
			t.Errorf("%s: vector of a text without known words %v", p, z)
		}
	}
	if _, err := LoadWordVectors(filepath.Join(dir, "missing"), nil); err == nil {
		t.Error("a missing file loaded")
	}
	bad := filepath.Join(dir, "bad.txt")
	_ = os.WriteFile(bad, []byte("a 1 2\nb 1\n"), 0o644)
	if _, err := LoadWordVectors(bad, nil); err == nil {
		t.Error("lines of different sizes loaded")
	}
}
