package guard

import (
	"bytes"
	"flag"
	"os"
	"reflect"
	"runtime"
	"testing"
)

var updateTables = flag.Bool("update-tables", false, "write rules_tables.bin from the phrases and triggers (go generate ./guard/)")

// TestRuleTablesUpToDate fails when rules_tables.bin is not what the
// phrases, triggers and build code of this tree produce; with
// -update-tables it writes the file.
func TestRuleTablesUpToDate(t *testing.T) {
	d := &detectors{rules: allRules()}
	d.buildTables()
	want := encodeTables(d, tablesFingerprint(d.rules))
	if *updateTables {
		if err := os.WriteFile("rules_tables.bin", want, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote rules_tables.bin: %d bytes", len(want))
		return
	}
	if !bytes.Equal([]byte(generatedTables), want) {
		t.Fatalf("rules_tables.bin (%d bytes) is stale: the phrases, triggers or the automaton build give %d other bytes; run go generate ./guard/ and commit the file", len(generatedTables), len(want))
	}
	// What the process loads is what the build gives.
	var got detectors
	got.rules = d.rules
	if !got.loadTables(generatedTables) {
		t.Fatal("the generated tables match the build but do not load")
	}
	for name, pair := range map[string][2]any{
		"ac": {got.ac, d.ac}, "spaced": {got.spaced, d.spaced}, "meta": {got.meta, d.meta},
		"spacedLen": {got.spacedLen, d.spacedLen}, "typo": {got.typo, d.typo}, "typoEnds": {got.typoEnds, d.typoEnds},
	} {
		if !reflect.DeepEqual(pair[0], pair[1]) {
			t.Errorf("the loaded %s differs from the built one", name)
		}
	}
}

// TestRuleTablesStaleFallsBack checks that tables built from other inputs
// are refused (and compile then builds its own), and that a cut file is
// refused rather than read.
func TestRuleTablesStaleFallsBack(t *testing.T) {
	rules := allRules()
	var d detectors
	d.rules = rules
	other := append([]regexRule(nil), rules...)
	other[0].triggers = append(append([]string(nil), other[0].triggers...), "a new trigger")
	if err := d.decodeTables(generatedTables, tablesFingerprint(other)); err == nil {
		t.Fatal("tables generated before a trigger was added were accepted")
	}
	if d.ac != nil {
		t.Fatal("a refused file filled the automaton")
	}
	for _, n := range []int{0, 10, len(tablesMagic) + 32, len(generatedTables) / 2, len(generatedTables) - 3} {
		if d.loadTables(generatedTables[:n]) {
			t.Errorf("rules_tables.bin cut to %d bytes was loaded", n)
		}
	}
	// The copy path (unaligned data or a big-endian machine) gives the
	// same tables as the aliasing one.
	r := &tablesReader{s: generatedTables, off: len(tablesMagic) + 32}
	a := &tablesReader{s: generatedTables, off: len(tablesMagic) + 32, alias: runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64"}
	if m1, m2 := r.matcher(), a.matcher(); r.err != nil || a.err != nil || !reflect.DeepEqual(m1, m2) {
		t.Fatalf("copied and aliased automata differ (errors %v, %v)", r.err, a.err)
	}
}
