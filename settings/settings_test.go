package settings

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
)

const secretValue = "s3cr3t-value-never-shown"

// keyring is an in-memory SecretStore which records what was read.
type keyring struct {
	secrets map[string]string // Key(tool, field)
	err     error
	reads   []string
}

func (k *keyring) ToolSecret(_ context.Context, toolID, field string) (string, bool, error) {
	k.reads = append(k.reads, Key(toolID, field))
	if k.err != nil {
		return "", false, k.err
	}
	v, ok := k.secrets[Key(toolID, field)]
	return v, ok, nil
}

func schemaDef() tool.Definition {
	return tool.Definition{
		ID: "wiki",
		Settings: tool.SettingsSchema{
			Fields: []tool.SettingField{
				{Name: "baseUrl"},
				{Name: "space"},
				{Name: "token", Secret: true},
			},
			Required: []string{"baseUrl", "token"},
		},
	}
}

func TestKey(t *testing.T) {
	if got := Key("read_web_page", "freeAddressChoice"); got != "read_web_page.freeAddressChoice" {
		t.Fatalf("Key = %q", got)
	}
}

// "a locked organization value, then the user's saved value, then an
// organization default"
func TestResolvePrecedence(t *testing.T) {
	tests := []struct {
		name       string
		org        Org
		user       User
		want       string
		wantOrigin Origin
		wantBy     string
	}{
		{name: "nothing set", wantOrigin: OriginNone},
		{name: "org default only", org: Org{Defaults: map[string]string{"wiki.space": "DEF"}}, want: "DEF", wantOrigin: OriginDefault},
		{name: "user beats default", org: Org{Defaults: map[string]string{"wiki.space": "DEF"}}, user: User{"wiki": {"space": "MINE"}}, want: "MINE", wantOrigin: OriginUser},
		{name: "blank user value falls back to default", org: Org{Defaults: map[string]string{"wiki.space": "DEF"}}, user: User{"wiki": {"space": "  "}}, want: "DEF", wantOrigin: OriginDefault},
		{name: "locked beats user and default",
			org:  Org{Locked: map[string]LockedValue{"wiki.space": {Value: "ORG", Plugin: "Acme IT"}}, Defaults: map[string]string{"wiki.space": "DEF"}},
			user: User{"wiki": {"space": "MINE"}}, want: "ORG", wantOrigin: OriginLocked, wantBy: "Acme IT"},
		{name: "a locked value of another tool does not apply",
			org:  Org{Locked: map[string]LockedValue{"other.space": {Value: "ORG"}}},
			user: User{"wiki": {"space": "MINE"}}, want: "MINE", wantOrigin: OriginUser},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Resolver{Org: tt.org, User: tt.user}
			res, err := r.Resolve(context.Background(), schemaDef())
			if err != nil {
				t.Fatal(err)
			}
			f, ok := res.Field("space")
			if !ok {
				t.Fatal("field space missing")
			}
			if f.Value != tt.want || f.Origin != tt.wantOrigin || f.LockedBy != tt.wantBy {
				t.Fatalf("got %q from %v by %q, want %q from %v by %q", f.Value, f.Origin, f.LockedBy, tt.want, tt.wantOrigin, tt.wantBy)
			}
			if got := res.Values().Get("space"); got != tt.want {
				t.Fatalf("Values()[space] = %q, want %q", got, tt.want)
			}
		})
	}
}

