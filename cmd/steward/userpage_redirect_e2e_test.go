package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/webtest"
)

// TestUserChosenPageRedirectsNoFurtherThanAllowed reruns the attack of
// issue 18, point 4: a page the user reads with `steward read` or attaches
// with `ask --url` redirects to the cloud metadata endpoint or into the
// user's own network. Neither is followed, nothing of the target reaches
// the output or the model, and the refused target is never dialed (the
// made-up network fails the test on a dial it does not route).
func TestUserChosenPageRedirectsNoFurtherThanAllowed(t *testing.T) {
	targets := map[string]string{
		"/to-metadata": "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
		"/to-intranet": "http://intranet.example.com/payroll",
		"/to-router":   "http://192.168.1.1/",
	}
	n := webtest.NewNet(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if loc, ok := targets[r.URL.Path]; ok {
			w.Header().Set("Location", loc)
			w.WriteHeader(http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "AKIA-SECRET-KEY payroll data")
	}))
	n.Host("news.example.com", "93.184.215.14")
	n.Host("intranet.example.com", "10.1.2.3")
	n.RefusePrivateDials()
	tweak := pagesNet{n}.tweak(t)
	home := t.TempDir()
	for path := range targets {
		page := n.URL("news.example.com", path)
		out, errOut, code := runInProcess(t, home, tweak, nil, "read", page)
		if code == 0 || strings.Contains(out, "AKIA") {
			t.Errorf("read %s: exit %d, output %q", path, code, out)
		}
		if !strings.Contains(errOut, "redirected") && !strings.Contains(errOut, "never read") {
			t.Errorf("read %s: the error does not say why: %q", path, errOut)
		}
		p := newScripted(t, textReply("I could not read it."))
		out, errOut, code = runInProcess(t, home, tweak, map[string]string{"OPENAI_API_KEY": "sk-test"},
			"ask", "--provider", "openai", "--base-url", p.baseURL(), "--url", page, "Summarise the page")
		if code == 0 && p.request(0) != nil {
			if body := p.request(0); strings.Contains(strings.ToLower(jsonText(body)), "akia") {
				t.Errorf("ask --url %s: the target's content reached the model", path)
			}
		}
		if strings.Contains(out, "AKIA") || strings.Contains(errOut, "AKIA") {
			t.Errorf("ask --url %s: the target's content was shown: %q %q", path, out, errOut)
		}
	}
	if d := n.Dials(); d != 2*len(targets) {
		t.Errorf("%d dials, want %d: only the page the user named may be reached", d, 2*len(targets))
	}
}

func jsonText(v map[string]any) string {
	var b strings.Builder
	var walk func(any)
	walk = func(x any) {
		switch t := x.(type) {
		case string:
			b.WriteString(t)
		case []any:
			for _, e := range t {
				walk(e)
			}
		case map[string]any:
			for _, e := range t {
				walk(e)
			}
		}
	}
	walk(v)
	return b.String()
}
