package policy

import (
	"testing"

	"pgregory.net/rapid"
)

func TestConfidenceOrderAndNames(t *testing.T) {
	want := []string{"NONE", "UNTRUSTED", "UNKNOWN", "VERY_LOW", "LOW", "MODERATE", "MEDIUM", "HIGH"}
	levels := Levels()
	if len(levels) != len(want) {
		t.Fatalf("%d levels", len(levels))
	}
	for i, l := range levels {
		if l.String() != want[i] {
			t.Errorf("level %d is %s, want %s", i, l, want[i])
		}
		if i > 0 && !(levels[i-1] < l) {
			t.Errorf("%s must be below %s", levels[i-1], l)
		}
		back, err := ParseConfidence(want[i])
		if err != nil || back != l {
			t.Errorf("parse %s: %v %v", want[i], back, err)
		}
	}
	if c, err := ParseConfidence(" very-low "); err != nil || c != VeryLow {
		t.Errorf("case and dashes: %v %v", c, err)
	}
	if _, err := ParseConfidence("SUPER"); err == nil {
		t.Error("an unknown level must be refused")
	}
	if Confidence(42).Valid() || !High.Valid() {
		t.Error("Valid")
	}
}

func TestAllows(t *testing.T) {
	cases := []struct {
		provider, min Confidence
		want          bool
	}{
		{None, None, true}, {Untrusted, None, true}, {Low, Medium, false}, {Medium, Medium, true}, {High, Medium, true}, {Unknown, VeryLow, false},
	}
	for _, c := range cases {
		if got := Allows(c.provider, c.min); got != c.want {
			t.Errorf("Allows(%s, %s) = %v", c.provider, c.min, got)
		}
	}
}

func TestSchemes(t *testing.T) {
	type row struct {
		scheme   Scheme
		provider string
		want     Confidence
	}
	rows := []row{
		{TrustAll, ProviderSelfHosted, High}, {TrustAll, ProviderOpenAI, Medium}, {TrustAll, ProviderDeepSeek, Medium},
		{TrustUSAEurope, ProviderDeepSeek, Low}, {TrustUSAEurope, ProviderAlibaba, Low}, {TrustUSAEurope, ProviderMistral, Medium}, {TrustUSAEurope, ProviderOpenAI, Medium},
		{TrustUSA, ProviderMistral, Low}, {TrustUSA, ProviderHetzner, Low}, {TrustUSA, ProviderDeepSeek, Low}, {TrustUSA, ProviderAnthropic, Medium},
		{TrustEurope, ProviderMistral, Medium}, {TrustEurope, ProviderGWDG, Medium}, {TrustEurope, ProviderOpenAI, Low},
		{TrustAsia, ProviderDeepSeek, Medium}, {TrustAsia, ProviderOpenAI, Low},
		{LocalTrustOnly, ProviderOpenAI, VeryLow}, {LocalTrustOnly, ProviderSelfHosted, High},
	}
	for _, r := range rows {
		if got := (SchemeConfig{Scheme: r.scheme}).ProviderConfidence(r.provider); got != r.want {
			t.Errorf("%s %s = %s, want %s", r.scheme, r.provider, got, r.want)
		}
	}
	custom := SchemeConfig{Scheme: Custom, Custom: map[string]Confidence{"open_ai": High}}
	if custom.ProviderConfidence(ProviderOpenAI) != High {
		t.Error("custom entries match case-insensitively")
	}
	if custom.ProviderConfidence(ProviderSelfHosted) != Unknown || custom.ProviderConfidence(ProviderAnthropic) != Unknown {
		t.Error("under CUSTOM a missing provider is UNKNOWN, self-hosted included")
	}
	if s, err := ParseScheme(""); err != nil || s != TrustAll {
		t.Error("the default scheme is TRUST_ALL")
	}
	if _, err := ParseScheme("TRUST_MARS"); err == nil {
		t.Error("unknown scheme")
	}
}