// "Secrets never take an organization default"; a locked secret arrives
// decrypted or invalid, and an invalid one leaves the field empty without
// reading the user's own secret.
func TestResolveSecrets(t *testing.T) {
	tests := []struct {
		name      string
		org       Org
		user      User
		stored    map[string]string
		want      string
		origin    Origin
		invalid   bool
		wantReads int
	}{
		{name: "from the keyring", stored: map[string]string{"wiki.token": secretValue}, want: secretValue, origin: OriginKeyring, wantReads: 1},
		{name: "no org default for a secret", org: Org{Defaults: map[string]string{"wiki.token": "default-token"}}, origin: OriginNone, wantReads: 1},
		{name: "a saved plain value is no secret", user: User{"wiki": {"token": "plain"}}, origin: OriginNone, wantReads: 1},
		{name: "locked decrypted secret wins", org: Org{Locked: map[string]LockedValue{"wiki.token": {Value: "org-token", Plugin: "p"}}},
			stored: map[string]string{"wiki.token": secretValue}, want: "org-token", origin: OriginLocked, wantReads: 0},
		{name: "invalid locked secret leaves it empty and the keyring unread", org: Org{Locked: map[string]LockedValue{"wiki.token": {Value: "ENC:v1:garbage", Plugin: "p", Invalid: true}}},
			stored: map[string]string{"wiki.token": secretValue}, origin: OriginLocked, invalid: true, wantReads: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := &keyring{secrets: tt.stored}
			r := &Resolver{Org: tt.org, User: tt.user, Secrets: k}
			res, err := r.Resolve(context.Background(), schemaDef())
			if err != nil {
				t.Fatal(err)
			}
			f, _ := res.Field("token")
			if f.Value != tt.want || f.Origin != tt.origin || f.Invalid != tt.invalid {
				t.Fatalf("got value=%q origin=%v invalid=%v", f.Value, f.Origin, f.Invalid)
			}
			if len(k.reads) != tt.wantReads {
				t.Fatalf("keyring reads %v, want %d", k.reads, tt.wantReads)
			}
			if strings.Contains(res.String(), secretValue) || strings.Contains(f.String(), secretValue) {
				t.Fatalf("String shows the secret: %s", res.String())
			}
		})
	}
}

func TestResolveKeyringFailure(t *testing.T) {
	k := &keyring{err: errors.New("keyring locked")}
	r := &Resolver{User: User{"wiki": {"baseUrl": "https://wiki.example"}}, Secrets: k}
	res, err := r.Resolve(context.Background(), schemaDef())
	if err == nil {
		t.Fatal("want an error")
	}
	if !errors.Is(err, k.err) || !strings.Contains(err.Error(), `"token"`) || !strings.Contains(err.Error(), `"wiki"`) {
		t.Fatalf("error should wrap the cause and name field and tool: %v", err)
	}
	if res.Values().Get("baseUrl") != "https://wiki.example" {
		t.Fatal("the other fields must still resolve")
	}
	st := Check(context.Background(), validating{Base: tool.Base{Def: schemaDef()}}, schemaDef(), res, err)
	if st.Configured() || len(st.Missing) != 1 || st.Missing[0] != "token" {
		t.Fatalf("state = %+v", st)
	}
}

func TestNilResolver(t *testing.T) {
	var r *Resolver
	res, err := r.Resolve(context.Background(), schemaDef())
	if err != nil || len(res.Fields) != 3 || len(res.Values()) != 0 {
		t.Fatalf("res=%v err=%v", res, err)
	}
}

type validating struct {
	tool.Base
	check func(tool.Settings) error
}

func (validating) Execute(context.Context, json.RawMessage, tool.ExecContext) (tool.Result, error) {
	return tool.Result{}, nil
}

func (v validating) ValidateConfiguration(_ context.Context, s tool.Settings) error {
	return v.check(s)
}

