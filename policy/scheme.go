package policy

import (
	"fmt"
	"strings"
)

// Provider names as the confidence schemes know them. They match the
// reference implementation's LLMProviders names, which organizations already
// use in their custom schemes.
const (
	ProviderOpenAI      = "OPEN_AI"
	ProviderAnthropic   = "ANTHROPIC"
	ProviderMistral     = "MISTRAL"
	ProviderSelfHosted  = "SELF_HOSTED"
	ProviderFireworks   = "FIREWORKS"
	ProviderGroq        = "GROQ"
	ProviderGoogle      = "GOOGLE"
	ProviderX           = "X"
	ProviderHelmholtz   = "HELMHOLTZ"
	ProviderGWDG        = "GWDG"
	ProviderDeepSeek    = "DEEP_SEEK"
	ProviderAlibaba     = "ALIBABA_CLOUD"
	ProviderHuggingFace = "HUGGINGFACE"
	ProviderPerplexity  = "PERPLEXITY"
	ProviderOpenRouter  = "OPEN_ROUTER"
	ProviderHetzner     = "HETZNER"
	ProviderTogether    = "TOGETHER"
	// ProviderUnlistedHost is a server of a self-hosted kind (Ollama,
	// vLLM, …) that does not count as self-hosted: its host has an address
	// outside loopback and private networks and the organization does not
	// list it. It gets the confidence of a cloud provider under every
	// scheme; a CUSTOM scheme may name it like any provider.
	ProviderUnlistedHost = "UNLISTED_HOST"
)

// Scheme names how an organization assigns confidence to providers.
type Scheme string

// The confidence schemes.
const (
	TrustAll       Scheme = "TRUST_ALL"
	TrustUSAEurope Scheme = "TRUST_USA_EUROPE"
	TrustUSA       Scheme = "TRUST_USA"
	TrustEurope    Scheme = "TRUST_EUROPE"
	TrustAsia      Scheme = "TRUST_ASIA"
	LocalTrustOnly Scheme = "LOCAL_TRUST_ONLY"
	Custom         Scheme = "CUSTOM"
)

var schemes = []Scheme{TrustAll, TrustUSAEurope, TrustUSA, TrustEurope, TrustAsia, LocalTrustOnly, Custom}

// ParseScheme reads a scheme name case-insensitively. An empty name is the
// default scheme, TRUST_ALL.
func ParseScheme(s string) (Scheme, error) {
	t := Scheme(strings.ToUpper(strings.TrimSpace(s)))
	if t == "" {
		return TrustAll, nil
	}
	for _, k := range schemes {
		if k == t {
			return k, nil
		}
	}
	return TrustAll, fmt.Errorf("unknown confidence scheme %q: use one of TRUST_ALL, TRUST_USA_EUROPE, TRUST_USA, TRUST_EUROPE, TRUST_ASIA, LOCAL_TRUST_ONLY, CUSTOM", s)
}

// SchemeConfig is an organization's choice of scheme plus, for CUSTOM, its
// own map from provider name to level.
type SchemeConfig struct {
	Scheme Scheme
	Custom map[string]Confidence
}

// ProviderConfidence returns the level the scheme gives a provider. provider
// is one of the Provider* names. A self-hosted provider is HIGH under every
// scheme except CUSTOM; under CUSTOM a provider missing from the map is
// UNKNOWN.
func (s SchemeConfig) ProviderConfidence(provider string) Confidence {
	provider = strings.ToUpper(provider)
	if s.Scheme == Custom {
		for k, v := range s.Custom {
			if strings.EqualFold(k, provider) {
				return v
			}
		}
		return Unknown
	}
	if provider == ProviderSelfHosted {
		return High
	}
	in := func(names ...string) bool {
		for _, n := range names {
			if n == provider {
				return true
			}
		}
		return false
	}
	europe := in(ProviderMistral, ProviderHelmholtz, ProviderGWDG, ProviderHetzner)
	asia := in(ProviderDeepSeek, ProviderAlibaba)
	switch s.Scheme {
	case TrustUSAEurope:
		if asia {
			return Low
		}
		return Medium
	case TrustUSA:
		if europe || asia {
			return Low
		}
		return Medium
	case TrustEurope:
		if europe {
			return Medium
		}
		return Low
	case TrustAsia:
		if asia {
			return Medium
		}
		return Low
	case LocalTrustOnly:
		return VeryLow
	default: // TRUST_ALL and the zero value
		return Medium
	}
}
