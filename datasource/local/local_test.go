package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/embed"
	"github.com/stewardhq/steward/internal/embedtest"
)

// fixtures copies the real documents of ../extract/testdata/tika into a
// folder (with a subfolder, a hidden folder and an image that are passed
// over) and returns it.
func fixtures(t *testing.T) string {
	t.Helper()
	src := filepath.Join("..", "extract", "testdata", "tika")
	dir := filepath.Join(t.TempDir(), "docs")
	for _, d := range []string{"office", "web", ".git"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	place := map[string]string{
		"testPDF.pdf": "testPDF.pdf", "testWORD.docx": "office/testWORD.docx", "testPPT.pptx": "office/testPPT.pptx",
		"testEXCEL.xlsx": "office/testEXCEL.xlsx", "testOpenOffice2.odt": "office/testOpenOffice2.odt", "testFooter.ods": "office/testFooter.ods",
		"LibreOfficeImpress_odp_1.3.odp": "office/LibreOfficeImpress_odp_1.3.odp", "testCSV.csv": "testCSV.csv",
		"testHTML.html": "web/testHTML.html", "README.md": "README.md", "Tika.java": "Tika.java",
	}
	for from, to := range place {
		b, err := os.ReadFile(filepath.Join(src, from))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, to), string(b))
	}
	writeFile(t, filepath.Join(dir, ".git", "config"), "[core]\n")
	writeFile(t, filepath.Join(dir, "logo.png"), "\x89PNG\r\n")
	return dir
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func openIndex(t *testing.T) *Index {
	t.Helper()
	ix, err := Open(context.Background(), filepath.Join(t.TempDir(), "docs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// keywordEmbedder is the loopback embedding server's Ollama client with
// one dimension per keyword.
func keywordEmbedder(t *testing.T, keywords ...string) (embed.Embedder, *embedtest.Server) {
	t.Helper()
	srv := embedtest.Start(t, embedtest.Keywords(keywords...))
	e, err := embed.New(embed.Config{Kind: embed.Ollama, BaseURL: srv.URL, Model: "toy", Provider: "SELF_HOSTED", BatchSize: 8}, "", srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	return e, srv
}

func checkIndex(t *testing.T, ix *Index) {
	t.Helper()
	problems, err := ix.Store().Check(context.Background())
	if err != nil || len(problems) > 0 {
		t.Fatalf("index check: %v %v", problems, err)
	}
}

func relPaths(hs []Hit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.RelPath)
	}
	return out
}

// The seed: a user points Steward at a folder of real documents and asks
// about them; the passage that answers comes back with its document.
func TestRealFolderIndexedAndSearched(t *testing.T) {
	ctx := context.Background()
	dir := fixtures(t)
	ix := openIndex(t)
	emb, srv := keywordEmbedder(t, "toolkit", "squares", "watershed", "neooffice", "impress", "heading", "indexation")
	var last Progress
	calls := 0
	st, err := ix.Sync(ctx, Spec{ID: "docs", Path: dir, Embedder: emb}, func(p Progress) { last = p; calls++ })
	if err != nil {
		t.Fatal(err)
	}
	if st.Added != 11 || st.Chunks < 11 || st.Embedded != st.Chunks || len(st.Skipped) != 0 || st.EmbeddingError != "" || st.WordsOnly {
		t.Fatalf("stats %+v", st)
	}
	if calls == 0 || last.Files != 11 || last.FilesDone != 11 || last.Chunks != st.Chunks || last.Embedded != st.Chunks || last.Bytes == 0 {
		t.Errorf("last progress %+v after %d reports", last, calls)
	}
	checkIndex(t, ix)
	for _, tc := range []struct {
		query, want, text string
		page              int
	}{
		{"toolkit for detecting and extracting metadata", "testPDF.pdf", "Apache Tika is a toolkit for detecting", 1},
		{"Numbers and their Squares written in Excel", "office/testEXCEL.xlsx", "Sample Excel Worksheet", 0},
		{"Watershed Avalanche Black Panther", "office/testPPT.pptx", "Watershed", 1},
		{"sample document written in NeoOffice", "office/testOpenOffice2.odt", "NeoOffice 2.2.1", 0},
		{"example Impress file", "office/LibreOfficeImpress_odp_1.3.odp", "An example Impress file", 1},
		{"Heading Level 1 sample word document", "office/testWORD.docx", "Sample Word Document", 0},
		{"Indexation du fichier", "web/testHTML.html", "du fichier", 0},
	} {
		hits, _, err := ix.Search(ctx, "docs", Query{Text: tc.query, Limit: 3, Embedder: emb})
		if err != nil {
			t.Fatalf("%q: %v", tc.query, err)
		}
		if len(hits) == 0 || hits[0].RelPath != tc.want || !strings.Contains(hits[0].Text, tc.text) {
			t.Errorf("%q: hits %v, want %s first with %q", tc.query, relPaths(hits), tc.want, tc.text)
			continue
		}
		h := hits[0]
		if h.Path != filepath.Join(dir, filepath.FromSlash(tc.want)) || h.Page != tc.page || h.Modified.IsZero() || h.Title == "" {
			t.Errorf("%q: hit %+v", tc.query, h)
		}
	}
	// The source code and Markdown are found by words.
	hits, _, err := ix.Search(ctx, "docs", Query{Text: "public class Tika", Limit: 1})
	if err != nil || len(hits) != 1 || hits[0].RelPath != "Tika.java" || hits[0].Kind != "code" {
		t.Errorf("code: %v %v", relPaths(hits), err)
	}
	embeddedBefore := srv.Texts()
	// A second run reads nothing and embeds nothing.
	st, err = ix.Sync(ctx, Spec{ID: "docs", Path: dir, Embedder: emb}, nil)
	if err != nil || st.Unchanged != 11 || st.Added+st.Changed+st.Removed+st.Renamed+st.Chunks+st.Embedded != 0 {
		t.Fatalf("second run %+v %v", st, err)
	}
	if srv.Texts() != embeddedBefore {
		t.Errorf("the second run embedded %d texts", srv.Texts()-embeddedBefore)
	}
	status, err := ix.Status(ctx, "docs")
	if err != nil || !status.Indexed || !status.Complete || status.Documents != 11 || status.Embedded != status.Chunks || status.Model != "toy" || status.LastRun.IsZero() {
		t.Errorf("status %+v %v", status, err)
	}
}

func TestIncrementalChangesRenamesAndRemovals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.md"), "# Leave\n\nParental leave lasts up to fourteen months.\n")
	writeFile(t, filepath.Join(dir, "b.txt"), "The canteen opens at noon and closes at three.")
	writeFile(t, filepath.Join(dir, "sub", "c.md"), "Travel expenses are paid within thirty days.")
	ix := openIndex(t)
	emb, srv := keywordEmbedder(t, "leave", "canteen", "travel", "budget")
	spec := Spec{ID: "s", Path: dir, Embedder: emb}
	st, err := ix.Sync(ctx, spec, nil)
	if err != nil || st.Added != 3 {
		t.Fatalf("first run %+v %v", st, err)
	}
	texts := srv.Texts()

	// Rename: the chunks and vectors move with the content.
	if err := os.Rename(filepath.Join(dir, "sub", "c.md"), filepath.Join(dir, "travel.md")); err != nil {
		t.Fatal(err)
	}
	// Copy: a second file with the same content.
	b, _ := os.ReadFile(filepath.Join(dir, "b.txt"))
	writeFile(t, filepath.Join(dir, "copy of b.txt"), string(b))
	st, err = ix.Sync(ctx, spec, nil)
	if err != nil || st.Renamed != 1 || st.Added != 1 || st.Removed != 0 || st.Unchanged != 2 {
		t.Fatalf("rename/copy run %+v %v", st, err)
	}
	if srv.Texts() != texts {
		t.Errorf("rename and copy embedded %d texts", srv.Texts()-texts)
	}
	hits, _, err := ix.Search(ctx, "s", Query{Text: "travel expenses", Limit: 5, Embedder: emb})
	if err != nil || len(hits) == 0 || hits[0].RelPath != "travel.md" {
		t.Fatalf("after rename: %v %v", relPaths(hits), err)
	}
	hits, _, _ = ix.Search(ctx, "s", Query{Text: "canteen", Limit: 5})
	if got := relPaths(hits); !slices.Equal(got, []string{"b.txt", "copy of b.txt"}) && !slices.Equal(got, []string{"copy of b.txt", "b.txt"}) {
		t.Fatalf("after copy: %v", got)
	}

	// Change: only the changed chunk is embedded; touch: nothing.
	writeFile(t, filepath.Join(dir, "a.md"), "# Leave\n\nParental leave lasts up to sixteen months from 2027.\n")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "b.txt"), later, later); err != nil {
		t.Fatal(err)
	}
	texts = srv.Texts()
	st, err = ix.Sync(ctx, spec, nil)
	if err != nil || st.Changed != 1 || st.Unchanged != 3 {
		t.Fatalf("change run %+v %v", st, err)
	}
	if n := srv.Texts() - texts; n != 1 {
		t.Errorf("the change embedded %d texts, want 1", n)
	}
	hits, _, _ = ix.Search(ctx, "s", Query{Text: "fourteen", Limit: 5})
	if len(hits) != 0 {
		t.Errorf("old text found: %v", relPaths(hits))
	}
	hits, _, _ = ix.Search(ctx, "s", Query{Text: "sixteen months", Limit: 5})
	if len(hits) != 1 || hits[0].RelPath != "a.md" || hits[0].Title != "Leave" {
		t.Errorf("new text: %+v", hits)
	}

	// Removal.
	if err := os.Remove(filepath.Join(dir, "copy of b.txt")); err != nil {
		t.Fatal(err)
	}
	st, err = ix.Sync(ctx, spec, nil)
	if err != nil || st.Removed != 1 || st.Unchanged != 3 {
		t.Fatalf("removal run %+v %v", st, err)
	}
	checkIndex(t, ix)

	// Another chunk size cuts everything anew.
	spec.MaxChunkTokens = 64
	st, err = ix.Sync(ctx, spec, nil)
	if err != nil || !st.Rebuilt || st.Added != 3 {
		t.Fatalf("rebuild run %+v %v", st, err)
	}
	checkIndex(t, ix)
	if err := ix.Remove(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ix.Search(ctx, "s", Query{Text: "leave", Limit: 1}); !errors.Is(err, ErrNotIndexed) {
		t.Errorf("search after remove: %v", err)
	}
	if st, err := ix.Status(ctx, "s"); err != nil || st.Indexed {
		t.Errorf("status after remove: %+v %v", st, err)
	}
	checkIndex(t, ix)
}