// "A required setting that is missing makes the tool not configured and
// names the missing fields"; otherwise the tool's own check; otherwise
// configured.
func TestState(t *testing.T) {
	objection := errors.New("baseUrl must start with https://")
	tests := []struct {
		name    string
		user    User
		stored  map[string]string
		check   func(tool.Settings) error
		missing []string
		problem bool
		text    string
	}{
		{name: "all required missing", check: func(tool.Settings) error { t.Fatal("validation ran"); return nil },
			missing: []string{"baseUrl", "token"}, text: "baseUrl, token are missing"},
		{name: "blank counts as missing", user: User{"wiki": {"baseUrl": " "}}, stored: map[string]string{"wiki.token": "x"},
			check: func(tool.Settings) error { return nil }, missing: []string{"baseUrl"}, text: "setting baseUrl is missing"},
		{name: "tool objects", user: User{"wiki": {"baseUrl": "http://x"}}, stored: map[string]string{"wiki.token": "x"},
			check: func(tool.Settings) error { return objection }, problem: true, text: "must start with https"},
		{name: "tool panics", user: User{"wiki": {"baseUrl": "http://x"}}, stored: map[string]string{"wiki.token": secretValue},
			check: func(s tool.Settings) error { panic("boom " + s.Get("token")) }, problem: true, text: "failed unexpectedly"},
		{name: "configured", user: User{"wiki": {"baseUrl": "https://x"}}, stored: map[string]string{"wiki.token": "x"},
			check: func(tool.Settings) error { return nil }, text: "configured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Resolver{User: tt.user, Secrets: &keyring{secrets: tt.stored}}
			_, st := r.State(context.Background(), validating{Base: tool.Base{Def: schemaDef()}, check: tt.check})
			if !slices.Equal(st.Missing, tt.missing) || (st.Problem != nil) != tt.problem {
				t.Fatalf("state = %+v", st)
			}
			if st.Configured() != (tt.missing == nil && !tt.problem) {
				t.Fatalf("Configured() = %v", st.Configured())
			}
			if !strings.Contains(st.String(), tt.text) || strings.Contains(st.String(), secretValue) {
				t.Fatalf("String() = %q, want it to contain %q and no secret", st.String(), tt.text)
			}
		})
	}
}

func TestPolicyActive(t *testing.T) {
	p := Policy{DisabledIDs: []string{"mailboxes"}}
	if !p.ToolsOn() || p.Active("mailboxes", "search_mails") || !p.Active("web_search") {
		t.Fatal("disabled IDs not applied")
	}
	p = Policy{DisabledIDs: []string{"read_mail"}}
	if p.Active("mailboxes", "search_mails", "read_mail", "count_mails") {
		t.Fatal("naming one tool of a collection switches the whole collection off")
	}
	p = Policy{ToolsOff: true}
	if p.ToolsOn() || p.Active("web_search") {
		t.Fatal("tools off must make nothing active")
	}
}

// Locked org value (valid wins, invalid counts as HIGH), then the user's
// override, then the declared default; of several, the highest wins.
func TestMinimumConfidence(t *testing.T) {
	ids := []string{"mailboxes", "search_mails", "read_mail"}
	locked := func(m map[string]LockedValue) ConfidenceOverrides { return ConfidenceOverrides{Locked: m} }
	tests := []struct {
		name     string
		conf     ConfidenceOverrides
		declared policy.Confidence
		want     policy.Confidence
		origin   Origin
		by       string
	}{
		{name: "declared default", declared: policy.VeryLow, want: policy.VeryLow, origin: OriginDeclared},
		{name: "user override below the default", conf: ConfidenceOverrides{User: map[string]policy.Confidence{"mailboxes": policy.Untrusted}}, declared: policy.VeryLow, want: policy.Untrusted, origin: OriginUser},
		{name: "highest user entry wins", conf: ConfidenceOverrides{User: map[string]policy.Confidence{"mailboxes": policy.Low, "read_mail": policy.Medium}}, want: policy.Medium, origin: OriginUser},
		{name: "undefined user level ignored", conf: ConfidenceOverrides{User: map[string]policy.Confidence{"mailboxes": 42}}, declared: policy.Low, want: policy.Low, origin: OriginDeclared},
		{name: "locked wins over user", conf: ConfidenceOverrides{Locked: map[string]LockedValue{"search_mails": {Value: "low", Plugin: "Acme"}}, User: map[string]policy.Confidence{"mailboxes": policy.High}}, want: policy.Low, origin: OriginLocked, by: "Acme"},
		{name: "locked unreadable is HIGH", conf: locked(map[string]LockedValue{"mailboxes": {Value: "SUPER"}}), want: policy.High, origin: OriginLocked},
		{name: "locked UNKNOWN is HIGH", conf: locked(map[string]LockedValue{"mailboxes": {Value: "UNKNOWN"}}), want: policy.High, origin: OriginLocked},
		{name: "locked invalid is HIGH", conf: locked(map[string]LockedValue{"mailboxes": {Value: "LOW", Invalid: true}}), want: policy.High, origin: OriginLocked},
		{name: "highest locked entry wins", conf: locked(map[string]LockedValue{"mailboxes": {Value: "LOW", Plugin: "a"}, "read_mail": {Value: "MEDIUM", Plugin: "b"}}), want: policy.Medium, origin: OriginLocked, by: "b"},
		{name: "locked NONE is a valid level", conf: locked(map[string]LockedValue{"mailboxes": {Value: "NONE"}}), declared: policy.High, want: policy.None, origin: OriginLocked},
		{name: "entries of other IDs do not apply", conf: ConfidenceOverrides{Locked: map[string]LockedValue{"web_search": {Value: "HIGH"}}}, declared: policy.Low, want: policy.Low, origin: OriginDeclared},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := Policy{Confidence: tt.conf}.MinimumConfidence(ids, tt.declared)
			if m.Level != tt.want || m.Origin != tt.origin || m.LockedBy != tt.by {
				t.Fatalf("got %+v, want %v from %v by %q", m, tt.want, tt.origin, tt.by)
			}
		})
	}
}

