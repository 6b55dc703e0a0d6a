package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stewardhq/steward/internal/dovetest"
)

// TestMailSyncEmbedsOnlyForATrustedEmbeddingProvider reruns the attack of
// issue 18, point 2: a HIGH mailbox whose embedding provider the
// organization's scheme rates VERY_LOW. `mail sync` sends that provider
// nothing and says why; word search works; `mail status` says why the
// mailbox is searched by words only. Under a scheme that rates the
// provider HIGH, the same sync embeds.
func TestMailSyncEmbedsOnlyForATrustedEmbeddingProvider(t *testing.T) {
	srv := dovetest.Start(t)
	appendMail(t, srv.Addr(), "testuser", "testpass", "INBOX", supplierMail)
	var posted atomic.Int32
	var bodies atomic.Value
	emb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		posted.Add(1)
		bodies.Store(string(b))
		var req struct{ Input []string }
		json.Unmarshal(b, &req)
		var data []map[string]any
		for i := range req.Input {
			data = append(data, map[string]any{"index": i, "embedding": []float64{0.1, 0.2, 0.3}})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"data": data, "model": "text-embedding-3-small"})
	}))
	t.Cleanup(emb.Close)

	for _, tc := range []struct {
		scheme string
		embeds bool
	}{
		{`CONFIG["SETTINGS"]["DataConfidence.ConfidenceScheme"] = "LOCAL_TRUST_ONLY"`, false},
		{`CONFIG["SETTINGS"]["DataConfidence.ConfidenceScheme"] = "CUSTOM"
CONFIG["SETTINGS"]["DataConfidence.CustomConfidenceScheme"] = { ["OPEN_AI"] = "HIGH" }`, true},
	} {
		t.Run(fmt.Sprint("embeds=", tc.embeds), func(t *testing.T) {
			posted.Store(0)
			home := t.TempDir()
			os.MkdirAll(filepath.Join(home, "config"), 0o700)
			os.WriteFile(filepath.Join(home, "config", "settings.json"), []byte(`{"version":2,"enabled_preview_features":["PRE_RAG_2024","PRE_MAILBOXES_2026"]}`), 0o600)
			writeOrgPlugin(t, home, "org", "scheme", tc.scheme+"\n")
			env := []string{"OPENAI_API_KEY=sk-test"}
			r := steward(t, home, "testpass", env, "mail", "add", "--id", "board", "--name", "Board", "--host", srv.Host, "--port", fmt.Sprint(srv.Port),
				"--security", "plain-loopback", "--username", "testuser", "--level", "HIGH",
				"--embedding", "openai:text-embedding-3-small@"+emb.URL+"/v1/")
			if r.code != 0 {
				t.Fatalf("mail add: %d %s", r.code, r.stderr)
			}
			r = steward(t, home, "", env, "mail", "sync")
			if r.code != 0 || !strings.Contains(r.stderr, "1 new") {
				t.Fatalf("mail sync: %d %s", r.code, r.stderr)
			}
			status := steward(t, home, "", env, "mail", "status")
			if tc.embeds {
				if posted.Load() == 0 || !strings.Contains(fmt.Sprint(bodies.Load()), "4711") {
					t.Fatalf("a trusted embedding provider got nothing: %s", r.stderr)
				}
				if strings.Contains(r.stderr, "not embedded") || !strings.Contains(status.stdout, "words and meaning") {
					t.Errorf("sync %s\nstatus %s", r.stderr, status.stdout)
				}
				return
			}
			if n := posted.Load(); n != 0 {
				t.Fatalf("the embedding provider received %d requests, the last: %.200s", n, bodies.Load())
			}
			if !strings.Contains(r.stderr, "Board: mails were not embedded: the embedding provider has confidence VERY_LOW under the organization's scheme, below the HIGH the source requires") {
				t.Errorf("mail sync does not say why: %s", r.stderr)
			}
			if !strings.Contains(status.stdout, "words only, because the embedding provider has confidence VERY_LOW") {
				t.Errorf("mail status does not say why: %s", status.stdout)
			}
			if s := steward(t, home, "", env, "mail", "search", "delivery"); !strings.Contains(s.stdout, "Delivery date for order 4711") {
				t.Errorf("word search: %d %s %s", s.code, s.stdout, s.stderr)
			}
			if n := posted.Load(); n != 0 {
				t.Errorf("a search sent the query to the embedding provider (%d requests)", n)
			}
		})
	}
}
