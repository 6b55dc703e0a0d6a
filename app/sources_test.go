package app

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stewardhq/steward/chat"
	"github.com/stewardhq/steward/config"
	"github.com/stewardhq/steward/datasource"
	"github.com/stewardhq/steward/datasource/eri"
	"github.com/stewardhq/steward/internal/eritest"
	"github.com/stewardhq/steward/llm"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/registry"
	"github.com/stewardhq/steward/tool"
)

// sourcesApp opens an App whose organization plugin holds body and whose
// user settings hold user.
func sourcesApp(t *testing.T, body string, user *config.UserSettings, env map[string]string) *App {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	if body != "" {
		p := filepath.Join(cfg, "plugins", "org", "it")
		os.MkdirAll(p, 0o755)
		os.WriteFile(filepath.Join(p, "plugin.lua"), []byte("ID = \"it\"\nNAME = \"IT\"\nVERSION = \"1\"\nTYPE = \"CONFIGURATION\"\nCONFIG = {}\nCONFIG[\"SETTINGS\"] = {}\nCONFIG[\"DATA_SOURCES\"] = {}\n"+body), 0o644)
	}
	if user != nil {
		if err := user.Save(config.UserSettingsPath(cfg)); err != nil {
			t.Fatal(err)
		}
	}
	a, err := Open(context.Background(), Options{ConfigDir: cfg, DataDir: filepath.Join(dir, "data"), Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func encSecret(t *testing.T) (secret string, enc func(string) string) {
	b := make([]byte, 32)
	rand.Read(b)
	secret = base64.StdEncoding.EncodeToString(b)
	return secret, func(plain string) string {
		salt := make([]byte, 16)
		rand.Read(salt)
		v, err := config.Encrypt(plain, secret, salt)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// A wrong value in an organization's data source is reported at its
// plugin's line, with the field named as the plugin writes it.
func TestOrgSourceProblemsNameTheLuaField(t *testing.T) {
	a := sourcesApp(t, `CONFIG["DATA_SOURCES"][#CONFIG["DATA_SOURCES"]+1] = { ["Id"] = "big", ["Name"] = "Big", ["Type"] = "LOCAL_DIRECTORY", ["Path"] = "/srv/big", ["MaxMatches"] = 70000 }
CONFIG["DATA_SOURCES"][#CONFIG["DATA_SOURCES"]+1] = { ["Id"] = "rel", ["Name"] = "Rel", ["Type"] = "LOCAL_FILE", ["Path"] = "docs/a.pdf" }
CONFIG["DATA_SOURCES"][#CONFIG["DATA_SOURCES"]+1] = { ["Id"] = "ok", ["Name"] = "Team share", ["Type"] = "LOCAL_DIRECTORY", ["Path"] = "/srv/share" }
`, &config.UserSettings{DataSources: []config.UserDataSource{
		{ID: "ok", Name: "Mine", Kind: "LOCAL_DIRECTORY", Path: "/home/me/x"},
		{ID: "lvl", Name: "Level", Kind: "LOCAL_DIRECTORY", Path: "/home/me/y", RequiredProviderConfidence: "SUPER"},
		{ID: "dupname", Name: "team share", Kind: "LOCAL_DIRECTORY", Path: "/home/me/z"},
		{ID: "mine", Name: "Mine too", Kind: "LOCAL_FILE", Path: "/home/me/a.pdf"},
	}}, nil)
	sources, userProblems := a.DataSources()
	var ids []string
	for _, s := range sources {
		ids = append(ids, fmt.Sprintf("%s#%d", s.ID, s.Number))
	}
	if strings.Join(ids, ",") != "ok#3,mine#7" {
		t.Fatalf("sources %v", ids)
	}
	if !sources[0].Org || sources[0].RequiredConfidence != policy.High || sources[0].MaxMatches != 10 || sources[1].Org {
		t.Fatalf("%+v", sources)
	}
	var org []string
	for _, p := range a.Org.Problems {
		org = append(org, p.String())
	}
	joined := strings.Join(org, "\n")
	if !strings.Contains(joined, "plugin.lua:8: DATA_SOURCES: data source big: MaxMatches \"70000\": use a whole number of results per page from 1 to 65535") ||
		!strings.Contains(joined, "plugin.lua:9: DATA_SOURCES: data source rel: Path \"docs/a.pdf\": use the absolute, clean path") {
		t.Fatalf("organization problems:\n%s", joined)
	}
	u := fmt.Sprint(userProblems)
	for _, want := range []string{"the organization plugin \"IT\" defines a data source with this ID, and its definition is locked", "lvl: required_provider_confidence \"SUPER\"", "dupname: name \"team share\": the data source ok has this name already"} {
		if !strings.Contains(u, want) {
			t.Errorf("user problems lack %q: %s", want, u)
		}
	}
	// Reading again does not report the organization's problems twice.
	a.DataSources()
	if len(a.Org.Problems) != len(org) {
		t.Fatal("problems were reported twice")
	}
	if err := a.RemoveSource(context.Background(), "ok"); err == nil || !strings.Contains(err.Error(), "organization plugin") {
		t.Fatalf("an organization's source cannot be removed: %v", err)
	}
	if _, err := a.AddSource(config.UserDataSource{ID: "OK", Name: "x", Kind: "LOCAL_DIRECTORY", Path: "/x"}, ""); err == nil || !strings.Contains(err.Error(), "organization plugin") {
		t.Fatalf("an organization's ID cannot be taken: %v", err)
	}
}

func TestEffectiveDataSourcesPrecedence(t *testing.T) {
	a := sourcesApp(t, `CONFIG["SETTINGS"]["DataChat.PreselectedDataSourcesRetrievalMode"] = "EVERY_MESSAGE"
CONFIG["SETTINGS"]["DataChat.PreselectedDataSourcesRetrievalMode.AllowUserOverride"] = true
CONFIG["SETTINGS"]["DataChat.PreselectedDataSourceIds"] = { "hr" }
`, &config.UserSettings{DataSourceDefaults: config.DataSourceDefaults{Selected: []string{"docs"}}}, nil)
	o := a.EffectiveDataSources(chat.DataSourceOptions{})
	if o.Retrieval != chat.RetrievalEveryMessage || o.Automatic || strings.Join(o.Selected, ",") != "hr" {
		t.Fatalf("an editable default applies, a locked selection wins over the user's: %+v", o)
	}
	o = a.EffectiveDataSources(chat.DataSourceOptions{Set: true, Automatic: true, Retrieval: chat.RetrievalSemantic})
	if o.Retrieval != chat.RetrievalSemantic || o.Automatic || strings.Join(o.Selected, ",") != "hr" {
		t.Fatalf("the chat chooses the mode, not the locked selection: %+v", o)
	}
	if err := a.CheckDataSourceChoice(chat.DataSourceOptions{Set: true, Selected: []string{"docs"}}); err == nil || !strings.Contains(err.Error(), "locks which data sources") {
		t.Fatalf("%v", err)
	}
	b := sourcesApp(t, "", &config.UserSettings{DataSources: []config.UserDataSource{{ID: "docs", Name: "Docs", Kind: "LOCAL_DIRECTORY", Path: "/home/me/docs"}},
		DataSourceDefaults: config.DataSourceDefaults{Retrieval: "EVERY_MESSAGE"}}, nil)
	if o := b.EffectiveDataSources(chat.DataSourceOptions{}); o.Retrieval != chat.RetrievalEveryMessage || !o.Automatic {
		t.Fatalf("%+v", o)
	}
	if err := b.CheckDataSourceChoice(chat.DataSourceOptions{Set: true, Selected: []string{"nope"}}); err == nil || !strings.Contains(err.Error(), "the data sources are: docs") {
		t.Fatalf("%v", err)
	}
	if o := (sourcesApp(t, "", nil, nil)).EffectiveDataSources(chat.DataSourceOptions{}); o.Retrieval != chat.RetrievalSemantic || !o.Automatic || o.Disabled {
		t.Fatalf("the defaults: semantic search over every usable source: %+v", o)
	}
}

// An organization's ERI source signs in with its decrypted token; the
// server's answers and the client's requests are checked against the spec.
func TestOrgERISourceSignsInWithItsDecryptedToken(t *testing.T) {
	secret, enc := encSecret(t)
	srv := eritest.New(t, eritest.Options{Method: eri.AuthToken, Secret: "org-token-77", Info: eri.DataSourceInfo{Name: "HR", Description: "Handbook"},
		Documents: []eritest.Document{{Name: "a.md", Path: "https://hr.example.org/a", Text: "Parental leave lasts 14 months."}}})
	a := sourcesApp(t, fmt.Sprintf(`CONFIG["SETTINGS"]["DataApp.EnabledPreviewFeatures"] = { "PRE_RAG_2024" }
CONFIG["DATA_SOURCES"][#CONFIG["DATA_SOURCES"]+1] = { ["Id"] = "hr", ["Name"] = "HR", ["Type"] = "ERI_V1", ["Hostname"] = %q,
  ["AuthMethod"] = "TOKEN", ["Token"] = %q, ["SecurityPolicy"] = "ALLOW_ANY", ["SelectedRetrievalId"] = "words" }
`, srv.URL(), enc("org-token-77")), nil, map[string]string{config.EncryptionSecretEnv: secret})
	us, refused := a.SourceService().Usable(context.Background(), datasource.Provider{Confidence: policy.Medium}, datasource.Selection{Automatic: true})
	if len(us) != 1 || us[0].Description != "Handbook" {
		t.Fatalf("%+v %+v %v", us, refused, a.Org.Problems)
	}
	res := a.SourceService().Search(context.Background(), us, datasource.SearchRequest{Query: "parental leave", Page: 1, Provider: datasource.Provider{Confidence: policy.Medium}})
	if res[0].NotSearched || len(res[0].Passages) != 1 {
		t.Fatalf("%+v", res[0])
	}
}

// The classic process raises the chat's requirements for what reached the
// model only, and its passages go into the system prompt of this request.
func TestAnswerRunsTheClassicProcessAndRaisesForWhatReached(t *testing.T) {
	srv := eritest.New(t, eritest.Options{Security: eri.SecurityRequirements{AllowedProviderType: eri.ProviderSelfHosted},
		Documents: []eritest.Document{{Name: "a.md", Path: "https://hr.example.org/a", Text: "Parental leave lasts 14 months."}}})
	a := sourcesApp(t, "", &config.UserSettings{EnabledPreviewFeatures: []string{"PRE_RAG_2024"},
		DataSources: []config.UserDataSource{{ID: "hr", Name: "HR", Kind: "ERI_V1", Hostname: srv.URL(), AuthMethod: "NONE", RequiredProviderConfidence: "MEDIUM"}}}, nil)
	th := NewThread()
	th.SetDataSources(chat.DataSourceOptions{Set: true, Automatic: true, Retrieval: chat.RetrievalEveryMessage})
	p := &ResolvedProvider{Provider: llm.Provider{Kind: "vllm", Model: "m"}, Title: "local", Confidence: policy.High, Trusted: true}
	r := a.retrieve(context.Background(), th, p, Turn{Text: "quantum chromodynamics"}, nil)
	if r == nil || r.Classic == nil || r.Classic.System != "" {
		t.Fatalf("nothing found, nothing added: %+v", r)
	}
	if conf, sec := r.Classic.Assembly.Requirements(); conf != policy.None || sec != policy.NotSpecified {
		t.Fatal("a search that found nothing demands nothing")
	}
	r = a.retrieve(context.Background(), th, p, Turn{Text: "parental leave"}, nil)
	if r.Mode != registry.EveryMessage || !strings.Contains(r.Classic.System, "14 months") {
		t.Fatalf("%+v", r)
	}
	conf, sec := r.Classic.Assembly.Requirements()
	if conf != policy.Medium || sec != policy.SelfHosted {
		t.Fatalf("%s %s", conf, sec)
	}
	// A cloud provider is not searched for this source at all.
	cloud := &ResolvedProvider{Provider: llm.Provider{Kind: "openai", Model: "m"}, Title: "cloud", Confidence: policy.Medium}
	if r := a.retrieve(context.Background(), NewThread(), cloud, Turn{Text: "parental leave", NoTools: true}, nil); r == nil || r.Classic == nil || r.Classic.Assembly.Count != 0 || len(r.Classic.Refused) != 1 {
		t.Fatalf("%+v", r)
	}
	// The options go with the stored chat and come back.
	back := FromStored(ToStored(th, p))
	if o := back.DataSources(); !o.Set || o.Retrieval != chat.RetrievalEveryMessage || !o.Automatic {
		t.Fatalf("%+v", o)
	}
}

func TestExplainSemanticSearch(t *testing.T) {
	none := sourcesApp(t, "", nil, nil)
	p := &ResolvedProvider{Provider: llm.Provider{Kind: "vllm", Model: "m", Caps: llm.Capabilities{ToolCalling: true}}, Title: "local", Confidence: policy.High, Trusted: true}
	if x := none.ExplainSemanticSearch(context.Background(), nil, p); x.Offered || x.Reason != "PREVIEW_OFF" {
		t.Fatalf("%+v", x)
	}
	empty := sourcesApp(t, "", &config.UserSettings{EnabledPreviewFeatures: []string{"PRE_RAG_2024"}}, nil)
	if x := empty.ExplainSemanticSearch(context.Background(), nil, p); x.Offered || x.Reason != "NO_DATA_SOURCE" {
		t.Fatalf("%+v", x)
	}
	a := sourcesApp(t, "", &config.UserSettings{EnabledPreviewFeatures: []string{"PRE_RAG_2024"},
		DataSources: []config.UserDataSource{{ID: "docs", Name: "Docs", Kind: "LOCAL_DIRECTORY", Path: "/home/me/docs", RequiredProviderConfidence: "HIGH"}}}, nil)
	if x := a.ExplainSemanticSearch(context.Background(), nil, p); !x.Offered || len(x.Usable) != 1 || x.Mode != registry.SemanticSearch {
		t.Fatalf("%+v", x)
	}
	cloud := &ResolvedProvider{Provider: llm.Provider{Kind: "openai", Model: "m", Caps: llm.Capabilities{ToolCalling: true}}, Title: "cloud", Confidence: policy.Medium}
	if x := a.ExplainSemanticSearch(context.Background(), nil, cloud); x.Offered || x.Reason != "NO_USABLE_DATA_SOURCE" || len(x.Refused) != 1 || x.Refused[0].Code != datasource.RefusedConfidence {
		t.Fatalf("%+v", x)
	}
	noTools := &ResolvedProvider{Provider: llm.Provider{Kind: "vllm", Model: "m"}, Title: "old", Confidence: policy.High, Trusted: true}
	if x := a.ExplainSemanticSearch(context.Background(), nil, noTools); x.Offered || x.Reason != registry.ModelCannotUseTools.String() || x.Mode != registry.EveryMessage {
		t.Fatalf("a model without tool calling gets the classic process: %+v", x)
	}
}

// "Whenever the tool cannot be offered — a model without tool calling,
// tools or this tool switched off, a provider below a confidence the
// organization set for it — the classic process searches instead."
func TestClassicStepsInWheneverTheToolCannotBeOffered(t *testing.T) {
	srv := eritest.New(t, eritest.Options{Documents: []eritest.Document{{Name: "a.md", Path: "https://hr.example.org/a", Text: "Parental leave lasts 14 months."}}})
	user := func() *config.UserSettings {
		return &config.UserSettings{EnabledPreviewFeatures: []string{"PRE_RAG_2024"},
			DataSources: []config.UserDataSource{{ID: "hr", Name: "HR", Kind: "ERI_V1", Hostname: srv.URL(), AuthMethod: "NONE"}}}
	}
	withTools := &ResolvedProvider{Provider: llm.Provider{Kind: "vllm", Model: "m", Caps: llm.Capabilities{ToolCalling: true}}, Title: "local", Confidence: policy.High, Trusted: true}
	noTools := &ResolvedProvider{Provider: llm.Provider{Kind: "vllm", Model: "m"}, Title: "old", Confidence: policy.High, Trusted: true}
	cases := []struct {
		name   string
		plugin string
		p      *ResolvedProvider
		turn   Turn
		reason registry.Reason
	}{
		{"no tool calling", "", noTools, Turn{Text: "parental leave"}, registry.ModelCannotUseTools},
		{"tools off", `CONFIG["SETTINGS"]["DataTools.EnableTools"] = false` + "\n", withTools, Turn{Text: "parental leave"}, registry.ToolsSwitchedOff},
		{"tool off", `CONFIG["SETTINGS"]["DataTools.DisabledToolIds"] = { "semantic_search" }` + "\n", withTools, Turn{Text: "parental leave"}, registry.ToolSwitchedOff},
		{"confidence", `CONFIG["SETTINGS"]["DataTools.MinimumProviderConfidenceByToolId"] = { ["semantic_search"] = "HIGH" }` + "\n" +
			`CONFIG["SETTINGS"]["DataConfidence.ConfidenceScheme"] = "CUSTOM"` + "\n" + `CONFIG["SETTINGS"]["DataConfidence.CustomConfidenceScheme"] = { ["SELF_HOSTED"] = "MEDIUM" }` + "\n",
			&ResolvedProvider{Provider: withTools.Provider, Title: "local", Confidence: policy.Medium, Trusted: true}, Turn{Text: "parental leave"}, registry.ProviderConfidenceTooLow},
		{"no tools for this turn", "", withTools, Turn{Text: "parental leave", NoTools: true}, registry.ToolsSwitchedOff},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := sourcesApp(t, c.plugin, user(), nil)
			th := NewThread()
			var offered []tool.Offered
			if !c.turn.NoTools {
				offered, _ = a.Registry.Runnable(context.Background(), a.RunnableRequest(th, c.p, nil))
			}
			r := a.retrieve(context.Background(), th, c.p, c.turn, offered)
			if r == nil || r.Mode != registry.EveryMessage || r.Reason != c.reason || r.Classic == nil || !strings.Contains(r.Classic.System, "14 months") {
				t.Fatalf("%+v", r)
			}
		})
	}
	// And where it can be offered, the classic process steps back.
	a := sourcesApp(t, "", user(), nil)
	th := NewThread()
	offered, _ := a.Registry.Runnable(context.Background(), a.RunnableRequest(th, withTools, nil))
	if r := a.retrieve(context.Background(), th, withTools, Turn{Text: "parental leave"}, offered); r == nil || r.Mode != registry.SemanticSearch || r.Classic != nil || !r.Offered {
		t.Fatalf("%+v", r)
	}
}

// A local plugin's data sources belong to the user's side: they are not
// locked like an organization's, and a user's source does not clash with
// them as with an organization's.
func TestLocalPluginSourcesAreNotTheOrganizations(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	p := filepath.Join(cfg, "plugins", "local", "mine")
	os.MkdirAll(p, 0o755)
	os.WriteFile(filepath.Join(p, "plugin.lua"), []byte("ID = \"mine\"\nNAME = \"Mine\"\nVERSION = \"1\"\nTYPE = \"CONFIGURATION\"\nCONFIG = {}\nCONFIG[\"SETTINGS\"] = {}\nCONFIG[\"DATA_SOURCES\"] = {}\n"+
		`CONFIG["DATA_SOURCES"][1] = { ["Id"] = "notes", ["Name"] = "Notes", ["Type"] = "LOCAL_DIRECTORY", ["Path"] = "/home/me/notes" }`+"\n"), 0o644)
	a, err := Open(context.Background(), Options{ConfigDir: cfg, DataDir: filepath.Join(dir, "data"), Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	s, _ := a.DataSources()
	if len(s) != 1 || s[0].Org || s[0].Plugin != "Mine" {
		t.Fatalf("%+v", s)
	}
	if err := a.RemoveSource(context.Background(), "notes"); err == nil || !strings.Contains(err.Error(), "local plugin") {
		t.Fatalf("%v", err)
	}
}
