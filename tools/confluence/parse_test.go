package confluence

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// The two example answers of confluence.md, Cloud and Data Center.
const cloudExample = `{
  "results": [
    {
      "content": {"id": "98304", "type": "page", "status": "current", "title": "Backup policy",
                  "space": {"key": "OPS", "name": "Operations"},
                  "_links": {"webui": "/spaces/OPS/pages/98304/Backup+policy", "self": "https://acme.atlassian.net/wiki/rest/api/content/98304"}},
      "title": "@@@hl@@@Backup@@@endhl@@@ policy",
      "excerpt": "Nightly @@@hl@@@backups@@@endhl@@@ run at 02:00 &amp; are kept 30 days …",
      "url": "/spaces/OPS/pages/98304/Backup+policy",
      "resultGlobalContainer": {"title": "Operations", "displayUrl": "/spaces/OPS"},
      "breadcrumbs": [], "entityType": "content", "iconCssClass": "aui-icon content-type-page",
      "lastModified": "2026-05-04T08:12:31.000Z", "friendlyLastModified": "May 04, 2026", "score": 3.71
    }
  ],
  "start": 0, "limit": 2, "size": 1, "totalSize": 1,
  "cqlQuery": "siteSearch ~ \"backup\" and type in (page,blogpost) and space = \"OPS\"",
  "searchDuration": 41,
  "_links": {"base": "https://acme.atlassian.net/wiki", "context": "/wiki",
             "next": "/rest/api/search?cql=siteSearch+~+%22backup%22&limit=2&cursor=abc123",
             "self": "https://acme.atlassian.net/wiki/rest/api/search?cql=…"}
}`