func TestPreviewEnabled(t *testing.T) {
	p := Policy{Previews: []string{" pre_rag_2024 "}}
	tests := []struct {
		feature string
		want    bool
	}{
		{PreviewRAG, true},
		{PreviewMailboxes, false},
		{"PRE_READ_PDF_2025", true},
		{"PRE_WRITER_MODE_2024", false},
	}
	for _, tt := range tests {
		if got := p.PreviewEnabled(tt.feature); got != tt.want {
			t.Errorf("PreviewEnabled(%s) = %v", tt.feature, got)
		}
	}
}

func TestOrgLockedBy(t *testing.T) {
	o := Org{Locked: map[string]LockedValue{"wiki.url": {Value: "x", Plugin: "Acme IT"}}}
	if p, ok := o.LockedBy("wiki", "url"); !ok || p != "Acme IT" {
		t.Fatalf("got %q %v", p, ok)
	}
	if _, ok := o.LockedBy("wiki", "space"); ok {
		t.Fatal("space is not locked")
	}
}

func TestFieldString(t *testing.T) {
	tests := []struct {
		f    Field
		want string
	}{
		{Field{Name: "url", Value: "https://x", Origin: OriginUser}, `url="https://x" [saved by the user]`},
		{Field{Name: "url", Value: "https://org", Origin: OriginLocked, LockedBy: "Acme"}, `url="https://org" [locked by the organization by Acme]`},
		{Field{Name: "token", Value: secretValue, Secret: true, Origin: OriginKeyring}, `token=(secret set) [keyring]`},
		{Field{Name: "token", Secret: true}, `token=(secret not set) [not set]`},
		{Field{Name: "token", Secret: true, Invalid: true, Origin: OriginLocked}, `token=(locked secret unusable) [locked by the organization]`},
		{Field{Name: "space", Origin: OriginDefault}, `space="" [organization default]`},
	}
	for _, tt := range tests {
		if got := tt.f.String(); got != tt.want {
			t.Errorf("got %s, want %s", got, tt.want)
		}
	}
	// A hand-built resolution still lists its values.
	r := Resolved{ToolID: "wiki", Fields: []Field{{Name: "url", Value: "u"}, {Name: "space"}}}
	if v := r.Values(); len(v) != 1 || v.Get("url") != "u" {
		t.Fatalf("values %v", v)
	}
	if _, ok := r.Field("nope"); ok {
		t.Fatal("Field(nope)")
	}
}
