package guard

import (
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"unsafe"
)

// lazyRegexp is a regular expression compiled on its first use: the
// anchored variants of the rules cost as much to compile as the rules
// themselves, and most texts reach few of them.
// The rules themselves are lazy too: an ordinary text meets few of their
// trigger words, and compiling them all cost the first filtered text of
// every process several milliseconds. TestEveryRuleCompiles compiles each.
type lazyRegexp struct {
	expr string
	re   func() *regexp.Regexp
}

func newLazyRegexp(expr string) *lazyRegexp {
	return &lazyRegexp{expr: expr, re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })}
}

// String returns the expression's source text.
func (l *lazyRegexp) String() string { return l.expr }

// FindSubmatchIndex is regexp.Regexp's.
func (l *lazyRegexp) FindSubmatchIndex(b []byte) []int { return l.re().FindSubmatchIndex(b) }

// FindAllSubmatchIndex is regexp.Regexp's.
func (l *lazyRegexp) FindAllSubmatchIndex(b []byte, n int) [][]int {
	return l.re().FindAllSubmatchIndex(b, n)
}

// FindAllIndex is regexp.Regexp's: cheaper than FindAllSubmatchIndex when
// no group is read.
func (l *lazyRegexp) FindAllIndex(b []byte, n int) [][]int { return l.re().FindAllIndex(b, n) }

// FindIndex is regexp.Regexp's.
func (l *lazyRegexp) FindIndex(b []byte) []int { return l.re().FindIndex(b) }

// Match is regexp.Regexp's.
func (l *lazyRegexp) Match(b []byte) bool { return l.re().Match(b) }

// The automata of the phrases (hundreds of thousands of nodes) cost about
// 300 ms and 60 MB of allocations to build, which every process that filters
// text would pay. They are built by go generate instead and embedded:
//
//	go generate ./guard/
//
// runs TestRuleTablesUpToDate with -update-tables, which writes
// rules_tables.bin; without the flag the same test fails when the file is
// stale. The file starts with a fingerprint of what it was built from (the
// phrase templates, the rules' triggers, the ROT13 words, the spelled-out
// extras and the categories): when it does not match, compile builds the
// tables at run time, so a stale file costs time, never detections.
//
// The int32 arrays are used in place, from the read-only data of the
// binary, so loading allocates only the pattern descriptions and the typo
// table (about 0.4 MB).
//
//go:generate go test -run ^TestRuleTablesUpToDate$ -update-tables .

//go:embed rules_tables.bin
var generatedTables string

// tablesMagic starts rules_tables.bin; the digit is the format version.
const tablesMagic = "STGRTBL2"

