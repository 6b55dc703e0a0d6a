package mailbox

import (
	"strings"
	"testing"

	"github.com/stewardhq/steward/policy"
)

func validConfig() Config {
	return Config{ID: "work", Name: "Work", Host: "imap.example.org", Port: 993, Security: SecurityTLS, Auth: AuthPassword,
		Username: "me", SecretRef: "mail/work", RequiredConfidence: policy.Medium, Outbound: policy.OnlyLinksFromChat}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Config)
		want string // "" = valid
	}{
		{"valid", func(*Config) {}, ""},
		{"starttls", func(c *Config) { c.Security = SecurityStartTLS; c.Port = 143 }, ""},
		{"plain to loopback", func(c *Config) { c.Security = SecurityPlainLoopback; c.Host = "127.0.0.1" }, ""},
		{"plain to ::1", func(c *Config) { c.Security = SecurityPlainLoopback; c.Host = "::1" }, ""},
		{"plain to localhost name", func(c *Config) { c.Security = SecurityPlainLoopback; c.Host = "localhost" }, "only allowed for 127.0.0.0/8"},
		{"plain to remote", func(c *Config) { c.Security = SecurityPlainLoopback }, "use tls or starttls"},
		{"no security", func(c *Config) { c.Security = "" }, "security"},
		{"empty id", func(c *Config) { c.ID = "" }, "mailbox ID"},
		{"id with slash", func(c *Config) { c.ID = "a/b" }, "mailbox ID"},
		{"no host", func(c *Config) { c.Host = " " }, "host is empty"},
		{"bad port", func(c *Config) { c.Port = 0 }, "port 0"},
		{"bad auth", func(c *Config) { c.Auth = "kerberos" }, "sign-in kind"},
		{"xoauth2", func(c *Config) { c.Auth = AuthXOAuth2 }, ""},
		{"no user", func(c *Config) { c.Username = "" }, "user name"},
		{"no secret", func(c *Config) { c.SecretRef = "" }, "secret reference"},
		{"bad confidence", func(c *Config) { c.RequiredConfidence = 42 }, "required confidence"},
		{"bad outbound", func(c *Config) { c.Outbound = 7 }, "outbound restriction"},
		{"long folder", func(c *Config) { c.Folders = []string{strings.Repeat("x", 501)} }, "folder name"},
		{"bad embedding", func(c *Config) { c.Embedding = &Embedding{Kind: "cohere"} }, "embedding kind"},
		{"embedding url", func(c *Config) {
			c.Embedding = &Embedding{Kind: EmbeddingOllama, BaseURL: "ftp://x", Model: "m", Provider: "SELF_HOSTED"}
		}, "base URL"},
		{"embedding ok", func(c *Config) {
			c.Embedding = &Embedding{Kind: EmbeddingOllama, BaseURL: "http://127.0.0.1:11434/", Model: "m", Provider: "SELF_HOSTED"}
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := validConfig()
			tc.edit(&c)
			err := c.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestClosed(t *testing.T) {
	for _, l := range policy.Levels() {
		c := validConfig()
		c.RequiredConfidence = l
		want := l < policy.VeryLow
		if c.Closed() != want {
			t.Errorf("%v: closed = %v, want %v", l, c.Closed(), want)
		}
	}
}

func TestServerPolicy(t *testing.T) {
	tests := []struct {
		name string
		p    ServerPolicy
		host string
		want bool
	}{
		{"no rule allows any", ServerPolicy{}, "imap.anything.example", true},
		{"empty list allows none", ServerPolicy{Set: true}, "imap.example.org", false},
		{"listed", ServerPolicy{Set: true, Hosts: []string{"imap.example.org"}}, "imap.example.org", true},
		{"case", ServerPolicy{Set: true, Hosts: []string{"IMAP.Example.ORG"}}, "imap.example.org.", true},
		{"idn unicode vs punycode", ServerPolicy{Set: true, Hosts: []string{"imap.bücher.example"}}, "imap.xn--bcher-kva.example", true},
		{"idn upper unicode", ServerPolicy{Set: true, Hosts: []string{"xn--bcher-kva.example"}}, "BÜCHER.example", true},
		{"other host", ServerPolicy{Set: true, Hosts: []string{"imap.example.org"}}, "imap.example.org.evil.example", false},
		{"ip", ServerPolicy{Set: true, Hosts: []string{"127.0.0.1"}}, "127.0.0.1", true},
	}
	for _, tc := range tests {
		if got := tc.p.Allows(tc.host); got != tc.want {
			t.Errorf("%s: Allows(%q) = %v, want %v", tc.name, tc.host, got, tc.want)
		}
	}
}

func TestOrgOutbound(t *testing.T) {
	strict := policy.OnlyConfiguredServices
	links := policy.OnlyLinksFromChat
	tests := []struct {
		own  policy.Restriction
		min  *policy.Restriction
		want policy.Restriction
	}{
		{policy.Unrestricted, nil, policy.Unrestricted},
		{policy.Unrestricted, &links, policy.OnlyLinksFromChat},
		{policy.OnlyConfiguredServices, &links, policy.OnlyConfiguredServices},
		{policy.OnlyLinksFromChat, &strict, policy.OnlyConfiguredServices},
	}
	for _, tc := range tests {
		c := validConfig()
		c.Outbound = tc.own
		if got := (OrgPolicy{MinimumOutbound: tc.min}).Outbound(c); got != tc.want {
			t.Errorf("own %v min %v: %v, want %v", tc.own, tc.min, got, tc.want)
		}
	}
}

func TestParseNames(t *testing.T) {
	if s, err := ParseSecurity("STARTTLS"); err != nil || s != SecurityStartTLS {
		t.Errorf("%v %v", s, err)
	}
	if _, err := ParseSecurity("plain"); err == nil {
		t.Error("plain accepted")
	}
	if a, err := ParseAuthKind("XOAUTH2"); err != nil || a != AuthXOAuth2 {
		t.Errorf("%v %v", a, err)
	}
	if _, err := ParseAuthKind("cram-md5"); err == nil {
		t.Error("cram-md5 accepted")
	}
}
