package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stewardhq/steward/credhttp/credhttptest"
)

// A provider base URL that redirects to another origin: the second host
// receives nothing, and the user reads one line naming the setting and the
// origin the request was sent to.
func TestAskDoesNotFollowAProviderRedirectElsewhere(t *testing.T) {
	for _, p := range []struct{ kind, env, key string }{
		{"anthropic", "ANTHROPIC_API_KEY", "sk-ant-e2e-secret"},
		{"openai", "OPENAI_API_KEY", "sk-openai-e2e-secret"},
	} {
		t.Run(p.kind, func(t *testing.T) {
			r := credhttptest.NewRedirector(t, http.StatusTemporaryRedirect)
			res := steward(t, t.TempDir(), "", []string{p.env + "=" + p.key}, "ask", "--provider", p.kind, "--base-url", r.URL+"/v1/", "hello")
			r.AssertNothingLeaked(t)
			if res.code == 0 {
				t.Fatalf("exit 0 through a refused redirect; stdout %q", res.stdout)
			}
			lines := strings.Split(strings.TrimSpace(res.stderr), "\n")
			var hit []string
			for _, l := range lines {
				if strings.Contains(l, r.Target) {
					hit = append(hit, l)
				}
			}
			// Every error is printed once: exactly one line names the target.
			if len(hit) != 1 || !strings.Contains(hit[0], "base URL of provider "+p.kind) {
				t.Errorf("stderr %q: want one line naming the provider's base URL and %s", res.stderr, r.Target)
			}
			if strings.Contains(res.stderr, p.key) {
				t.Errorf("stderr repeats the key: %q", res.stderr)
			}
		})
	}
}