// A file that cannot be read is reported by name and reason and skipped,
// never fatal; a broken one is not read again until it changes.
func TestUnreadableFilesAreReportedAndSkipped(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "good.md"), "The budget for chairs is approved.")
	writeFile(t, filepath.Join(dir, "broken.pdf"), "%PDF-1.4 this is not really a PDF")
	writeFile(t, filepath.Join(dir, "report.docx"), "not a zip")
	writeFile(t, filepath.Join(dir, "old.doc"), "\xd0\xcf\x11\xe0 legacy")
	writeFile(t, filepath.Join(dir, "empty.txt"), "   \n")
	writeFile(t, filepath.Join(dir, "big.txt"), strings.Repeat("x", 5000))
	ix := openIndex(t)
	spec := Spec{ID: "s", Path: dir, MaxFileBytes: 4096}
	st, err := ix.Sync(ctx, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, s := range st.Skipped {
		reasons[s.Path] = s.Reason
	}
	want := map[string]string{
		"broken.pdf":  "not a valid PDF",
		"report.docx": "not a valid DOCX",
		"old.doc":     "Word 97-2003",
		"empty.txt":   "holds no text",
		"big.txt":     "larger than",
	}
	for p, w := range want {
		if !strings.Contains(reasons[p], w) {
			t.Errorf("%s: reason %q, want %q", p, reasons[p], w)
		}
	}
	if st.Added != 1 || !st.WordsOnly {
		t.Errorf("stats %+v", st)
	}
	hits, _, err := ix.Search(ctx, "s", Query{Text: "budget chairs", Limit: 5})
	if err != nil || len(hits) != 1 {
		t.Fatalf("search %v %v", relPaths(hits), err)
	}
	// Remembered: reported again without being read.
	st, err = ix.Sync(ctx, spec, nil)
	if err != nil || len(st.Skipped) != len(want) || st.Unchanged != 1 {
		t.Fatalf("second run %+v %v", st, err)
	}
	status, _ := ix.Status(ctx, "s")
	if len(status.Skipped) != 4 { // the legacy format is not recorded: it is known by name
		t.Errorf("status skipped %+v", status.Skipped)
	}
	// Fixed: indexed.
	writeFile(t, filepath.Join(dir, "broken.pdf"), "")
	if err := os.Remove(filepath.Join(dir, "broken.pdf")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "report.docx"), "")
	if err := os.Rename(filepath.Join(dir, "good.md"), filepath.Join(dir, "report.md")); err != nil {
		t.Fatal(err)
	}
	st, err = ix.Sync(ctx, spec, nil)
	if err != nil || st.Renamed != 1 {
		t.Fatalf("third run %+v %v", st, err)
	}
	status, _ = ix.Status(ctx, "s")
	for _, s := range status.Skipped {
		if s.Path == "broken.pdf" {
			t.Errorf("a removed file's failure is kept")
		}
	}
	checkIndex(t, ix)
}

