package app

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stewardhq/steward/chat"
	"github.com/stewardhq/steward/config"
	"github.com/stewardhq/steward/internal/confluencetest"
	"github.com/stewardhq/steward/internal/webtest"
	"github.com/stewardhq/steward/llm"
	"github.com/stewardhq/steward/loop"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/registry"
	"github.com/stewardhq/steward/tools/confluence"
)

// openWithPlugin opens an App whose organization plugin holds settings
// (Lua lines) and whose user settings file holds user (JSON or "").
func openWithPlugin(t *testing.T, settings, user string, getenv func(string) string, opts Options) *App {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	pdir := filepath.Join(cfg, "plugins", "org", "wiki")
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	plugin := "ID = \"wiki\"\nNAME = \"Wiki\"\nVERSION = \"1.0.0\"\nTYPE = \"CONFIGURATION\"\nCONFIG = {}\nCONFIG[\"SETTINGS\"] = {}\n" + settings
	if err := os.WriteFile(filepath.Join(pdir, "plugin.lua"), []byte(plugin), 0o644); err != nil {
		t.Fatal(err)
	}
	if user != "" {
		if err := os.WriteFile(filepath.Join(cfg, "settings.json"), []byte(user), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	opts.ConfigDir, opts.DataDir, opts.Getenv = cfg, filepath.Join(dir, "data"), getenv
	a, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// An organization hands out the wiki's API token encrypted as ENC:v1 in
// its plugin: the tool receives it decrypted and the wiki gets it, while a
// plain-text token is refused and leaves the tool unconfigured.
func TestConfluenceTokenFromAnOrganizationPlugin(t *testing.T) {
	fake := confluencetest.Start(t, confluencetest.Options{Layout: confluencetest.Cloud, Email: "it@example.org", APIToken: "ATATT-org-token-42"}, "*.atlassian.net")
	n := webtest.NewNetFor(t, fake.HTTP)
	n.Host("acme.atlassian.net", "93.184.215.30")
	web := Options{}
	web.Web.Resolver, web.Web.Dial = n, n.Dial
	web.Web.TLSConfig = &tls.Config{RootCAs: confluencetest.Pool(fake.Cert)}

	key := make([]byte, 32)
	rand.Read(key)
	secret := base64.StdEncoding.EncodeToString(key)
	salt := make([]byte, 16)
	rand.Read(salt)
	enc, err := config.Encrypt("ATATT-org-token-42", secret, salt)
	if err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == config.EncryptionSecretEnv {
			return secret
		}
		return ""
	}
	lua := func(token string) string {
		return `CONFIG["SETTINGS"]["search_confluence.baseUrl"] = "` + n.URL("acme.atlassian.net", "/wiki/") + `"
CONFIG["SETTINGS"]["search_confluence.mode"] = "REST"
CONFIG["SETTINGS"]["search_confluence.email"] = "it@example.org"
CONFIG["SETTINGS"]["search_confluence.apiToken"] = "` + token + `"
CONFIG["SETTINGS"]["search_confluence.pageBodies"] = "0"
`
	}
	high := registry.Provider{Confidence: policy.High, CanUseTools: true}

	a := openWithPlugin(t, lua(enc), "", getenv, web)
	if len(a.Org.Problems) > 0 {
		t.Fatalf("problems: %v", a.Org.Problems)
	}
	offered, blocked := a.Registry.Runnable(context.Background(), registry.Request{Component: registry.ComponentChat,
		Selected: []string{confluence.ID}, MayRunTools: true, Provider: high})
	var ids []string
	for _, o := range offered {
		ids = append(ids, o.Definition.ID)
	}
	if strings.Join(ids, " ") != "read_web_page search_confluence" {
		t.Fatalf("offered %v, blocked %v", ids, blocked)
	}
	th := &chat.Thread{}
	out, err := loop.Execute(context.Background(), llm.Call{ID: "c1", Name: confluence.ID, Arguments: json.RawMessage(`{"query":"vpn"}`), Valid: true}, 1,
		loop.RunContext{Tools: offered, Chat: th, ProviderConfidence: policy.High})
	if err != nil || out.Trace.Status != loop.StatusSuccess || !strings.Contains(out.Content, "VPN+setup") {
		t.Fatalf("%+v %v", out, err)
	}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("it@example.org:ATATT-org-token-42"))
	for _, q := range fake.Requests() {
		if q.Header.Get("Authorization") != want {
			t.Fatalf("the wiki got Authorization %q", q.Header.Get("Authorization"))
		}
	}
	// read_web_page's wiki is the one search_confluence searches.
	if u, ok := a.wiki(); !ok || u.String() != n.URL("acme.atlassian.net", "/wiki/") {
		t.Fatalf("read_web_page's wiki %v %v", u, ok)
	}

	// In plain text the token is refused: the tool is not configured, and
	// no request is made.
	fake.Reset()
	a = openWithPlugin(t, lua("ATATT-org-token-42"), "", getenv, web)
	if r := a.Registry.OfferBlockReason(context.Background(), confluence.ID, high, registry.ComponentChat); r != registry.NotConfigured {
		t.Fatalf("with a plain-text token the tool is %v", r)
	}
	for _, p := range a.Org.Problems {
		if strings.Contains(p.Message, "ATATT-org-token-42") {
			t.Fatalf("a problem repeats the token: %v", p)
		}
	}
	if len(fake.Requests()) != 0 {
		t.Fatal("the wiki was asked")
	}
}

// read_web_page reads its wiki from search_confluence.baseUrl with the same
// precedence and the same parser as search_confluence itself.
func TestReadWebPageAndSearchConfluenceMeanTheSameWiki(t *testing.T) {
	cases := []struct {
		name, lua, user, want string
	}{
		{"user's own", "", `{"version":2,"tools":{"search_confluence":{"baseUrl":"https://wiki.example.org/confluence"}}}`, "https://wiki.example.org/confluence/"},
		{"organization default, user's value wins",
			`CONFIG["SETTINGS"]["search_confluence.baseUrl"] = "https://old.example.org/"` + "\n" + `CONFIG["SETTINGS"]["search_confluence.baseUrl.AllowUserOverride"] = true`,
			`{"version":2,"tools":{"search_confluence":{"baseUrl":"https://wiki.example.org/"}}}`, "https://wiki.example.org/"},
		{"organization default alone",
			`CONFIG["SETTINGS"]["search_confluence.baseUrl"] = "https://old.example.org/"` + "\n" + `CONFIG["SETTINGS"]["search_confluence.baseUrl.AllowUserOverride"] = true`,
			"", "https://old.example.org/"},
		{"locked by the organization", `CONFIG["SETTINGS"]["search_confluence.baseUrl"] = "https://locked.example.org/"`,
			`{"version":2,"tools":{"search_confluence":{"baseUrl":"https://wiki.example.org/"}}}`, "https://locked.example.org/"},
		{"not https", "", `{"version":2,"tools":{"search_confluence":{"baseUrl":"http://wiki.example.org/"}}}`, ""},
		{"none", "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := openWithPlugin(t, c.lua, c.user, nil, Options{})
			u, ok := a.wiki()
			got := ""
			if ok {
				got = u.String()
			}
			if got != c.want {
				t.Fatalf("read_web_page's wiki %q, want %q", got, c.want)
			}
			def, _ := a.Definition(confluence.ID)
			res, _ := a.Resolver.Resolve(context.Background(), def)
			v := res.Values().Get(confluence.SettingBaseURL)
			if c.want != "" {
				parsed, err := confluence.ParseBaseURL(v)
				if err != nil || parsed.String() != c.want {
					t.Fatalf("search_confluence resolves %q", v)
				}
			}
			if _, err := url.Parse(got); err != nil {
				t.Fatal(err)
			}
		})
	}
}
