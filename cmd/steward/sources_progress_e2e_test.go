package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// progressFrame is one drawing of the line sources index keeps redrawing:
// "NAME: CHUNKS chunks, RATE MB/s  PCT% |bar| (DONE/TOTAL, RATE files/UNIT) [elapsed:left]";
// the first drawing, before any file is read, has the name alone.
var progressFrame = regexp.MustCompile(`^(.+?)(?:: (\d+) chunks, (\d+\.\d) MB/s)? +(\d+)% \|[^|]*\| \((\d+)/(\d+), (\d+(?:\.\d+)?) files/(s|min|hr)\) \[[^\]]*\]\s*$`)

type frame struct {
	chunks, pct, done, total int
	described                bool // with chunks and MB/s
}

// frames are the progress drawings in out (separated by carriage returns).
func frames(t *testing.T, out, name string) []frame {
	t.Helper()
	var fs []frame
	for _, part := range strings.Split(out, "\r") {
		m := progressFrame.FindStringSubmatch(part)
		if m == nil {
			continue
		}
		if m[1] != name {
			t.Errorf("a progress frame names %q, not the source's name %q: %q", m[1], name, part)
		}
		atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
		fs = append(fs, frame{chunks: atoi(m[2]), pct: atoi(m[4]), done: atoi(m[5]), total: atoi(m[6]), described: m[2] != ""})
	}
	return fs
}

// TestSourcesIndexProgress checks the progress line steward sources index
// draws on stderr while it indexes (README: "progress on stderr", so that
// stdout holds the summary alone, also with --json): the source's name, chunks so far, the reading
// rate, and files done of the total with their rate, redrawn in place,
// counting up to the whole folder, and cleared before the summary line.
func TestSourcesIndexProgress(t *testing.T) {
	home := ragHome(t)
	docs := filepath.Join(t.TempDir(), "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	const n = 2000
	for i := range n {
		var b strings.Builder
		for j := range 30 {
			fmt.Fprintf(&b, "Paragraph %d of note %d: the quarterly report of team %d lists %d open items.\n", j, i, i%17, (i*j)%97)
		}
		if err := os.WriteFile(filepath.Join(docs, fmt.Sprintf("note%04d.md", i)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if r := steward(t, home, "", nil, "sources", "add", "--id", "notes", "--name", "Team notes", "--folder", docs); r.code != 0 {
		t.Fatalf("add: %d %s", r.code, r.stderr)
	}
	r := steward(t, home, "", nil, "sources", "index", "notes")
	if r.code != 0 {
		t.Fatalf("index: %d %s %s", r.code, r.stdout, r.stderr)
	}
	fs := frames(t, r.stderr, "Team notes")
	if len(fs) == 0 {
		t.Fatalf("no progress line on stderr:\n%q", r.stderr)
	}
	last, counted := frame{}, false
	for _, f := range fs {
		counted = counted || (f.described && f.done > 0 && f.chunks > 0)
		if f.total != n {
			t.Errorf("a frame counts %d files in all, the folder has %d: %+v", f.total, n, f)
		}
		if f.done < last.done || f.chunks < last.chunks {
			t.Errorf("progress went backwards: %+v after %+v", f, last)
		}
		if f.done > f.total || f.pct != f.done*100/f.total {
			t.Errorf("the percentage does not match the files done: %+v", f)
		}
		last = f
	}
	if !counted {
		t.Errorf("no frame counts files and chunks while indexing: %+v", fs)
	}
	// The line is cleared at the end; stdout holds the summary alone.
	summary := fmt.Sprintf("Team notes: %d files (%d new, 0 changed, 0 renamed, 0 removed), ", n, n)
	i := strings.LastIndex(r.stderr, "\r")
	if i < 0 || strings.TrimSpace(r.stderr[:i][strings.LastIndex(r.stderr[:i], "\r")+1:]) != "" {
		t.Errorf("the progress line is not cleared at the end:\n%q", r.stderr[max(0, len(r.stderr)-400):])
	}
	if strings.Contains(r.stdout, "\r") {
		t.Errorf("progress reached stdout:\n%q", r.stdout[:min(len(r.stdout), 400)])
	}
	tail := r.stdout
	if !strings.HasPrefix(tail, summary) || !regexp.MustCompile(`, \d+ chunks stored, 0 embedded in [0-9.]+m?s \(\d+ files/s\)\n$`).MatchString(tail) {
		t.Errorf("the summary line: %q", tail)
	}
	if !strings.Contains(r.stderr, "indexed for search by words only") {
		t.Errorf("without an embedding provider Steward says so: %q", r.stderr)
	}

	// --json: stdout is the JSON alone; the progress goes to stderr.
	for i := range 50 {
		if err := os.WriteFile(filepath.Join(docs, fmt.Sprintf("note%04d.md", i)), []byte(fmt.Sprintf("Changed note %d.\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r = steward(t, home, "", nil, "sources", "index", "notes", "--json")
	if r.code != 0 {
		t.Fatalf("index --json: %d %s", r.code, r.stderr)
	}
	var out struct {
		DataSources []struct {
			ID               string
			Changed, Chunks  int
			Unchanged, Added int
		} `json:"data_sources"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || strings.Contains(r.stdout, "\r") {
		t.Fatalf("stdout of --json is not JSON alone: %v\n%q", err, r.stdout)
	}
	if len(out.DataSources) != 1 || out.DataSources[0].Changed != 50 || out.DataSources[0].Unchanged != n-50 || out.DataSources[0].Added != 0 {
		t.Errorf("index --json: %+v", out.DataSources)
	}
	if fs := frames(t, r.stderr, "Team notes"); len(fs) == 0 || fs[len(fs)-1].total != n {
		t.Errorf("with --json the progress goes to stderr: %q", r.stderr)
	}
}
