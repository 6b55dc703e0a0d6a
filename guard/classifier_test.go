package guard

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/credhttp/credhttptest"
)

// classifierServer answers with the handler's text and records the texts
// it was sent.
type classifierServer struct {
	mu    sync.Mutex
	got   [][]string
	reply func(texts []string) (status int, body string)
}

func (cs *classifierServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "want a JSON POST", http.StatusBadRequest)
		return
	}
	var req struct {
		Texts []string `json:"texts"`
	}
	b, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(b, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	cs.mu.Lock()
	cs.got = append(cs.got, req.Texts)
	cs.mu.Unlock()
	status, body := cs.reply(req.Texts)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func newClassifierFilter(t *testing.T, url string, rec Reporter, timeout time.Duration) *Filter {
	t.Helper()
	return New(Options{
		Reporter:   rec,
		Logger:     slog.New(slog.DiscardHandler),
		Classifier: &ClassifierOptions{URL: url, Timeout: timeout, Header: http.Header{"Authorization": {"Bearer test"}}},
	})
}

func TestClassifierMergesSpans(t *testing.T) {
	cs := &classifierServer{reply: func(texts []string) (int, string) {
		// Flag "buy now" in every text that has it, by byte offsets.
		var res []map[string]any
		for _, s := range texts {
			i := strings.Index(s, "buy now")
			if i < 0 {
				res = append(res, map[string]any{"score": 0.02, "spans": []any{}})
				continue
			}
			res = append(res, map[string]any{"score": 0.91, "spans": []any{map[string]any{"start": i, "end": i + 7, "category": "agent_manipulation", "rule_id": "org-model"}}})
		}
		b, _ := json.Marshal(map[string]any{"results": res})
		return 200, string(b)
	}}
	srv := httptest.NewServer(cs)
	defer srv.Close()
	rec := &recorder{}
	f := newClassifierFilter(t, srv.URL, rec, 5*time.Second)
	src := Source{Kind: WebContent, Label: "https://p.example/"}
	out := f.FilterBatch(context.Background(), []Text{
		{Source: src, Field: "title", Text: "Überall: buy now!"},
		{Source: src, Field: "body", Text: "Nothing to see."},
		{Source: src, Field: "empty", Text: ""},
	})
	if want := "Überall: " + Marker + "!"; out[0].Text != want {
		t.Errorf("text %q, want %q", out[0].Text, want)
	}
	if len(out[0].Findings) != 1 || out[0].Findings[0].Rule != "classifier.org-model" || out[0].Findings[0].Category != AgentManipulation {
		t.Errorf("findings %+v", out[0].Findings)
	}
	if out[1].Text != "Nothing to see." || out[1].ClassifierFailed {
		t.Errorf("clean text: %+v", out[1])
	}
	if len(cs.got) != 1 || len(cs.got[0]) != 2 {
		t.Errorf("sent %v, want one request with the two non-blank texts", cs.got)
	}
	reps := rec.all()
	if len(reps) != 1 || reps[0].Warning != "" || reps[0].Message == "" {
		t.Errorf("reports %+v", reps)
	}
}

func TestClassifierScoreWithoutSpansReportsOnly(t *testing.T) {
	cs := &classifierServer{reply: func(texts []string) (int, string) {
		return 200, `{"results":[{"score":0.8,"category":"jailbreak","spans":[]}]}`
	}}
	srv := httptest.NewServer(cs)
	defer srv.Close()
	f := newClassifierFilter(t, srv.URL, nil, 5*time.Second)
	o := f.FilterText(context.Background(), Source{Kind: MailContent, Label: "m"}, "An odd but harmless-looking mail.")
	if o.Text != "An odd but harmless-looking mail." {
		t.Errorf("the filter never rejects: %q", o.Text)
	}
	if len(o.Findings) != 1 || o.Findings[0].Category != Jailbreak || o.Findings[0].Rule != "classifier.text" {
		t.Errorf("findings %+v", o.Findings)
	}
}

// Every failure leaves the heuristic result and reports a warning.
func TestClassifierFailsOpen(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://" + closed.Addr().String() + "/classify"
	closed.Close()

	replies := map[string]func([]string) (int, string){
		"malformed json": func([]string) (int, string) { return 200, `{"results": [` },
		"not json":       func([]string) (int, string) { return 200, `<html>proxy error</html>` },
		"wrong count":    func([]string) (int, string) { return 200, `{"results":[]}` },
		"missing score":  func([]string) (int, string) { return 200, `{"results":[{"spans":[]},{"spans":[]}]}` },
		"score too big":  func([]string) (int, string) { return 200, `{"results":[{"score":7},{"score":0}]}` },
		"span out of range": func(texts []string) (int, string) {
			return 200, `{"results":[{"score":0.9,"spans":[{"start":0,"end":100000}]},{"score":0}]}`
		},
		"span inside a character": func(texts []string) (int, string) {
			return 200, `{"results":[{"score":0.9,"spans":[{"start":1,"end":2}]},{"score":0}]}`
		},
		"server error": func([]string) (int, string) { return 500, `{"error":"boom"}` },
	}
	urls := map[string]string{"unreachable": closedURL}
	for name, reply := range replies {
		srv := httptest.NewServer(&classifierServer{reply: reply})
		defer srv.Close()
		urls[name] = srv.URL
	}
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer slow.Close()
	urls["timeout"] = slow.URL

	for name, url := range urls {
		t.Run(name, func(t *testing.T) {
			rec := &recorder{}
			f := newClassifierFilter(t, url, rec, 300*time.Millisecond)
			src := Source{Kind: WebContent, Label: "https://p.example/"}
			out := f.FilterBatch(context.Background(), []Text{
				{Source: src, Field: "title", Text: "Äpfel " + attackText},
				{Source: src, Field: "body", Text: "Harmless body."},
			})
			if !out[0].ClassifierFailed || !out[1].ClassifierFailed {
				t.Errorf("ClassifierFailed not set: %+v", out)
			}
			if out[1].Text != "Harmless body." {
				t.Errorf("text changed: %q", out[1].Text)
			}
			if !strings.Contains(out[0].Text, Marker) || len(out[0].Findings) == 0 {
				t.Errorf("the heuristic result must stand: %+v", out[0])
			}
			reps := rec.all()
			if len(reps) != 1 {
				t.Fatalf("%d reports", len(reps))
			}
			if reps[0].Warning == "" || len(reps[0].Unchecked) != 1 || reps[0].Unchecked[0] != src {
				t.Errorf("warning %q unchecked %v", reps[0].Warning, reps[0].Unchecked)
			}
			if !strings.Contains(reps[0].Warning, "https://p.example/") {
				t.Errorf("warning %q does not name the source", reps[0].Warning)
			}
		})
	}
}

func TestClassifierSendsHeaders(t *testing.T) {
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		_, _ = io.WriteString(w, `{"results":[{"score":0}]}`)
	}))
	defer srv.Close()
	f := newClassifierFilter(t, srv.URL, nil, time.Second)
	o := f.FilterText(context.Background(), Source{Kind: FileContent, Label: "f"}, "text")
	if auth != "Bearer test" || o.ClassifierFailed {
		t.Errorf("auth %q failed %v", auth, o.ClassifierFailed)
	}
}

