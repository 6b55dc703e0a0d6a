package config

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/stewardhq/steward/policy"
)

// view is what the merged configuration says about where data may go, on
// a fixed sample of providers, tools, hosts and mailboxes.
type view struct {
	providerLevel map[string]policy.Confidence // per scheme name; lower is stricter
	globalMin     policy.Confidence            // higher is stricter
	toolsOn       bool                         // off is stricter
	disabled      map[string]bool              // more is stricter
	toolMin       map[string]policy.Confidence // higher is stricter
	serversSet    bool
	servers       map[string]bool // fewer is stricter (when set)
	outboundSet   bool
	outbound      policy.Restriction // lower is stricter
	trusted       map[string]bool    // fewer is stricter
	mailboxes     map[string]MailboxConfig
	providers     map[string]ProviderConfig
}

var (
	sampleProviders = []string{"OPEN_AI", "ANTHROPIC", "MISTRAL", "DEEP_SEEK", "SELF_HOSTED", "GROQ"}
	sampleTools     = []string{"web_search", "read_web_page", "mailboxes", "search_mails"}
	sampleHosts     = []string{"imap.example.org", "mail.evil.example", "127.0.0.1"}
)

func viewOf(e *Effective) view {
	v := view{providerLevel: map[string]policy.Confidence{}, disabled: map[string]bool{}, toolMin: map[string]policy.Confidence{},
		servers: map[string]bool{}, trusted: map[string]bool{}, mailboxes: map[string]MailboxConfig{}, providers: map[string]ProviderConfig{}}
	sc := e.Scheme()
	for _, p := range sampleProviders {
		v.providerLevel[p] = sc.ProviderConfidence(p)
	}
	v.globalMin = e.GlobalMinimum()
	v.toolsOn, _ = e.ToolsEnabled()
	dis := e.StringList("DataTools.DisabledToolIds")
	levels, m, hasLevels := e.MinimumConfidenceByID()
	for _, id := range sampleTools {
		v.disabled[id] = slices.Contains(dis, id) || slices.Contains(dis, "*")
		if !hasLevels {
			continue
		}
		for _, k := range []string{id, "*"} {
			lv, ok := levels[k]
			if !ok {
				continue
			}
			c, err := policy.ParseConfidence(lv)
			if err != nil || (m.Locked && c == policy.Unknown) {
				c = policy.High
			}
			v.toolMin[id] = policy.Max(v.toolMin[id], c)
		}
	}
	if _, ok := e.Settings["DataMailboxes.AllowedServers"]; ok {
		v.serversSet = true
		hosts := e.StringList("DataMailboxes.AllowedServers")
		for _, h := range sampleHosts {
			v.servers[h] = slices.Contains(hosts, h)
		}
	}
	if m, ok := e.Settings["DataMailboxes.MinimumOutboundDataRestriction"]; ok {
		v.outboundSet = true
		v.outbound, _ = policy.ParseRestriction(fmt.Sprint(m.Value))
	}
	for _, id := range e.StringList("DataSourceSecuritySettings.TrustedProviderIds") {
		v.trusted[id] = true
	}
	for _, mb := range e.Mailboxes {
		v.mailboxes[mb.ID] = mb
	}
	for _, p := range e.Providers {
		v.providers[p.ID] = p
	}
	return v
}