const dcExample = `{"results":[{"content":{"id":"5570619","type":"page","status":"current","title":"VPN setup",
  "_links":{"webui":"/display/IT/VPN+setup","tinyui":"/x/O4BV"}},
  "title":"@@@hl@@@VPN@@@endhl@@@ setup","excerpt":"Install the @@@hl@@@VPN@@@endhl@@@ client from …",
  "url":"/display/IT/VPN+setup","resultGlobalContainer":{"title":"IT Services","displayUrl":"/display/IT"},
  "entityType":"content","iconCssClass":"aui-icon content-type-page",
  "lastModified":"2026-03-11T15:02:44.000+01:00","friendlyLastModified":"Mar 11, 2026"}],
 "start":0,"limit":10,"size":1,"totalSize":1,"cqlQuery":"siteSearch ~ \"vpn\"","searchDuration":12,
 "_links":{"base":"https://wiki.example.org","context":"","self":"https://wiki.example.org/rest/api/search?cql=…"}}`

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := ParseBaseURL(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestParseSearchExamples(t *testing.T) {
	hits, next, err := parseSearch([]byte(cloudExample), mustURL(t, "https://acme.atlassian.net/wiki/"))
	if err != nil || len(hits) != 1 {
		t.Fatalf("cloud: %v %v", hits, err)
	}
	h := hits[0]
	want := hit{id: "98304", kind: "page", title: "**Backup** policy", plainTitle: "Backup policy", space: "Operations (OPS)",
		excerpt: "Nightly **backups** run at 02:00 & are kept 30 days …", modified: "2026-05-04T08:12:31Z",
		webURL: "https://acme.atlassian.net/wiki/spaces/OPS/pages/98304/Backup+policy"}
	if h != want {
		t.Fatalf("cloud hit\n got %+v\nwant %+v", h, want)
	}
	if next != "/rest/api/search?cql=siteSearch+~+%22backup%22&limit=2&cursor=abc123" {
		t.Fatalf("next %q", next)
	}

	// Data Center, with a context path in the configured base: the link
	// is the base plus the site-relative path, never _links.base.
	hits, next, err = parseSearch([]byte(dcExample), mustURL(t, "https://wiki.example.org/confluence"))
	if err != nil || len(hits) != 1 || next != "" {
		t.Fatalf("dc: %v %q %v", hits, next, err)
	}
	want = hit{id: "5570619", kind: "page", title: "**VPN** setup", plainTitle: "VPN setup", space: "IT Services",
		excerpt: "Install the **VPN** client from …", modified: "2026-03-11T14:02:44Z",
		webURL: "https://wiki.example.org/confluence/display/IT/VPN+setup"}
	if hits[0] != want {
		t.Fatalf("dc hit\n got %+v\nwant %+v", hits[0], want)
	}
}

func TestParseSearchSkipsWhatIsNoPage(t *testing.T) {
	body := `{"results":[
 {"space":{"key":"OPS"},"title":"Operations","entityType":"space"},
 {"user":{"displayName":"Jane"},"title":"Jane","entityType":"user"},
 {"content":{"id":"1","type":"attachment","title":"a.pdf"},"title":"a.pdf","entityType":"content"},
 {"content":{"id":"2","type":"comment","title":"Re: x"},"title":"Re: x","entityType":"content"},
 {"content":{"id":"3","type":"blogpost","title":"News","_links":{"webui":"/pages/viewpage.action?pageId=3"}},"title":"News","entityType":"content"}
],"_links":{}}`
	hits, _, err := parseSearch([]byte(body), mustURL(t, "https://wiki.example.org/"))
	if err != nil || len(hits) != 1 || hits[0].kind != "blogpost" || hits[0].webURL != "https://wiki.example.org/pages/viewpage.action?pageId=3" {
		t.Fatalf("got %+v %v", hits, err)
	}
}

// An answer cannot point a hit's address anywhere but into the wiki.
func TestWebAddressStaysInTheWiki(t *testing.T) {
	base := mustURL(t, "https://wiki.example.org/confluence/")
	for rel, want := range map[string]string{
		"/display/IT/VPN+setup":             "https://wiki.example.org/confluence/display/IT/VPN+setup",
		"/pages/viewpage.action?pageId=42":  "https://wiki.example.org/confluence/pages/viewpage.action?pageId=42",
		"https://evil.example.com/x":        "",
		"//evil.example.com/x":              "",
		"/../admin":                         "",
		"/%2e%2e/admin":                     "",
		"/%2E%2E/admin":                     "",
		"/a/%2F/b":                          "",
		"display/IT":                        "",
		"/display/IT#frag":                  "",
		"/display/ IT":                      "",
		"javascript:alert(1)":               "",
		"/display/IT\\..\\..\\etc":          "",
		"@evil.example.com/x":               "",
		"/display/IT?redirect=https://evil": "https://wiki.example.org/confluence/display/IT?redirect=https://evil",
	} {
		if got := webAddress(base, rel); got != want {
			t.Errorf("webAddress(%q) = %q, want %q", rel, got, want)
		}
	}
}

func TestEmphasize(t *testing.T) {
	for in, want := range map[string]string{
		"no markers":                               "no markers",
		"@@@hl@@@a@@@endhl@@@ b":                   "**a** b",
		"x @@@hl@@@ a b @@@endhl@@@y":              "x  **a b** y",
		"@@@hl@@@@@@endhl@@@gone":                  "gone",
		"@@@hl@@@open only":                        "open only",
		"close only@@@endhl@@@":                    "close only",
		"@@@endhl@@@a@@@hl@@@b@@@endhl@@@":         "a**b**",
		"@@@hl@@@a@@@hl@@@b@@@endhl@@@":            "a**b**",
		"@@@hl@@@x@@@endhl@@@@@@hl@@@y@@@endhl@@@": "**x****y**",
	} {
		if got := emphasize(in); got != want {
			t.Errorf("emphasize(%q) = %q, want %q", in, got, want)
		}
	}
	// Entities are decoded after the markers, and markers spelled as
	// entities mean nothing.
	if got := clean("&#64;&#64;&#64;hl&#64;&#64;&#64;x &lt;b&gt; &quot;q&quot;", 100); got != `x <b> "q"` {
		t.Errorf("clean = %q", got)
	}
	if got := clean(strings.Repeat("word ", 200), 50); utf8.RuneCountInString(got) > 50 || !strings.HasSuffix(got, "…") {
		t.Errorf("clean cut to %d characters: %q", utf8.RuneCountInString(got), got)
	}
}

func TestParseSearchRefusesWhatIsNotAnAnswer(t *testing.T) {
	for _, body := range []string{"", "<html>login</html>", `{"results": "no"}`, `[1,2]`} {
		if _, _, err := parseSearch([]byte(body), mustURL(t, "https://wiki.example.org/")); err == nil {
			t.Errorf("%q was read as an answer", body)
		}
	}
}

// FuzzParseSearch: no answer makes the parser panic, and whatever it
// returns is fit for the model: no highlight markers, valid UTF-8, no
// control characters, the bounds kept, and every address inside the wiki.
func FuzzParseSearch(f *testing.F) {
	f.Add([]byte(cloudExample))
	f.Add([]byte(dcExample))
	f.Add([]byte(`{"results":[{"content":{"id":"1","type":"page","_links":{"webui":"//evil/x"}},"title":"@@@hl@@@","excerpt":"@@@endhl@@@&#64;&#64;&#64;hl&#64;&#64;&#64;\u0000"}]}`))
	f.Add([]byte(`{"results":[{"content":{"id":"99999999999999999999999","type":"PAGE","space":{"key":"","name":"x"}},"lastModified":"not a date"}],"_links":{"next":"https://evil/rest/api/search?cql=x"}}`))
	base := mustURL(f, "https://wiki.example.org/confluence/")
	f.Fuzz(func(t *testing.T, body []byte) {
		hits, _, err := parseSearch(body, base)
		if err != nil {
			return
		}
		for _, h := range hits {
			for name, v := range map[string]string{"title": h.title, "plain title": h.plainTitle, "space": h.space, "excerpt": h.excerpt} {
				if strings.Contains(v, markOpen) || strings.Contains(v, markClose) {
					t.Fatalf("%s keeps a marker: %q", name, v)
				}
				if !utf8.ValidString(v) || strings.ContainsAny(v, "\x00\n\r\t") {
					t.Fatalf("%s is not clean text: %q", name, v)
				}
			}
			if utf8.RuneCountInString(h.title) > maxTitleChars || utf8.RuneCountInString(h.excerpt) > maxExcerptChars ||
				utf8.RuneCountInString(h.space) > 2*maxSpaceChars+3 {
				t.Fatalf("a field exceeds its bound: %+v", h)
			}
			if h.kind != "page" && h.kind != "blogpost" {
				t.Fatalf("kind %q", h.kind)
			}
			if h.id != "" && strings.Trim(h.id, "0123456789") != "" {
				t.Fatalf("id %q", h.id)
			}
			if h.webURL != "" {
				u, err := url.Parse(h.webURL)
				if err != nil || !strings.HasPrefix(h.webURL, "https://wiki.example.org/confluence/") || u.Host != "wiki.example.org" {
					t.Fatalf("address %q leaves the wiki", h.webURL)
				}
			}
		}
	})
}