// The classifier's key travels in a header; a redirect to another origin is
// not followed, and the user's warning names the setting and that origin.
func TestClassifierDoesNotFollowARedirectElsewhere(t *testing.T) {
	for _, status := range credhttptest.Statuses() {
		t.Run(http.StatusText(status), func(t *testing.T) {
			r := credhttptest.NewRedirector(t, status)
			rec := &recorder{}
			f := newClassifierFilter(t, r.URL+"/classify", rec, time.Second)
			o := f.FilterText(context.Background(), Source{Kind: WebContent, Label: "https://p.example/"}, "An ordinary text.")
			r.AssertNothingLeaked(t)
			if !o.ClassifierFailed {
				t.Fatal("the classifier counts as asked")
			}
			reps := rec.all()
			if len(reps) != 1 {
				t.Fatalf("%d reports, want 1", len(reps))
			}
			for _, want := range []string{"DataPromptInjection.ClassifierUrl", r.Target} {
				if !strings.Contains(reps[0].Warning, want) {
					t.Errorf("warning %q does not name %s", reps[0].Warning, want)
				}
			}
		})
	}
}

func TestClassifierFollowsARedirectWithinItsOrigin(t *testing.T) {
	var auth string
	base := credhttptest.SameOrigin(t, "/old", "/classify", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		_, _ = io.WriteString(w, `{"results":[{"score":0}]}`)
	}))
	f := newClassifierFilter(t, base+"/old", nil, time.Second)
	o := f.FilterText(context.Background(), Source{Kind: FileContent, Label: "f"}, "text")
	if o.ClassifierFailed || auth != "Bearer test" {
		t.Errorf("failed %v, auth %q: a 307 within the origin must reach the classifier with its key", o.ClassifierFailed, auth)
	}
}