// looserThan lists where b allows more than a, on what the organization
// configuration org decides.
func looserThan(a, b view, org *Effective) []string {
	var out []string
	has := func(keys ...string) bool {
		for _, k := range keys {
			if m, ok := org.Settings[k]; ok && m.Org {
				return true
			}
		}
		return false
	}
	if has("DataConfidence.ConfidenceScheme", "DataConfidence.CustomConfidenceScheme") {
		for _, p := range sampleProviders {
			if b.providerLevel[p] > a.providerLevel[p] {
				out = append(out, fmt.Sprintf("provider %s: %v -> %v", p, a.providerLevel[p], b.providerLevel[p]))
			}
		}
	}
	if b.globalMin < a.globalMin {
		out = append(out, fmt.Sprintf("global minimum %v -> %v", a.globalMin, b.globalMin))
	}
	if has("DataTools.EnableTools") && b.toolsOn && !a.toolsOn {
		out = append(out, "tools switched on")
	}
	for _, id := range sampleTools {
		if a.disabled[id] && !b.disabled[id] {
			out = append(out, id+" switched on")
		}
		if b.toolMin[id] < a.toolMin[id] {
			out = append(out, fmt.Sprintf("%s minimum %v -> %v", id, a.toolMin[id], b.toolMin[id]))
		}
	}
	if a.serversSet {
		for _, h := range sampleHosts {
			if !b.serversSet || b.servers[h] && !a.servers[h] {
				out = append(out, "mail server "+h+" allowed")
			}
		}
	}
	if a.outboundSet && (!b.outboundSet || b.outbound > a.outbound) {
		out = append(out, fmt.Sprintf("mailbox restriction %v -> %v", a.outbound, b.outbound))
	}
	if has("DataSourceSecuritySettings.TrustedProviderIds") {
		for id := range b.trusted {
			if !a.trusted[id] {
				out = append(out, "provider "+id+" trusted")
			}
		}
	}
	for id, mb := range a.mailboxes {
		if got := b.mailboxes[id]; fmt.Sprint(got) != fmt.Sprint(mb) {
			out = append(out, fmt.Sprintf("mailbox %s: %+v -> %+v", id, mb, got))
		}
	}
	for id, p := range a.providers {
		if got := b.providers[id]; fmt.Sprint(got) != fmt.Sprint(p) {
			out = append(out, fmt.Sprintf("provider %s redefined", id))
		}
	}
	return out
}

// securityValues are Lua values for each security setting, readable and
// not.
var securityValues = map[string][]string{
	"DataConfidence.ConfidenceScheme":               {`"TRUST_ALL"`, `"TRUST_EUROPE"`, `"LOCAL_TRUST_ONLY"`, `"CUSTOM"`, `"TRUST_EVERYONE"`, `7`, `{}`},
	"DataConfidence.CustomConfidenceScheme":         {`{ ["OPEN_AI"] = "HIGH" }`, `{ ["OPEN_AI"] = "LOW", ["MISTRAL"] = "HIHG" }`, `{ ["SELF_HOSTED"] = true }`, `"HIGH"`, `{}`},
	"DataConfidence.EnforceGlobalMinimumConfidence": {`true`, `false`, `"true"`, `1`},
	"DataConfidence.GlobalMinimumConfidence":        {`"HIGH"`, `"MEDIUM"`, `"NONE"`, `"HIHG"`, `300`},
	"DataTools.EnableTools":                         {`true`, `false`, `"false"`, `0`},
	"DataTools.DisabledToolIds":                     {`{ "web_search" }`, `{ "mailboxes", "read_web_page" }`, `{}`, `"web_search"`, `{ 1 }`},
	"DataTools.MinimumProviderConfidenceByToolId":   {`{ ["web_search"] = "HIGH" }`, `{ ["read_web_page"] = "MEDIUM", ["web_search"] = "SUPER" }`, `{ ["mailboxes"] = 5 }`, `"HIGH"`, `{}`},
	"DataMailboxes.AllowedServers":                  {`{ "imap.example.org" }`, `{}`, `"imap.example.org"`, `{ "127.0.0.1", 2 }`},
	"DataMailboxes.MinimumOutboundDataRestriction":  {`"ONLY_LINKS_FROM_CHAT"`, `"UNRESTRICTED"`, `"ONLY_CONFIGURED_SERVICES"`, `"ONLY_CONFIGURED_SERVICE"`, `false`},
	"DataSourceSecuritySettings.TrustedProviderIds": {`{ "company-llm" }`, `{ "openai" }`, `{}`, `"openai"`, `{ true }`},
}