// tablesFingerprint digests the inputs of buildTables.
func tablesFingerprint(rules []regexRule) [32]byte {
	h := sha256.New()
	field := func(s string) {
		var n [4]byte
		binary.LittleEndian.PutUint32(n[:], uint32(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	field(tablesMagic)
	for _, c := range Categories {
		field(string(c))
	}
	field("templates")
	for _, t := range phraseTemplates {
		field(t.lang)
		field(string(t.category))
		field(t.tmpl)
	}
	field("extras")
	for _, e := range spacedExtras {
		field(e)
	}
	field("rules")
	for _, r := range rules {
		field(r.id)
		for _, tr := range r.triggers {
			field(tr)
		}
		field("")
	}
	field("rot13")
	for _, w := range rot13Words {
		field(w)
	}
	var fp [32]byte
	h.Sum(fp[:0])
	return fp
}

// tablesWriter lays out rules_tables.bin: the magic, the fingerprint, then
// sections, each a uint32 element count followed by the elements, padded
// to 4 bytes. All integers are little-endian.
type tablesWriter struct{ b []byte }

func (w *tablesWriter) u32(v uint32) { w.b = binary.LittleEndian.AppendUint32(w.b, v) }

func (w *tablesWriter) int32s(s []int32) {
	w.u32(uint32(len(s)))
	for _, v := range s {
		w.u32(uint32(v))
	}
}

func (w *tablesWriter) bytes(s []byte) {
	w.u32(uint32(len(s)))
	w.b = append(w.b, s...)
	for len(w.b)%4 != 0 {
		w.b = append(w.b, 0)
	}
}

func (w *tablesWriter) matcher(m *matcher) {
	w.int32s(m.first)
	w.bytes(m.label)
	w.int32s(m.fail)
	w.int32s(m.report)
	w.int32s(m.outNode)
	w.int32s(m.outStart)
	w.int32s(m.outs)
	w.u32(uint32(m.denseNodes))
	w.int32s(m.dense)
}

// encodeTables serializes the tables of d, which buildTables filled.
func encodeTables(d *detectors, fp [32]byte) []byte {
	w := &tablesWriter{b: []byte(tablesMagic)}
	w.b = append(w.b, fp[:]...)
	w.matcher(d.ac)
	w.matcher(d.spaced)
	meta := make([]byte, 0, 8*len(d.meta))
	for _, m := range d.meta {
		meta = append(meta, m.kind, m.cat, b2u(m.prefix), b2u(m.wordStart), b2u(m.wordEnd), m.rule)
		meta = binary.LittleEndian.AppendUint16(meta, m.length)
	}
	w.bytes(meta)
	lens := make([]int32, len(d.spacedLen))
	for i, n := range d.spacedLen {
		lens[i] = int32(n)
	}
	w.int32s(lens)
	// The typo table in the order of its signatures.
	sigs := make([]string, 0, len(d.typo))
	for s := range d.typo {
		sigs = append(sigs, s)
	}
	slices.Sort(sigs)
	var typo []byte
	for _, s := range sigs {
		typo = append(typo, byte(len(s)))
		typo = append(typo, s...)
		typo = append(typo, byte(len(d.typo[s])))
		typo = append(typo, d.typo[s]...)
	}
	w.bytes(typo)
	var ends []byte
	for i := range d.typoEnds {
		for j := range d.typoEnds[i] {
			ends = append(ends, b2u(d.typoEnds[i][j]))
		}
	}
	w.bytes(ends)
	return w.b
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// tablesReader reads the sections of rules_tables.bin. The int32 arrays
// alias the data when it is 4-byte aligned on a little-endian machine and
// are copied otherwise; the data is never written.
type tablesReader struct {
	s     string
	off   int
	alias bool
	err   error
}

var errTablesShort = errors.New("rules_tables.bin ends inside a section")

func (r *tablesReader) u32() uint32 {
	if r.err != nil || r.off+4 > len(r.s) {
		r.err = errTablesShort
		return 0
	}
	v := le32(r.s[r.off:])
	r.off += 4
	return v
}

// le32 reads a little-endian uint32 at the start of s.
func le32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

func (r *tablesReader) int32s() []int32 {
	n := int(r.u32())
	if r.err != nil || n > (len(r.s)-r.off)/4 {
		r.err = errTablesShort
		return nil
	}
	data := r.s[r.off : r.off+4*n]
	r.off += 4 * n
	if n == 0 {
		return []int32{}
	}
	if r.alias {
		return unsafe.Slice((*int32)(unsafe.Pointer(unsafe.StringData(data))), n)
	}
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(le32(data[4*i:]))
	}
	return out
}

func (r *tablesReader) bytes() string {
	n := int(r.u32())
	if r.err != nil || n > len(r.s)-r.off {
		r.err = errTablesShort
		return ""
	}
	data := r.s[r.off : r.off+n]
	r.off += (n + 3) &^ 3
	return data
}

func (r *tablesReader) matcher() *matcher {
	m := &matcher{first: r.int32s()}
	label := r.bytes()
	if len(label) > 0 {
		// Only read, like the int32 arrays.
		m.label = unsafe.Slice(unsafe.StringData(label), len(label))
	}
	m.fail = r.int32s()
	m.report = r.int32s()
	m.outNode = r.int32s()
	m.outStart = r.int32s()
	m.outs = r.int32s()
	m.denseNodes = int32(r.u32())
	m.dense = r.int32s()
	if r.err == nil {
		n := len(m.label)
		if len(m.first) != n+1 || len(m.fail) != n || len(m.report) != n || len(m.outStart) != len(m.outNode)+1 ||
			m.denseNodes < 0 || int(m.denseNodes) > n || len(m.dense) != int(m.denseNodes)*256 {
			r.err = errors.New("rules_tables.bin holds an automaton whose arrays do not fit together")
		}
	}
	return m
}

// decodeTables fills the tables of d from data, which must carry the
// fingerprint fp.
func (d *detectors) decodeTables(data string, fp [32]byte) error {
	if len(data) < len(tablesMagic)+32 || data[:len(tablesMagic)] != tablesMagic {
		return fmt.Errorf("rules_tables.bin does not start with %q", tablesMagic)
	}
	if data[len(tablesMagic):len(tablesMagic)+32] != string(fp[:]) {
		return errors.New("rules_tables.bin was built from other phrases or triggers; run go generate ./guard/")
	}
	r := &tablesReader{s: data, off: len(tablesMagic) + 32}
	r.alias = uintptr(unsafe.Pointer(unsafe.StringData(data)))%4 == 0 && binary.NativeEndian.Uint16([]byte{1, 0}) == 1
	ac, spaced := r.matcher(), r.matcher()
	meta := r.bytes()
	lens := r.int32s()
	typo := r.bytes()
	ends := r.bytes()
	if r.err != nil {
		return r.err
	}
	if len(meta) != 8*len(ac.outs) || len(ends) != 26*26 || len(lens) != len(spaced.outs) {
		return errors.New("rules_tables.bin holds tables of the wrong size")
	}
	d.ac, d.spaced = ac, spaced
	d.meta = make([]patternMeta, len(meta)/8)
	for i := range d.meta {
		e := meta[8*i:]
		d.meta[i] = patternMeta{kind: e[0], cat: e[1], prefix: e[2] == 1, wordStart: e[3] == 1, wordEnd: e[4] == 1, rule: e[5],
			length: uint16(e[6]) | uint16(e[7])<<8}
	}
	d.spacedLen = make([]int, len(lens))
	for i, n := range lens {
		d.spacedLen[i] = int(n)
	}
	d.typo = map[string]string{}
	for len(typo) > 0 {
		n := int(typo[0])
		if 1+n >= len(typo) {
			return errors.New("rules_tables.bin holds a cut typo table")
		}
		sig := typo[1 : 1+n]
		typo = typo[1+n:]
		m := int(typo[0])
		if 1+m > len(typo) {
			return errors.New("rules_tables.bin holds a cut typo table")
		}
		d.typo[sig] = typo[1 : 1+m]
		typo = typo[1+m:]
	}
	for i := range d.typoEnds {
		for j := range d.typoEnds[i] {
			d.typoEnds[i][j] = ends[26*i+j] == 1
		}
	}
	return nil
}

// loadTables fills the tables of d from the generated data and reports
// whether it could; a stale or damaged file leaves d as it was.
func (d *detectors) loadTables(data string) bool {
	var t detectors
	if err := t.decodeTables(data, tablesFingerprint(d.rules)); err != nil {
		return false
	}
	d.ac, d.spaced, d.meta, d.spacedLen, d.typo, d.typoEnds = t.ac, t.spaced, t.meta, t.spacedLen, t.typo, t.typoEnds
	return true
}
