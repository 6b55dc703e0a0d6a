package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/embedtest"
)

// TestSourcesEmbedOnlyForATrustedEmbeddingProvider is issue 18, point 2,
// for data sources: a HIGH folder whose embedding provider the
// organization's scheme rates VERY_LOW. `sources index` sends that
// provider nothing and says why, the folder is searched by words (by
// `sources search` and by semantic_search in a chat) and no query reaches
// the provider either; `sources show` says why. Under a scheme that rates
// the provider HIGH, the same index embeds and a search embeds the query.
func TestSourcesEmbedOnlyForATrustedEmbeddingProvider(t *testing.T) {
	for _, tc := range []struct {
		scheme string
		embeds bool
	}{
		{`CONFIG["SETTINGS"]["DataConfidence.ConfidenceScheme"] = "LOCAL_TRUST_ONLY"`, false},
		{`CONFIG["SETTINGS"]["DataConfidence.ConfidenceScheme"] = "CUSTOM"
CONFIG["SETTINGS"]["DataConfidence.CustomConfidenceScheme"] = { ["OPEN_AI"] = "HIGH", ["SELF_HOSTED"] = "HIGH" }`, true},
	} {
		t.Run(fmt.Sprint("embeds=", tc.embeds), func(t *testing.T) {
			emb := embedtest.Start(t, embedtest.Keywords("lucene", "heading", "detect", "parse"))
			home := ragHome(t)
			writeOrgPlugin(t, home, "org", "scheme", tc.scheme+"\n")
			env := []string{"OPENAI_API_KEY=key-1"}
			docs := docsFolder(t)
			if r := steward(t, home, "", env, "sources", "add", "--id", "docs", "--name", "Tika documents", "--folder", docs, "--level", "HIGH",
				"--embedding", "openai:text-embedding-3-small@"+emb.URL+"/v1/"); r.code != 0 {
				t.Fatalf("sources add: %d %s", r.code, r.stderr)
			}
			ix := steward(t, home, "", env, "sources", "index", "docs")
			if ix.code != 0 || !strings.Contains(ix.stdout, "Tika documents: 4 files (4 new") {
				t.Fatalf("sources index: %d %s %s", ix.code, ix.stdout, ix.stderr)
			}
			show := steward(t, home, "", env, "sources", "show", "docs")
			search := steward(t, home, "", env, "sources", "search", "Lucene PMC")
			if search.code != 0 || !strings.Contains(search.stdout, "sponsored by the Apache Lucene PMC") {
				t.Fatalf("sources search: %d %s %s", search.code, search.stdout, search.stderr)
			}
			if tc.embeds {
				if emb.Texts() == 0 || emb.Calls() < 2 {
					t.Fatalf("a trusted embedding provider got %d requests: %s", emb.Calls(), ix.stderr)
				}
				if strings.Contains(ix.stderr, "not embedded") || !strings.Contains(show.stdout, "meaning and words") {
					t.Errorf("index %s\nshow %s", ix.stderr, show.stdout)
				}
				return
			}
			const why = "the embedding provider has confidence VERY_LOW under the organization's scheme, below the HIGH the source requires"
			if n := emb.Calls(); n != 0 {
				t.Fatalf("the embedding provider received %d requests", n)
			}
			if !strings.Contains(ix.stderr, "Tika documents: documents were not embedded: "+why) {
				t.Errorf("sources index does not say why: %s", ix.stderr)
			}
			if !strings.Contains(show.stdout, "words only, because "+why) {
				t.Errorf("sources show does not say why: %s", show.stdout)
			}
			if !strings.Contains(search.stderr, "searched by words only") {
				t.Errorf("sources search does not say that it searched by words: %s", search.stderr)
			}
			j := steward(t, home, "", env, "sources", "index", "docs", "--json")
			var out struct {
				DataSources []struct {
					WordsOnly        bool   `json:"words_only"`
					EmbeddingRefused string `json:"embedding_refused"`
				} `json:"data_sources"`
			}
			if err := json.Unmarshal([]byte(j.stdout), &out); err != nil || len(out.DataSources) != 1 || !out.DataSources[0].WordsOnly || !strings.Contains(out.DataSources[0].EmbeddingRefused, why) {
				t.Errorf("sources index --json: %v %s", err, j.stdout)
			}
			// A chat whose model searches with semantic_search: the query
			// does not reach the embedding provider either.
			p := newScripted(t, toolReply("call_1", "semantic_search", `{"query":"Which Apache PMC sponsors Tika? Lucene"}`), textReply("The Apache Lucene PMC."))
			r := steward(t, home, "", env, "ask", "--provider", "vllm", "--base-url", p.baseURL(), "Who sponsors Apache Tika?")
			if r.code != 0 {
				t.Fatalf("ask: %d %s", r.code, r.stderr)
			}
			msgs := p.request(1)["messages"].([]any)
			if content := fmt.Sprint(msgs[len(msgs)-1]); !strings.Contains(content, "sponsored by the Apache Lucene PMC") {
				t.Errorf("semantic_search found nothing by words: %.600s", content)
			}
			if n := emb.Calls(); n != 0 {
				t.Fatalf("a search sent the query to the embedding provider (%d requests)", n)
			}
		})
	}
}
