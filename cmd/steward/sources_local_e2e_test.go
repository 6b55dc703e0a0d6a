package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/embedtest"
	"github.com/stewardhq/steward/internal/testenv"
)

// docsFolder copies real documents (a PDF, a DOCX, Markdown and Java
// code; see datasource/extract/testdata/tika/PROVENANCE.md) into a folder.
func docsFolder(t *testing.T) string {
	t.Helper()
	src := filepath.Join(testenv.RepoRoot(t), "datasource", "extract", "testdata", "tika")
	dst := filepath.Join(t.TempDir(), "docs")
	os.MkdirAll(filepath.Join(dst, "code"), 0o755)
	for name, to := range map[string]string{"testPDF.pdf": "testPDF.pdf", "testWORD.docx": "testWORD.docx", "README.md": "README.md", "Tika.java": "code/Tika.java"} {
		in, err := os.Open(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		out, _ := os.Create(filepath.Join(dst, to))
		io.Copy(out, in)
		in.Close()
		out.Close()
	}
	return dst
}

func indexFolder(t *testing.T, home, docs string, extra ...string) result {
	t.Helper()
	r := steward(t, home, "", nil, append([]string{"sources", "add", "--id", "docs", "--name", "Tika documents", "--folder", docs, "--level", "MEDIUM",
		"--description", "Documents and code of the Apache Tika project."}, extra...)...)
	if r.code != 0 {
		t.Fatalf("add: %d %s", r.code, r.stderr)
	}
	ix := steward(t, home, "", nil, "sources", "index", "docs")
	if ix.code != 0 || !strings.Contains(ix.stdout, "Tika documents: 4 files (4 new") {
		t.Fatalf("index: %d %s %s", ix.code, ix.stdout, ix.stderr)
	}
	return ix
}

// A folder of real documents is indexed, the model calls semantic_search,
// the right passage comes back, and its source is listed.
func TestAskWithSemanticSearchOverAFolderOfRealDocuments(t *testing.T) {
	home := ragHome(t)
	docs := docsFolder(t)
	emb := embedtest.Start(t, embedtest.Keywords("lucene", "heading", "detect", "parse"))
	indexFolder(t, home, docs, "--embedding", "ollama:keywords@"+emb.URL+"/", "--max-chunk-tokens", "120", "--overlap", "20")
	if emb.Texts() == 0 {
		t.Fatal("the chunks were not embedded")
	}
	status := steward(t, home, "", nil, "sources", "show", "docs", "--json")
	var st struct {
		DataSource struct {
			Index struct {
				Documents, Chunks, Embedded int
				Complete                    bool
			} `json:"index"`
		} `json:"data_source"`
	}
	json.Unmarshal([]byte(status.stdout), &st)
	if ix := st.DataSource.Index; ix.Documents != 4 || ix.Chunks < 5 || ix.Embedded != ix.Chunks || !ix.Complete {
		t.Fatalf("index status: %s", status.stdout)
	}

	p := newScripted(t, toolReply("call_1", "semantic_search", `{"query":"Which Apache PMC sponsors Tika? Lucene"}`), textReply("Tika is sponsored by the Apache Lucene PMC."))
	r := steward(t, home, "", nil, "ask", "--provider", "vllm", "--base-url", p.baseURL(), "Who sponsors Apache Tika?")
	if r.code != 0 || !strings.Contains(r.stdout, "Lucene PMC") {
		t.Fatalf("ask: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if tools := fmt.Sprint(p.request(0)["tools"]); !strings.Contains(tools, "id=docs, name='Tika documents', type=local folder, results per page=10, last page=9, description='Documents and code of the Apache Tika project.'") {
		t.Fatalf("tool description: %s", tools)
	}
	msgs := p.request(1)["messages"].([]any)
	content := msgs[len(msgs)-1].(map[string]any)["content"].(string)
	var out struct {
		TextContent string `json:"text_content"`
	}
	if err := json.Unmarshal([]byte(content), &out); err != nil {
		t.Fatalf("%v %s", err, content)
	}
	first := out.TextContent
	if i := strings.Index(first[1:], "# Retrieval context 2"); i > 0 {
		first = first[:i+1]
	}
	if !strings.Contains(first, "sponsored by the Apache Lucene PMC") || !strings.Contains(first, "Data source name: testPDF.pdf") || !strings.Contains(first, "Content location: page 1") {
		t.Fatalf("the best passage is the PDF's:\n%s", out.TextContent)
	}
	if !strings.Contains(r.stderr, "Sources used by tools") || !strings.Contains(r.stderr, "testPDF.pdf (Page 1)](file://"+filepath.ToSlash(docs)+"/testPDF.pdf#page=1)") {
		t.Fatalf("the source is listed: %s", r.stderr)
	}

	// The same question through the classic process, when the provider may
	// not be offered the tool (here: a model without tool calling is what
	// --no-tools stands for; the organization case is covered for ERI).
	p2 := newScripted(t, textReply("The Apache Lucene PMC."))
	r = steward(t, home, "", nil, "ask", "--no-tools", "--provider", "vllm", "--base-url", p2.baseURL(), "Who sponsors Apache Tika? Lucene PMC")
	if r.code != 0 {
		t.Fatalf("%d %s", r.code, r.stderr)
	}
	req := p2.request(0)
	if _, has := req["tools"]; has {
		t.Fatal("no tools are offered")
	}
	if system := fmt.Sprint(req["messages"].([]any)[0]); !strings.Contains(system, "sponsored by the Apache Lucene PMC") || !strings.Contains(system, "Data source name: testPDF.pdf") {
		t.Fatalf("the classic process put the passage into the system prompt: %s", system)
	}
	if !strings.Contains(r.stderr, "Sources from data sources") || !strings.Contains(r.stderr, "testPDF.pdf#page=1") {
		t.Fatalf("%s", r.stderr)
	}
	// A MEDIUM source raised the chat to MEDIUM, and only that.
	if show := steward(t, home, "", nil, "chats", "show", lastChatID(t, home)); !strings.Contains(show.stdout, "requires provider confidence MEDIUM, data security ALLOW_ANY") {
		t.Fatalf("%s", show.stdout)
	}
}

// Without an embedding provider the words alone find the passage, and
// Steward says so once.
func TestWordsOnlyFolderAndIncrementalIndex(t *testing.T) {
	home := ragHome(t)
	docs := docsFolder(t)
	ix := indexFolder(t, home, docs)
	if strings.Count(ix.stderr, "words only") != 1 {
		t.Fatalf("Steward says once that words alone are searched: %s", ix.stderr)
	}
	s := steward(t, home, "", nil, "sources", "search", "--json", "Lucene PMC sponsored")
	if !strings.Contains(s.stdout, "sponsored by the Apache Lucene PMC") || !strings.Contains(s.stdout, "searched by words only") {
		t.Fatalf("%s %s", s.stdout, s.stderr)
	}
	// Change, add, rename and remove files: the next run sees each.
	os.WriteFile(filepath.Join(docs, "notes.md"), []byte("# Notes\n\nThe Zanzibar release ships in March.\n"), 0o644)
	os.Rename(filepath.Join(docs, "README.md"), filepath.Join(docs, "TIKA.md"))
	os.Remove(filepath.Join(docs, "testWORD.docx"))
	again := steward(t, home, "", nil, "sources", "index", "docs", "--json")
	var out struct {
		DataSources []struct {
			Added, Removed, Renamed, Unchanged int
		} `json:"data_sources"`
	}
	if err := json.Unmarshal([]byte(again.stdout), &out); err != nil || len(out.DataSources) != 1 {
		t.Fatalf("%v %s", err, again.stdout)
	}
	if d := out.DataSources[0]; d.Added != 1 || d.Removed != 1 || d.Renamed != 1 || d.Unchanged != 2 {
		t.Fatalf("%+v", d)
	}
	s = steward(t, home, "", nil, "sources", "search", "Zanzibar release")
	if !strings.Contains(s.stdout, "notes.md") {
		t.Fatalf("%s", s.stdout)
	}
	// A never-indexed source is reported as not searched, never as empty.
	other := t.TempDir()
	steward(t, home, "", nil, "sources", "add", "--id", "other", "--folder", other, "--level", "MEDIUM")
	s = steward(t, home, "", nil, "sources", "search", "--json", "Zanzibar")
	if !strings.Contains(s.stdout, "could not be searched right now") {
		t.Fatalf("%s", s.stdout)
	}
	if rm := steward(t, home, "", nil, "sources", "remove", "docs"); rm.code != 0 {
		t.Fatalf("%s", rm.stderr)
	}
	if l := steward(t, home, "", nil, "sources", "list", "--json"); strings.Contains(l.stdout, `"docs"`) {
		t.Fatalf("%s", l.stdout)
	}
}
