package webpage

import (
	"context"
	"strings"
	"testing"

	"github.com/stewardhq/steward/tool"
)

func TestAllowedPrivateHosts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		list    string
		allowed []string
		denied  []string
		wantErr string
	}{
		{name: "empty allows nothing", list: "", denied: []string{"intranet.corp", "10.0.0.1"}},
		{name: "separators, case and trailing dot", list: " Intranet.Corp. \r\nwiki.corp;files.corp,\n\n10.1.2.3",
			allowed: []string{"intranet.corp", "wiki.corp", "files.corp", "10.1.2.3"}, denied: []string{"corp", "x.intranet.corp", "10.1.2.4"}},
		{name: "wildcard matches subdomains, not the apex", list: "*.corp.example",
			allowed: []string{"a.corp.example", "b.a.corp.example"}, denied: []string{"corp.example", "evilcorp.example", "corp.example.evil"}},
		{name: "IPv6 with and without brackets", list: "fd00::1;[fd00::2]", allowed: []string{"fd00::1", "fd00::2"}, denied: []string{"fd00::3"}},
		{name: "IDN host is compared in punycode", list: "bücher.corp", allowed: []string{"xn--bcher-kva.corp"}},
		{name: "scheme refused", list: "https://intranet.corp", wantErr: "not an address with a scheme or a path"},
		{name: "path refused", list: "intranet.corp/wiki", wantErr: "not an address with a scheme or a path"},
		{name: "port refused", list: "intranet.corp:8080", wantErr: "not a valid host name"},
		{name: "wildcard in the middle refused", list: "a.*.corp", wantErr: "not a valid host name"},
		{name: "wildcard before an IP refused", list: "*.10.0.0.1", wantErr: "\"*.\" only goes before a host name"},
		{name: "bad label refused", list: "-bad.corp", wantErr: "entry 1"},
		{name: "second entry named", list: "ok.corp;under_score.corp", wantErr: "entry 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c0, err := parseConfig(tool.Settings{SettingAllowedPrivateHosts: c.list})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range c.allowed {
				if !c0.isAllowed(h) {
					t.Errorf("%q should be allowed", h)
				}
			}
			for _, h := range c.denied {
				if c0.isAllowed(h) {
					t.Errorf("%q should not be allowed", h)
				}
			}
		})
	}
}

func TestValidateConfiguration(t *testing.T) {
	t.Parallel()
	tl := New(Deps{})
	cases := []struct {
		name    string
		s       tool.Settings
		wantErr string
	}{
		{"defaults", tool.Settings{}, ""},
		{"maximums", tool.Settings{SettingTimeoutSeconds: "240", SettingMaxContentCharacters: "100000", SettingFreeAddressChoice: "ON"}, ""},
		{"timeout zero", tool.Settings{SettingTimeoutSeconds: "0"}, "timeoutSeconds must be a whole number from 1 to 240"},
		{"timeout too long", tool.Settings{SettingTimeoutSeconds: "241"}, "from 1 to 240"},
		{"timeout not a number", tool.Settings{SettingTimeoutSeconds: "1m"}, "from 1 to 240"},
		{"characters too many", tool.Settings{SettingMaxContentCharacters: "100001"}, "maxContentCharacters must be a whole number from 1 to 100000"},
		{"free choice lower case", tool.Settings{SettingFreeAddressChoice: "on"}, "must be OFF or ON"},
		{"free choice old name", tool.Settings{SettingFreeAddressChoice: "BRAVE"}, "read as OFF"},
		{"allowlist", tool.Settings{SettingAllowedPrivateHosts: "http://x"}, "allowedPrivateHosts"},
		{"sign-in OFF", tool.Settings{SettingUseOsSignIn: OsSignInOff}, ""},
		{"sign-in lower case", tool.Settings{SettingUseOsSignIn: "on"}, "useOsSignIn must be OFF or ON"},
		{"sign-in ON without a sign-in in this installation", tool.Settings{SettingUseOsSignIn: OsSignInOn}, "offers no operating-system sign-in"},
	}
	for _, c := range cases {
		err := tl.ValidateConfiguration(context.Background(), c.s)
		if c.wantErr == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%s: error = %v, want %q", c.name, err, c.wantErr)
		}
	}
	// An unreadable choice counts as OFF at run time.
	c, _ := parseConfig(tool.Settings{SettingFreeAddressChoice: "yes"})
	if c.freeChoice {
		t.Error("an unreadable free address choice must count as OFF")
	}
}

func FuzzAllowedPrivateHosts(f *testing.F) {
	for _, s := range []string{"intranet.corp", "*.corp.example;10.0.0.1", "[fd00::1]\nwiki.", "https://x/y", "bücher.corp", "*.*.x", ",;\r\n", "a..b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		hosts, err := parseAllowedHosts(list)
		if err != nil {
			return
		}
		c := config{allowed: hosts}
		for _, p := range hosts {
			if p.host == "" || strings.ContainsAny(p.host, "/*@ ") {
				t.Fatalf("entry %+v of %q is no host", p, list)
			}
			if p.subdomains {
				if c.isAllowed(p.host) {
					t.Fatalf("*.%s allows its apex", p.host)
				}
				if !c.isAllowed("sub." + p.host) {
					t.Fatalf("*.%s does not allow a subdomain", p.host)
				}
			} else if !c.isAllowed(p.host) {
				t.Fatalf("%s is not allowed although listed", p.host)
			}
		}
	})
}