func TestFileSourceAndErrors(t *testing.T) {
	ctx := context.Background()
	dir := fixtures(t)
	ix := openIndex(t)
	st, err := ix.Sync(ctx, Spec{ID: "f", Path: filepath.Join(dir, "testPDF.pdf"), File: true}, nil)
	if err != nil || st.Added != 1 {
		t.Fatalf("file source %+v %v", st, err)
	}
	hits, _, err := ix.Search(ctx, "f", Query{Text: "Lucene PMC incubation", Limit: 2})
	if err != nil || len(hits) == 0 || hits[0].Path != filepath.Join(dir, "testPDF.pdf") || hits[0].RelPath != "testPDF.pdf" {
		t.Fatalf("file hits %+v %v", hits, err)
	}
	// Words only, asked with an embedder: the words answer, with the reason.
	emb, _ := keywordEmbedder(t, "lucene")
	hits, _, err = ix.Search(ctx, "f", Query{Text: "Lucene", Limit: 2, Embedder: emb})
	var pe *PartialError
	if !errors.As(err, &pe) || !strings.Contains(pe.Reason, "without an embedding provider") || len(hits) == 0 {
		t.Errorf("partial: %v %v", hits, err)
	}
	st, err = ix.Sync(ctx, Spec{ID: "g", Path: filepath.Join(dir, "logo.png"), File: true}, nil)
	if err != nil || len(st.Skipped) != 1 || st.Skipped[0].Path != "logo.png" {
		t.Errorf("unsupported file source %+v %v", st, err)
	}
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{Path: dir}, "ID is empty"},
		{Spec{ID: "x", Path: "relative/path"}, "not absolute"},
		{Spec{ID: "x", Path: filepath.Join(dir, "nope")}, "cannot be read"},
		{Spec{ID: "x", Path: dir, File: true}, "is a folder"},
		{Spec{ID: "x", Path: filepath.Join(dir, "testPDF.pdf")}, "is a file"},
		{Spec{ID: "x", Path: dir, MaxChunkTokens: 3}, "at least 16 tokens"},
		{Spec{ID: "x", Path: dir, MaxFileBytes: -1}, "maximum file size"},
	} {
		if _, err := ix.Sync(ctx, tc.spec, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.spec, err, tc.want)
		}
	}
	// A folder that went missing (an unmounted disk) keeps its index.
	ddir := t.TempDir()
	writeFile(t, filepath.Join(ddir, "n.md"), "keep me")
	if _, err := ix.Sync(ctx, Spec{ID: "d", Path: ddir}, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(ddir); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sync(ctx, Spec{ID: "d", Path: ddir}, nil); err == nil {
		t.Error("a missing folder was synced")
	}
	if hits, _, _ := ix.Search(ctx, "d", Query{Text: "keep", Limit: 1}); len(hits) != 1 {
		t.Error("a missing folder's index was emptied")
	}
}

