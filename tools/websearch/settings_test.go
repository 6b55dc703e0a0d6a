package websearch

import (
	"context"
	"strings"
	"testing"

	"github.com/stewardhq/steward/tool"
)

func TestValidateConfiguration(t *testing.T) {
	t.Parallel()
	tl := New(Deps{})
	base := func(extra tool.Settings) tool.Settings {
		s := tool.Settings{SettingDefaultLanguage: "en"}
		for k, v := range extra {
			s[k] = v
		}
		return s
	}
	searx := tool.Settings{SettingSearxngBaseURL: "https://searx.example.org"}
	two := tool.Settings{SettingSearxngBaseURL: "https://searx.example.org", SettingBraveAPIKey: "k"}
	with := func(a, b tool.Settings) tool.Settings {
		out := tool.Settings{}
		for k, v := range a {
			out[k] = v
		}
		for k, v := range b {
			out[k] = v
		}
		return out
	}
	cases := []struct {
		name    string
		s       tool.Settings
		wantErr string
	}{
		{"SearXNG only", base(searx), ""},
		{"Brave only", base(tool.Settings{SettingBraveAPIKey: "k"}), ""},
		{"Tavily only with every default", base(tool.Settings{SettingTavilyAPIKey: "k"}), ""},
		{"two with primary and SPECIFIC", base(with(two, tool.Settings{SettingBackendStrategy: StrategySpecific, SettingPrimaryBackend: NameBrave})), ""},
		{"maximums", base(with(searx, tool.Settings{SettingMaxResults: "20", SettingSearchTimeout: "240", SettingPageTimeout: "60", SettingAllPagesTimeout: "120",
			SettingMaxTotalChars: "200000", SettingMinCharsPerResult: "10000"})), ""},
		{"language all", tool.Settings{SettingDefaultLanguage: "all", SettingSearxngBaseURL: "http://127.0.0.1:8888"}, ""},
		{"no service", base(nil), "no search service is configured"},
		{"SearXNG address without scheme", base(tool.Settings{SettingSearxngBaseURL: "searx.example.org"}), "searxng.baseUrl: must be an absolute http or https address"},
		{"SearXNG address with userinfo", base(tool.Settings{SettingSearxngBaseURL: "https://u:p@searx.example.org"}), "user name or password"},
		{"Brave address with query", base(tool.Settings{SettingBraveAPIKey: "k", SettingBraveBaseURL: "https://proxy.example.org?x=1"}), "brave.baseUrl: must not carry a query"},
		{"unknown depth", base(tool.Settings{SettingTavilyAPIKey: "k", SettingTavilySearchDepth: "turbo"}), "tavily.searchDepth has a value that is not offered"},
		{"stored strategy no longer offered", base(with(searx, tool.Settings{SettingBackendStrategy: "ROUND_ROBIN"})), "backendStrategy has a value that is not offered"},
		{"stored primary no longer offered", base(with(searx, tool.Settings{SettingPrimaryBackend: "STAAN"})), "primaryBackend has a value that is not offered"},
		{"stored safe search no longer offered", base(with(searx, tool.Settings{SettingDefaultSafeSearch: "SAFE"})), "defaultSafeSearch has a value that is not offered"},
		{"language name", tool.Settings{SettingDefaultLanguage: "English", SettingBraveAPIKey: "k"}, "defaultLanguage must be an IETF language tag"},
		{"primary not configured", base(with(two, tool.Settings{SettingPrimaryBackend: NameTavily})), "primaryBackend names TAVILY, which is not configured"},
		{"SPECIFIC without primary", base(with(two, tool.Settings{SettingBackendStrategy: StrategySpecific})), "needs primaryBackend"},
		{"safe search but nothing filters", base(tool.Settings{SettingTavilyAPIKey: "k", SettingTavilySearchDepth: DepthFast, SettingDefaultSafeSearch: SafeModerate}), "no configured search service can filter"},
		{"SPECIFIC at a service that cannot filter", base(with(two, tool.Settings{SettingTavilyAPIKey: "k", SettingTavilySearchDepth: DepthUltraFast,
			SettingDefaultSafeSearch: SafeStrict, SettingBackendStrategy: StrategySpecific, SettingPrimaryBackend: NameTavily})), "only TAVILY is asked, which cannot filter"},
		{"safe search OFF with a fast depth", base(tool.Settings{SettingTavilyAPIKey: "k", SettingTavilySearchDepth: DepthFast, SettingDefaultSafeSearch: SafeOff}), ""},
		{"zero results", base(with(searx, tool.Settings{SettingMaxResults: "0"})), "maxResults must be a whole number from 1 to 20"},
		{"timeout above its maximum", base(with(searx, tool.Settings{SettingPageTimeout: "61"})), "pageTimeoutSeconds must be a whole number from 1 to 60"},
		{"all pages timeout", base(with(searx, tool.Settings{SettingAllPagesTimeout: "-5"})), "allPagesRetrievalTimeoutSeconds"},
		{"search timeout", base(with(searx, tool.Settings{SettingSearchTimeout: "x"})), "searchTimeoutSeconds"},
		{"budget below twenty shares", base(with(searx, tool.Settings{SettingMaxTotalChars: "39999", SettingMinCharsPerResult: "2000"})), "must be at least 20 times minContentCharactersPerResult"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := tl.ValidateConfiguration(context.Background(), c.s)
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected objection: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("error = %v, want %q", err, c.wantErr)
			}
			for _, secret := range []string{"u:p", "k\""} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error repeats a secret: %v", err)
				}
			}
		})
	}
}

