package local

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/embed"
	"github.com/stewardhq/steward/internal/embedtest"
)

// The child of TestKilledIndexerResumes: it indexes the folder it is given
// and prints each progress report as a JSON line, until its parent kills
// it.
func TestMain(m *testing.M) {
	if dir := os.Getenv("STEWARD_LOCAL_CHILD_DIR"); dir != "" {
		os.Exit(child(dir, os.Getenv("STEWARD_LOCAL_CHILD_DB"), os.Getenv("STEWARD_LOCAL_CHILD_EMBED")))
	}
	os.Exit(m.Run())
}

func child(dir, db, embedURL string) int {
	ctx := context.Background()
	ix, err := Open(ctx, db)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	emb, err := embed.New(embed.Config{Kind: embed.Ollama, BaseURL: embedURL, Model: "slow", Provider: "SELF_HOSTED", BatchSize: 4}, "", nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	enc := json.NewEncoder(os.Stdout)
	_, err = ix.Sync(ctx, Spec{ID: "k", Path: dir, Embedder: emb, MaxChunkTokens: 64, OverlapTokens: 8}, func(p Progress) { _ = enc.Encode(p) })
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// A killed indexer leaves a consistent index, and the next run completes
// it: the child is killed with SIGKILL in the middle of indexing (at the
// report of its first commit, with its embedding under way), the index
// passes SQLite's and its own checks, and a resumed run ends with every
// file indexed and every chunk embedded.
func TestKilledIndexerResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a subprocess")
	}
	dir := t.TempDir()
	const n = 600
	for i := range n {
		var b strings.Builder
		fmt.Fprintf(&b, "# Document %d\n\n", i)
		for p := range 6 {
			fmt.Fprintf(&b, "Paragraph %d of document %d talks about topic%d and the word marker%d in some detail, with filler words to make it longer.\n\n", p, i, i%17, i)
		}
		writeFile(t, filepath.Join(dir, fmt.Sprintf("d%03d", i/50), fmt.Sprintf("doc%04d.md", i)), b.String())
	}
	slow := embedtest.Keywords("topic1", "topic2", "topic3")
	srv := embedtest.Start(t, func(s string) []float32 {
		time.Sleep(3 * time.Millisecond)
		return slow(s)
	})
	db := filepath.Join(t.TempDir(), "docs.db")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "STEWARD_LOCAL_CHILD_DIR="+dir, "STEWARD_LOCAL_CHILD_DB="+db, "STEWARD_LOCAL_CHILD_EMBED="+srv.URL)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	sc := bufio.NewScanner(out)
	var last Progress
	for sc.Scan() {
		if err := json.Unmarshal(sc.Bytes(), &last); err != nil {
			continue
		}
		if last.FilesDone > 0 && last.FilesDone < n {
			// In the middle: files left to index and chunks to embed.
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			killed = true
			break
		}
	}
	_ = cmd.Wait()
	if !killed {
		t.Fatalf("the child ended before it could be killed (last progress %+v): %s", last, stderr.String())
	}
	if last.FilesDone >= n {
		t.Fatalf("killed too late: %+v", last)
	}
	ctx := context.Background()
	ix, err := Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	checkIndex(t, ix)
	st, err := ix.Status(ctx, "k")
	if err != nil || st.Complete || st.Documents == 0 || st.Documents >= n {
		t.Fatalf("after the kill: %+v %v (killed at %+v)", st, err, last)
	}
	t.Logf("killed at %+v; the index held %d documents, %d of %d chunks embedded", last, st.Documents, st.Embedded, st.Chunks)
	emb, err := embed.New(embed.Config{Kind: embed.Ollama, BaseURL: srv.URL, Model: "slow", Provider: "SELF_HOSTED", BatchSize: 64}, "", srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	stats, err := ix.Sync(ctx, Spec{ID: "k", Path: dir, Embedder: emb, MaxChunkTokens: 64, OverlapTokens: 8}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Added+stats.Unchanged != n || stats.Changed+stats.Removed+stats.Renamed != 0 || len(stats.Skipped) != 0 {
		t.Fatalf("resumed run %+v", stats)
	}
	checkIndex(t, ix)
	st, err = ix.Status(ctx, "k")
	if err != nil || !st.Complete || st.Documents != n || st.Embedded != st.Chunks {
		t.Fatalf("after the resumed run: %+v %v", st, err)
	}
	// The last documents, written by the resumed run, are found.
	hits, _, err := ix.Search(ctx, "k", Query{Text: fmt.Sprintf("marker%d", n-1), Limit: 1})
	if err != nil || len(hits) != 1 || !strings.HasSuffix(hits[0].RelPath, fmt.Sprintf("doc%04d.md", n-1)) {
		t.Fatalf("search after resume: %+v %v", hits, err)
	}
}