// An embedding provider that fails leaves the chunks searchable by words;
// the next run embeds them.
func TestEmbeddingFailureLeavesWordsAndResumes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for i := range 5 {
		writeFile(t, filepath.Join(dir, string(rune('a'+i))+".md"), strings.Repeat("budget travel leave ", 20)+string(rune('a'+i)))
	}
	ix := openIndex(t)
	emb, srv := keywordEmbedder(t, "budget", "travel")
	srv.FailWhen(func([]string) bool { return true })
	st, err := ix.Sync(ctx, Spec{ID: "s", Path: dir, Embedder: emb}, nil)
	if err != nil || st.Added != 5 || st.EmbeddingError == "" || strings.Contains(st.EmbeddingError, "budget travel") {
		t.Fatalf("stats %+v %v", st, err)
	}
	if hits, _, err := ix.Search(ctx, "s", Query{Text: "budget", Limit: 10}); err != nil || len(hits) != 5 {
		t.Fatalf("words: %d %v", len(hits), err)
	}
	srv.FailWhen(nil)
	st, err = ix.Sync(ctx, Spec{ID: "s", Path: dir, Embedder: emb}, nil)
	if err != nil || st.Embedded != 5 || st.Unchanged != 5 || st.EmbeddingError != "" {
		t.Fatalf("resumed %+v %v", st, err)
	}
	status, _ := ix.Status(ctx, "s")
	if status.Embedded != status.Chunks {
		t.Errorf("status %+v", status)
	}
}
