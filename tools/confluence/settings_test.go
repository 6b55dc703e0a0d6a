package confluence

import (
	"context"
	"strings"
	"testing"

	"github.com/stewardhq/steward/tool"
)

func TestParseBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://wiki.example.org":              "https://wiki.example.org/",
		" https://Wiki.Example.org/confluence ": "https://wiki.example.org/confluence/",
		"https://example.atlassian.net/wiki/":   "https://example.atlassian.net/wiki/",
		"https://wiki.example.org:8443/c":       "https://wiki.example.org:8443/c/",
		"http://wiki.example.org/":              "!https",
		"https://user:pw@wiki.example.org/":     "!user name",
		"https://wiki.example.org/?x=1":         "!query",
		"https://wiki.example.org/?":            "!query",
		"https://wiki.example.org/#top":         "!fragment",
		"https://wiki.example.org/#":            "!fragment",
		"wiki.example.org":                      "!absolute",
		"https:///confluence":                   "!absolute",
		"https://wiki.example.org/a/../b":       "!segments",
		"https://wiki.example.org/%2e%2e/b":     "!segments",
		"https://wiki.example.org:99999/":       "!port",
		"https://wiki example.org/":             "!spaces",
		"":                                      "!empty",
	} {
		u, err := ParseBaseURL(in)
		switch {
		case strings.HasPrefix(want, "!"):
			if err == nil || !strings.Contains(err.Error(), want[1:]) {
				t.Errorf("ParseBaseURL(%q) = %v, %v; want an error about %s", in, u, err, want[1:])
			}
			if err != nil && strings.Contains(err.Error(), "pw") {
				t.Errorf("the error repeats the password: %v", err)
			}
		case err != nil || u.String() != want:
			t.Errorf("ParseBaseURL(%q) = %v, %v; want %s", in, u, err, want)
		}
	}
}

