package websearch

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stewardhq/steward/credhttp/credhttptest"
	"github.com/stewardhq/steward/tool"
)

// A search service that redirects to another origin must not receive the
// query again there with the key: Go drops Authorization on such a redirect
// but forwards X-Subscription-Token.
func TestKeyedBackendsDoNotFollowARedirectElsewhere(t *testing.T) {
	for _, b := range []struct {
		name, key, baseSetting, keySetting, keyValue string
	}{
		{NameBrave, "B", SettingBraveBaseURL, SettingBraveAPIKey, braveKey},
		{NameTavily, "T", SettingTavilyBaseURL, SettingTavilyAPIKey, tavilyKey},
	} {
		for _, status := range credhttptest.Statuses() {
			t.Run(b.name+"/"+http.StatusText(status), func(t *testing.T) {
				r := credhttptest.NewRedirector(t, status)
				w := newWorld(t)
				s := tool.Settings{SettingDefaultLanguage: "en", b.keySetting: b.keyValue, b.baseSetting: r.URL}
				_, res, err := w.run(s, map[string]any{"query": "harbour"})
				r.AssertNothingLeaked(t)
				if err == nil {
					t.Fatalf("the search succeeded through a redirect to another origin: %s", res.ModelContent())
				}
				msg := err.Error()
				want := ID + "." + b.baseSetting
				if !strings.Contains(msg, want) || !strings.Contains(msg, r.Target) {
					t.Errorf("error %q does not name the setting %s and the origin %s", msg, want, r.Target)
				}
				if strings.Contains(msg, b.keyValue) {
					t.Errorf("error repeats the key: %s", msg)
				}
			})
		}
	}
}

func TestKeyedBackendFollowsARedirectWithinItsOrigin(t *testing.T) {
	w := newWorld(t)
	hits := []res{{w.u("news.example.com", "/b1"), "B1", "b1", ""}}
	base := credhttptest.SameOrigin(t, "/res/v1/web/search", "/moved/res/v1/web/search", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Subscription-Token") != braveKey {
			t.Errorf("after the redirect the key is %q", r.Header.Get("X-Subscription-Token"))
		}
		writeJSON(rw, braveBody(hits, false, ""))
	}))
	s := tool.Settings{SettingDefaultLanguage: "en", SettingBraveAPIKey: braveKey, SettingBraveBaseURL: base}
	out, _, err := w.run(s, map[string]any{"query": "harbour"})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 1 {
		t.Fatalf("got %d results, want the one behind the redirect", len(out.Results))
	}
}