func securityKeys() []string {
	keys := make([]string, 0, len(securityValues))
	for k := range securityValues {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func mailboxLua(id, level, outbound string) string {
	return fmt.Sprintf(`CONFIG["MAILBOXES"][#CONFIG["MAILBOXES"]+1] = { ["Id"] = %q, ["Name"] = "Box", ["Host"] = "imap.example.org", ["Username"] = "u", ["RequiredProviderConfidence"] = %q, ["OutboundDataRestriction"] = %q }`+"\n", id, level, outbound)
}

func genPluginBody(t *rapid.T, label string) string {
	var b strings.Builder
	b.WriteString("CONFIG[\"MAILBOXES\"] = {}\nCONFIG[\"LLM_PROVIDERS\"] = {}\n")
	for _, k := range securityKeys() {
		if rapid.Bool().Draw(t, label+" sets "+k) {
			v := rapid.SampledFrom(securityValues[k]).Draw(t, label+" "+k)
			fmt.Fprintf(&b, "CONFIG[\"SETTINGS\"][%q] = %s\n", k, v)
			if rapid.Bool().Draw(t, label+" editable "+k) {
				fmt.Fprintf(&b, "CONFIG[\"SETTINGS\"][%q] = true\n", k+".AllowUserOverride")
			}
		}
	}
	for _, id := range []string{"team", "office"} {
		if rapid.Bool().Draw(t, label+" mailbox "+id) {
			b.WriteString(mailboxLua(id, rapid.SampledFrom([]string{"VERY_LOW", "MEDIUM", "HIGH", "HIHG"}).Draw(t, label+" level "+id),
				rapid.SampledFrom([]string{"UNRESTRICTED", "ONLY_LINKS_FROM_CHAT", "ONLY_CONFIGURED_SERVICES", "NONE"}).Draw(t, label+" outbound "+id)))
		}
	}
	if rapid.Bool().Draw(t, label+" provider") {
		fmt.Fprintf(&b, `CONFIG["LLM_PROVIDERS"][1] = { ["Id"] = "company-llm", ["InstanceName"] = %q, ["UsedLLMProvider"] = %q, ["Host"] = "NONE", ["Model"] = { ["Id"] = "m" } }`+"\n",
			label, rapid.SampledFrom([]string{"OPEN_AI", "SELF_HOSTED", "DEEP_SEEK"}).Draw(t, label+" provider kind"))
	}
	return b.String()
}

func loadBodies(t *rapid.T, org, local string) (orgOnly, both *Effective) {
	root, err := os.MkdirTemp("", "steward-prop-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(root)
	write := func(group, id, body string) {
		dir := filepath.Join(root, "plugins", group, id)
		os.MkdirAll(dir, 0o755)
		src := strings.Replace(strings.Replace(header, "%s", id, 1), "%s", "Plugin "+id, 1) + body
		if err := os.WriteFile(filepath.Join(dir, "plugin.lua"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("org", "org", org)
	orgOnly, err = Load(context.Background(), root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	write("local", "local", local)
	both, err = Load(context.Background(), root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return orgOnly, both
}

// TestNoLocalSettingLoosensTheOrganization: whatever an organization
// plugin sets, readable or not, a local plugin with any settings and any
// redefinitions never allows more than the organization's configuration
// alone does (issue 17).
func TestNoLocalSettingLoosensTheOrganization(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		org := genPluginBody(t, "org")
		local := genPluginBody(t, "local")
		a, b := loadBodies(t, org, local)
		if loose := looserThan(viewOf(a), viewOf(b), a); len(loose) > 0 {
			t.Fatalf("the local plugin loosened the organization's configuration: %v\norg:\n%s\nlocal:\n%s", loose, org, local)
		}
	})
}

// TestUnreadableSecuritySettingCountsAsStrictest loads each unreadable
// value of each security setting and compares it with the setting's
// strictest value written out.
func TestUnreadableSecuritySettingCountsAsStrictest(t *testing.T) {
	for _, k := range securityKeys() {
		for _, v := range securityValues[k] {
			checkUnreadableIsStrictest(t, k, v)
		}
	}
}

// checkUnreadableIsStrictest loads CONFIG["SETTINGS"][key] = value; when the
// loader reports the value as unreadable, the result must equal that of the
// setting's strictest value, and the problem must name the setting and
// its line.
func checkUnreadableIsStrictest(t *testing.T, key, value string) {
	t.Helper()
	root := t.TempDir()
	file := writePlugin(t, root, "org", "it", fmt.Sprintf("CONFIG[\"SETTINGS\"][%q] = %s\n", key, value))
	eff, err := Load(context.Background(), root, Options{Limits: Limits{Time: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	var security []Problem
	for _, p := range eff.Problems {
		if p.File != file {
			continue
		}
		if p.Kind == ProblemSkipped {
			return // not a settings problem (a syntax error, a time limit)
		}
		if p.Kind == ProblemSecurity {
			security = append(security, p)
		}
	}
	if len(security) == 0 {
		return // readable
	}
	for _, p := range security {
		if !strings.Contains(p.Message, key) || p.Line == 0 {
			t.Errorf("%s = %s: the problem must name the setting and its line: %v", key, value, p)
		}
	}
	got := viewOf(eff)
	// The strictest value: for a level map, entry by entry.
	strict := strictestValues[key]()
	if mm, ok := eff.Settings[key].Value.(map[string]any); ok && len(mm) > 0 && !isAllMap(mm) {
		// A map that could be read as a map keeps its readable entries;
		// each unreadable one counts as the strictest level.
		entryStrict := map[string]string{"DataTools.MinimumProviderConfidenceByToolId": "HIGH", "DataConfidence.CustomConfidenceScheme": "NONE"}[key]
		for _, p := range security {
			for k, v := range mm {
				if strings.Contains(p.Message, fmt.Sprintf("[%q]", k)) && v != entryStrict {
					t.Errorf("%s = %s: the unreadable entry %q counts as %v, not %s", key, value, k, v, entryStrict)
				}
			}
		}
		return
	}
	root2 := t.TempDir()
	writePlugin(t, root2, "org", "it", fmt.Sprintf("CONFIG[\"SETTINGS\"][%q] = %s\n", key, luaLiteral(strict)))
	want, err := Load(context.Background(), root2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if loose := looserThan(viewOf(want), got, want); len(loose) > 0 {
		t.Errorf("%s = %s counts as looser than its strictest value: %v", key, value, loose)
	}
}

func isAllMap(m map[string]any) bool { _, ok := m["*"]; return ok && len(m) == 1 }

func luaLiteral(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("%q", x)
	case bool:
		return fmt.Sprint(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = luaLiteral(e)
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	case map[string]any:
		var parts []string
		for k, e := range x {
			parts = append(parts, fmt.Sprintf("[%q] = %s", k, luaLiteral(e)))
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	}
	return "nil"
}

// FuzzUnreadableSecuritySettingsNeverLoosen feeds the loader arbitrary
// Lua values for every security setting: a value the loader cannot read
// never allows more than the setting's strictest value.
func FuzzUnreadableSecuritySettingsNeverLoosen(f *testing.F) {
	keys := securityKeys()
	for i, k := range keys {
		for _, v := range securityValues[k] {
			f.Add(uint8(i), v)
		}
	}
	f.Add(uint8(0), `{ ["a"] = { ["b"] = "c" } }`)
	f.Add(uint8(3), `nil`)
	f.Fuzz(func(t *testing.T, ki uint8, value string) {
		if strings.ContainsAny(value, "\n\r") || len(value) > 200 {
			t.Skip()
		}
		checkUnreadableIsStrictest(t, keys[int(ki)%len(keys)], value)
	})
}