func TestValidateConfigurationNamesTheField(t *testing.T) {
	dc := tool.Settings{SettingBaseURL: "https://wiki.example.org/"}
	cloud := tool.Settings{SettingBaseURL: "https://acme.atlassian.net/wiki/", SettingMode: ModeREST, SettingEmail: email, SettingAPIToken: apiToken}
	dcREST := tool.Settings{SettingBaseURL: "https://wiki.example.org/", SettingMode: ModeREST, SettingPersonalAccessToken: pat}
	cases := []struct {
		name string
		s    tool.Settings
		want []string // each in the error; none means valid
	}{
		{"search page", dc, nil},
		{"cloud", cloud, nil},
		{"cloud scoped", merge(cloud, tool.Settings{SettingCloudID: cloudID}), nil},
		{"data center REST", dcREST, nil},
		{"gateway", merge(dcREST, tool.Settings{SettingAPIBaseURL: "https://gw.example.org/confluence/"}), nil},
		{"all numbers", merge(dc, tool.Settings{SettingTimeoutSeconds: "120", SettingMaxContentCharacters: "1000", SettingPageBodies: "0", SettingUseOsSignIn: "OFF", SettingDefaultSpaceKey: "~jdoe"}), nil},
		{"no base", tool.Settings{}, []string{"search_confluence.baseUrl is missing"}},
		{"http base", tool.Settings{SettingBaseURL: "http://wiki.example.org/"}, []string{"search_confluence.baseUrl", "https://"}},
		{"mode", merge(dc, tool.Settings{SettingMode: "rest"}), []string{"search_confluence.mode", "SEARCH_PAGE", "REST"}},
		{"cloud has no search page", tool.Settings{SettingBaseURL: "https://acme.atlassian.net/wiki/"}, []string{"search_confluence.mode", "Cloud has no search page"}},
		{"token in page mode", merge(dc, tool.Settings{SettingPersonalAccessToken: pat}), []string{"search_confluence.personalAccessToken is set", "never uses it"}},
		{"REST without credential", merge(dc, tool.Settings{SettingMode: ModeREST}), []string{"needs a credential", "search_confluence.personalAccessToken", "search_confluence.apiToken"}},
		{"email without token", merge(cloud, tool.Settings{SettingAPIToken: ""}), []string{"search_confluence.apiToken is missing"}},
		{"token without email", merge(cloud, tool.Settings{SettingEmail: ""}), []string{"search_confluence.email is missing"}},
		{"both credentials", merge(cloud, tool.Settings{SettingPersonalAccessToken: pat}), []string{"not both"}},
		{"PAT on cloud", tool.Settings{SettingBaseURL: "https://acme.atlassian.net/wiki/", SettingMode: ModeREST, SettingPersonalAccessToken: pat}, []string{"search_confluence.personalAccessToken is for Data Center"}},
		{"cloud without /wiki", merge(cloud, tool.Settings{SettingBaseURL: "https://acme.atlassian.net/"}), []string{"end in /wiki/"}},
		{"bad email", merge(cloud, tool.Settings{SettingEmail: "jane"}), []string{"search_confluence.email must be"}},
		{"bad cloud id", merge(cloud, tool.Settings{SettingCloudID: "acme"}), []string{"search_confluence.cloudId must be"}},
		{"cloud id with PAT", merge(dcREST, tool.Settings{SettingCloudID: cloudID}), []string{"search_confluence.cloudId is for scoped"}},
		{"token with a line break", merge(cloud, tool.Settings{SettingAPIToken: apiToken + "\n"}), nil}, // trimmed
		{"token with a space", merge(cloud, tool.Settings{SettingAPIToken: "ATATT3 x"}), []string{"search_confluence.apiToken contains spaces"}},
		{"bad gateway", merge(dcREST, tool.Settings{SettingAPIBaseURL: "https://gw.example.org/?k=v"}), []string{"search_confluence.apiBaseUrl", "query"}},
		{"timeout", merge(dc, tool.Settings{SettingTimeoutSeconds: "121"}), []string{"search_confluence.timeoutSeconds", "1 to 120"}},
		{"budget", merge(dc, tool.Settings{SettingMaxContentCharacters: "10"}), []string{"search_confluence.maxContentCharacters", "1000 to 100000"}},
		{"bodies", merge(dc, tool.Settings{SettingPageBodies: "6"}), []string{"search_confluence.pageBodies", "0 to 5"}},
		{"sign-in", merge(dc, tool.Settings{SettingUseOsSignIn: "yes"}), []string{"search_confluence.useOsSignIn"}},
		{"space key", merge(dc, tool.Settings{SettingDefaultSpaceKey: "A\tB"}), []string{"search_confluence.defaultSpaceKey"}},
	}
	tl := New(Deps{})
	for _, c := range cases {
		err := tl.ValidateConfiguration(context.Background(), c.s)
		if len(c.want) == 0 {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", c.name, err, w)
			}
		}
		assertNoSecret(t, c.name, err.Error())
	}
}

func TestDefinitionIsConsistent(t *testing.T) {
	d := Definition()
	for _, name := range []string{SettingBaseURL, SettingMode, SettingEmail, SettingAPIToken, SettingPersonalAccessToken, SettingCloudID,
		SettingAPIBaseURL, SettingDefaultSpaceKey, SettingTimeoutSeconds, SettingMaxContentCharacters, SettingPageBodies, SettingUseOsSignIn} {
		f, ok := d.Settings.Field(name)
		if !ok || f.Description == "" {
			t.Errorf("setting %s is not documented", name)
		}
		if f.Secret != (name == SettingAPIToken || name == SettingPersonalAccessToken) {
			t.Errorf("setting %s secret %v", name, f.Secret)
		}
	}
	if BaseURLKey != "search_confluence.baseUrl" || d.MinimumConfidence.String() != "HIGH" {
		t.Fatal(BaseURLKey, d.MinimumConfidence)
	}
	if got := New(Deps{}).SensitiveArguments(); len(got) != 1 || got[0] != ArgQuery {
		t.Fatal(got)
	}
	if New(Deps{}).OutboundData().String() != "CONFIGURED_SERVICE" {
		t.Fatal(New(Deps{}).OutboundData())
	}
}
