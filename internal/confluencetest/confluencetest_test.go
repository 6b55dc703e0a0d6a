package confluencetest

import (
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestParseCQL(t *testing.T) {
	for in, want := range map[string]string{
		`siteSearch ~ "vpn"`:                              `siteSearch ~ "vpn"`,
		`text ~ "a \"b\" c" and type IN (page, blogpost)`: `(text ~ "a \"b\" c" AND type in ("page", "blogpost"))`,
		`space = 'OPS' OR NOT title ~ x*`:                 `(space = "OPS" OR NOT title ~ "x*")`,
		`(a = 1 OR b != 2) AND c NOT IN ("x")`:            `((a = "1" OR b != "2") AND c not in ("x"))`,
		`text ~ "back\\slash"`:                            `text ~ "back\\slash"`,
		`lastModified >= "2026-01-01" and created < now`:  `(lastModified >= "2026-01-01" AND created < "now")`,
	} {
		e, err := ParseCQL(in)
		if err != nil || e.String() != want {
			t.Errorf("ParseCQL(%q) = %v, %v; want %s", in, e, err, want)
		}
	}
	for _, in := range []string{``, `text ~`, `text ~ "open`, `~ "x"`, `a = "x" b = "y"`, `a = "x" AND`, `(a = "x"`, `a IN (x`, `a = "x\`, `a <> b`, `and = x`, `text ~ "x" ORDER BY title`} {
		if e, err := ParseCQL(in); err == nil {
			t.Errorf("ParseCQL(%q) = %v, want an error", in, e)
		}
	}
}

func FuzzParseCQL(f *testing.F) {
	f.Add(`siteSearch ~ "vpn" AND type IN (page, blogpost) AND space = "OPS"`)
	f.Add(`((a = 1`)
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseCQL(s)
		if err == nil && e == nil {
			t.Fatal("no expression and no error")
		}
	})
}

func client(r *Running) *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: Pool(r.Cert)}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func get(t *testing.T, r *Running, path, auth string) (*http.Response, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, r.HTTP.URL+path, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := client(r).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return resp, m
}

func TestFakeCloud(t *testing.T) {
	r := Start(t, Options{Layout: Cloud, Email: "u@example.com", APIToken: "tok", MaxLimit: 20})
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("u@example.com:tok"))
	q := "/wiki/rest/api/search?" + url.Values{"cql": {`siteSearch ~ "backup" AND type IN (page, blogpost)`}, "limit": {"50"}, "expand": {"content.space"}}.Encode()
	if resp, _ := get(t, r, q, ""); resp.StatusCode != 401 {
		t.Fatalf("without a token: %d", resp.StatusCode)
	}
	resp, m := get(t, r, q, basic)
	if resp.StatusCode != 200 || len(m["results"].([]any)) != 20 {
		t.Fatalf("%d %v", resp.StatusCode, m)
	}
	next := m["_links"].(map[string]any)["next"].(string)
	if !strings.Contains(next, "cursor=") || strings.Contains(next, "start=") {
		t.Fatalf("next %q", next)
	}
	_, m = get(t, r, "/wiki"+next, basic)
	if len(m["results"].([]any)) != 5 || m["_links"].(map[string]any)["next"] != nil {
		t.Fatalf("second page %v", m)
	}
	if resp, _ := get(t, r, q+"&start=20", basic); resp.StatusCode != 400 {
		t.Fatalf("start on Cloud: %d", resp.StatusCode)
	}
	res := m["results"].([]any)[0].(map[string]any)
	if !strings.Contains(res["excerpt"].(string), "@@@hl@@@backup@@@endhl@@@") {
		t.Fatalf("excerpt %v", res["excerpt"])
	}
	if resp, m := get(t, r, "/wiki/rest/api/content/98304?expand=body.view", basic); resp.StatusCode != 200 ||
		!strings.Contains(m["body"].(map[string]any)["view"].(map[string]any)["value"].(string), "Nightly backups") {
		t.Fatalf("content %d %v", resp.StatusCode, m)
	}
	if resp, _ := get(t, r, "/wiki/rest/api/search?cql="+url.QueryEscape(`text ~ "open`), basic); resp.StatusCode != 400 {
		t.Fatalf("a bad query: %d", resp.StatusCode)
	}
}

func TestFakeDataCenterPages(t *testing.T) {
	r := Start(t, Options{Layout: DataCenter, Context: "/confluence", PAT: "pat", PageSignIn: LoginRedirect})
	resp, m := get(t, r, "/confluence/rest/api/search?cql="+url.QueryEscape(`siteSearch ~ "vpn"`), "Bearer wrong")
	if resp.StatusCode != 401 || resp.Header.Get("X-Seraph-LoginReason") != "AUTHENTICATED_FAILED" {
		t.Fatalf("%d %v %v", resp.StatusCode, resp.Header, m)
	}
	resp, _ = get(t, r, "/confluence/dosearchsite.action?cql=x", "")
	if resp.StatusCode != 302 || !strings.HasPrefix(resp.Header.Get("Location"), "/confluence/login.action?os_destination=") {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	resp, _ = get(t, r, "/confluence/display/IT/VPN+setup", "Negotiate abc")
	if resp.StatusCode != 200 {
		t.Fatalf("page %d", resp.StatusCode)
	}
	r.Set(Scenario{Status: 429, RetryAfter: "2", Times: 1})
	if resp, _ := get(t, r, "/confluence/display/IT/VPN+setup", "Negotiate abc"); resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" {
		t.Fatalf("%d", resp.StatusCode)
	}
	if resp, _ := get(t, r, "/confluence/display/IT/VPN+setup", "Negotiate abc"); resp.StatusCode != 200 {
		t.Fatalf("after the scenario: %d", resp.StatusCode)
	}
	if n := len(r.Requests()); n != 5 {
		t.Fatalf("%d requests recorded", n)
	}
}