func TestOutboundRule(t *testing.T) {
	kinds := []OutboundData{NoOutbound, ConfiguredService, ThirdPartyQueries, ModelChosenAddresses}
	for _, r := range []Restriction{OnlyConfiguredServices, OnlyLinksFromChat, Unrestricted, Restriction(7), Restriction(-1)} {
		for _, k := range kinds {
			for _, enforces := range []bool{false, true} {
				want := r == Unrestricted || k == NoOutbound || k == ConfiguredService || enforces
				if got := OutboundAllowed(r, k, enforces); got != want {
					t.Errorf("OutboundAllowed(%s, %s, %v) = %v", r, k, enforces, got)
				}
			}
		}
	}
	var undeclared OutboundData
	if undeclared != ModelChosenAddresses {
		t.Error("a tool which declares nothing counts as the most open kind")
	}
}

func TestRestrictionParsing(t *testing.T) {
	if r, err := ParseRestriction("garbage"); err == nil || r != OnlyConfiguredServices {
		t.Error("an unreadable value counts as the strictest, with an error")
	}
	if Restriction(9).Normalize() != OnlyConfiguredServices || Restriction(9).String() != "ONLY_CONFIGURED_SERVICES" {
		t.Error("out of range counts as the strictest")
	}
	if !(OnlyConfiguredServices < OnlyLinksFromChat && OnlyLinksFromChat < Unrestricted) {
		t.Error("order")
	}
}

func TestTighten(t *testing.T) {
	var none OutboundRequirement
	a := OutboundRequirement{Set: true, Restriction: OnlyLinksFromChat, MailboxID: "a"}
	b := OutboundRequirement{Set: true, Restriction: OnlyLinksFromChat, MailboxID: "b"}
	c := OutboundRequirement{Set: true, Restriction: OnlyConfiguredServices, MailboxID: "c"}
	if none.Effective() != Unrestricted {
		t.Error("no requirement is unrestricted")
	}
	if got := none.Tighten(a); got != a {
		t.Error("first requirement is taken")
	}
	if got := a.Tighten(b); got.MailboxID != "a" {
		t.Error("on a tie the first mailbox stays")
	}
	if got := a.Tighten(c); got != c {
		t.Error("a stricter level replaces, with its mailbox")
	}
	if got := c.Tighten(a); got != c {
		t.Error("a looser level changes nothing")
	}
	if got := c.Tighten(none); got != c {
		t.Error("NONE changes nothing")
	}
	if TightenDataSecurity(SelfHosted, AllowAny) != SelfHosted || TightenDataSecurity(NotSpecified, AllowAny) != AllowAny || TightenDataSecurity(AllowAny, NotSpecified) != AllowAny {
		t.Error("data security only tightens")
	}
}

// TestRequirementsNeverLoosen drives random sequences through the three
// tightening rules.
func TestRequirementsNeverLoosen(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var conf Confidence
		sec := NotSpecified
		var out OutboundRequirement
		n := rapid.IntRange(1, 30).Draw(t, "n")
		for i := 0; i < n; i++ {
			nc := rapid.SampledFrom(Levels()).Draw(t, "c")
			ns := DataSecurity(rapid.IntRange(0, 2).Draw(t, "s"))
			no := OutboundRequirement{Set: rapid.Bool().Draw(t, "set"), Restriction: Restriction(rapid.IntRange(-1, 3).Draw(t, "r")), MailboxID: rapid.StringMatching(`[a-c]`).Draw(t, "mb")}
			prevC, prevS, prevO := conf, sec, out
			conf = Max(conf, nc)
			sec = TightenDataSecurity(sec, ns)
			out = out.Tighten(no)
			if conf < prevC || (prevS == SelfHosted && sec != SelfHosted) || (prevS == AllowAny && sec == NotSpecified) || out.Effective() > prevO.Effective() {
				t.Fatalf("loosened: %v→%v %v→%v %v→%v", prevC, conf, prevS, sec, prevO, out)
			}
		}
	})
}