func TestNormalizeURL(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in, clean, key string
		ok             bool
	}{
		{"https://Example.COM./a?b=1#frag", "https://Example.COM./a?b=1", "https://example.com/a?b=1", true},
		{"HTTP://example.com:80/", "HTTP://example.com:80/", "http://example.com/", true},
		{"https://example.com:443/x", "https://example.com:443/x", "https://example.com/x", true},
		{"https://example.com:8443/x", "https://example.com:8443/x", "https://example.com:8443/x", true},
		{"https://user:pw@example.com/", "https://user:pw@example.com/", "https://user:pw@example.com/", true},
		{"https://bücher.example/Path%20A?Q=1", "https://bücher.example/Path%20A?Q=1", "https://xn--bcher-kva.example/Path%20A?Q=1", true},
		{"http://[2001:db8::1]:8080/", "http://[2001:db8::1]:8080/", "http://[2001:db8::1]:8080/", true},
		{"ftp://example.com/", "", "", false},
		{"/relative", "", "", false},
		{"javascript:alert(1)", "", "", false},
		{"", "", "", false},
	}
	for _, c := range cases {
		clean, key, ok := normalizeURL(c.in)
		if ok != c.ok || clean != c.clean || key != c.key {
			t.Errorf("normalizeURL(%q) = %q, %q, %v; want %q, %q, %v", c.in, clean, key, ok, c.clean, c.key, c.ok)
		}
	}
}

func FuzzNormalizeURL(f *testing.F) {
	for _, s := range []string{"https://Example.COM./a?b=1#f", "http://[::1]:80/", "https://bücher.example/", "http://a@b@c/", "https://x:99999/", "%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		clean, key, ok := normalizeURL(s)
		if !ok {
			return
		}
		if !strings.HasPrefix(key, "http://") && !strings.HasPrefix(key, "https://") {
			t.Fatalf("key %q of %q is no http address", key, s)
		}
		if strings.Contains(clean, "#") && !strings.Contains(s, "#") {
			t.Fatalf("clean %q gained a fragment", clean)
		}
		// Normalizing is idempotent on the key.
		if _, key2, ok2 := normalizeURL(key); ok2 && key2 != key {
			t.Fatalf("key %q normalizes to %q", key, key2)
		}
	})
}

func TestSearxngEndpoint(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"https://searx.example.org":                "https://searx.example.org/search",
		"https://searx.example.org/":               "https://searx.example.org/search",
		"https://searx.example.org/search":         "https://searx.example.org/search",
		"https://searx.example.org/search/":        "https://searx.example.org/search",
		"https://example.org/searx/search?q=x#top": "https://example.org/searx/search",
	}
	for in, want := range cases {
		got, err := searxngEndpoint(in)
		if err != nil || got != want {
			t.Errorf("searxngEndpoint(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestExcerptAndLanguages(t *testing.T) {
	t.Parallel()
	if got := excerpt([]byte("a\x00b\n\n  c\td")); got != "a b c d" {
		t.Errorf("excerpt = %q", got)
	}
	long := excerpt([]byte(strings.Repeat("x", 1000)))
	if n := len([]rune(long)); n != maxExcerpt+1 || !strings.HasSuffix(long, "…") {
		t.Errorf("a long excerpt has %d characters", n)
	}
	for in, want := range map[string]string{"de-CH": "de", "ja": "jp", "zh-TW": "zh-hant", "zh": "zh-hans", "pt-BR": "pt-br", "pt": "pt-pt", "en-GB": "en-gb", "no": "nb", "tlh": ""} {
		if got := braveLanguage(in); got != want {
			t.Errorf("braveLanguage(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMergeTakesFirstLimitPerBackend(t *testing.T) {
	t.Parallel()
	lists := []backendHits{
		{"A", []hit{{url: "https://a/1"}, {url: "https://a/2"}, {url: "https://a/3"}}},
		{"B", []hit{{url: "https://b/1", title: "b1"}, {url: "https://a/1", title: "filled", snippet: "from B"}, {url: "https://b/3"}}},
	}
	got, taken := merge(lists, 2)
	if taken != 4 || len(got) != 2 || got[0].url != "https://a/1" || got[1].url != "https://b/1" {
		t.Fatalf("merge = %+v, taken %d", got, taken)
	}
	if got[0].title != "filled" || got[0].snippet != "from B" || strings.Join(got[0].backends, ",") != "A,B" {
		t.Errorf("the duplicate did not fill empty fields or list both backends: %+v", got[0])
	}
}
