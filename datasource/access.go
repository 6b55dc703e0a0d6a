package datasource

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/stewardhq/steward/datasource/eri"
	"github.com/stewardhq/steward/policy"
)

// Provider is what deciding over data sources needs to know of the chat
// provider. Build it with the provider settings the request uses.
type Provider struct {
	// Confidence is the provider's level under the organization's scheme.
	Confidence policy.Confidence
	// Trusted is true for a self-hosted provider or one the organization
	// lists as trusted for data-source security. It never raises
	// confidence.
	Trusted bool
}

// Selection says which data sources a chat searches: every source the
// provider may use (Automatic), or the listed ones of those.
type Selection struct {
	Automatic bool
	IDs       []string
}

// Usable is a data source the provider may use, with what it demands of
// the chat once its passages reach the model.
type Usable struct {
	Source Source
	// Security is SELF_HOSTED when the source or its ERI server demands it,
	// else ALLOW_ANY.
	Security policy.DataSecurity
	// WordsOnly is true for a local source searched by words only: it has
	// no embedding provider, or its embedding provider may not receive its
	// queries (EmbeddingRefused).
	WordsOnly bool
	// EmbeddingRefused says why a source with an embedding provider is
	// searched by words only: the provider does not meet the source's
	// level under the organization's scheme (Source.EmbeddingRefusal), so
	// no query goes there. It names levels, never a secret.
	EmbeddingRefused string
	// Description is what the model reads about the source: the user's or
	// organization's text, or an ERI server's own description after the
	// prompt-injection filter.
	Description string
}

// Refusal codes: why a source is not usable.
const (
	RefusedInvalid      = "INVALID_CONFIGURATION"
	RefusedConfidence   = "PROVIDER_CONFIDENCE_TOO_LOW"
	RefusedEmbedding    = "EMBEDDING_PROVIDER_NOT_ALLOWED"
	RefusedSelfHosted   = "SELF_HOSTED_ONLY"
	RefusedServer       = "SERVER_NOT_ALLOWING"
	RefusedUnreachable  = "SERVER_UNREACHABLE"
	RefusedNotSelected  = "NOT_SELECTED"
	RefusedNotAvailable = "NOT_AVAILABLE"
)

// Refusal says why a source is not usable with a provider.
type Refusal struct {
	Source Source
	// Code is one of the Refused* codes.
	Code string
	// Reason says it in words for the user; it names no secret.
	Reason string
}

// Usable returns the sources the provider may use in a chat with the
// selection, ordered by number then ID, and why each other configured
// source is not usable.
//
// A source is usable when the provider meets its confidence, its
// embedding provider (if any) resolves, a SELF_HOSTED source goes to a
// trusted provider,
// and an ERI server answers its security requirements within the info
// timeout and allows this provider: ANY lets every provider through,
// SELF_HOSTED only trusted ones (and makes the source SELF_HOSTED), NONE
// or no answer none. An embedding provider that does not meet the source's
// level receives no query (it would see what the model asks about the
// source): the source is usable by words only, with EmbeddingRefused
// saying why, as a mailbox is. With automatic selection every usable
// source counts; otherwise only the selected ones.
func (s *Service) Usable(ctx context.Context, p Provider, sel Selection) ([]Usable, []Refusal) {
	if !s.Enabled() {
		return nil, nil
	}
	all := s.Sources()
	var out []Usable
	var refused []Refusal
	type eriCheck struct {
		i   int
		src Source
	}
	var eris []eriCheck
	slots := make([]*Usable, len(all))
	refusals := make([]*Refusal, len(all))
	for i, src := range all {
		refuse := func(code, reason string) { refusals[i] = &Refusal{Source: src, Code: code, Reason: reason} }
		if !sel.Automatic && !slices.Contains(sel.IDs, src.ID) {
			refuse(RefusedNotSelected, "the chat does not search it (not selected)")
			continue
		}
		if err := src.Validate(); err != nil {
			refuse(RefusedInvalid, err.Error())
			continue
		}
		if !policy.Allows(p.Confidence, src.RequiredConfidence) {
			refuse(RefusedConfidence, fmt.Sprintf("it needs a provider with confidence %s, the provider has %s", src.RequiredConfidence, p.Confidence))
			continue
		}
		if src.Security == policy.SelfHosted && !p.Trusted {
			refuse(RefusedSelfHosted, "it may only be used with self-hosted providers")
			continue
		}
		u := Usable{Source: src, Security: src.Security, Description: src.Description}
		if src.Kind.Local() {
			var refused *policy.EmbeddingRefusedError
			switch err := s.EmbeddingRefusal(src); {
			case src.Embedding == "":
				u.WordsOnly = true
			case errors.As(err, &refused):
				u.WordsOnly, u.EmbeddingRefused = true, err.Error()
			case err != nil:
				refuse(RefusedEmbedding, "its embedding provider cannot be used: "+err.Error())
				continue
			}
			slots[i] = &u
			continue
		}
		slots[i] = &u
		eris = append(eris, eriCheck{i: i, src: src})
	}
	// ERI servers are asked in parallel, each within the info timeout; an
	// answer is kept for the cache's lifetime.
	var wg sync.WaitGroup
	for _, e := range eris {
		wg.Add(1)
		go func(e eriCheck) {
			defer wg.Done()
			info, err := s.serverInfo(ctx, e.src)
			u := slots[e.i]
			if err != nil {
				slots[e.i] = nil
				refusals[e.i] = &Refusal{Source: e.src, Code: RefusedUnreachable, Reason: "its server did not answer the security check: " + err.Error()}
				return
			}
			ok, security, reason := serverAllows(info.security.AllowedProviderType, p)
			if !ok {
				slots[e.i] = nil
				refusals[e.i] = &Refusal{Source: e.src, Code: RefusedServer, Reason: reason}
				return
			}
			u.Security = policy.TightenDataSecurity(u.Security, security)
			if info.description != "" {
				u.Description = info.description
			}
		}(e)
	}
	wg.Wait()
	for i := range all {
		switch {
		case slots[i] != nil:
			out = append(out, *slots[i])
		case refusals[i] != nil:
			refused = append(refused, *refusals[i])
		}
	}
	return out, refused
}

// EmbeddingRefusal applies Source.EmbeddingRefusal under the service's
// scheme: nil when src has no embedding provider or its provider may
// receive its documents and queries, a *policy.EmbeddingRefusedError when
// it may not, and the error of Options.EmbeddingProvider when the provider
// does not resolve.
func (s *Service) EmbeddingRefusal(src Source) error {
	if src.Embedding == "" {
		return nil
	}
	name, err := s.o.EmbeddingProvider(src)
	if err != nil {
		return err
	}
	return src.EmbeddingRefusal(s.o.Scheme, name)
}

// serverAllows applies an ERI server's security requirements to the
// provider: ANY lets everyone through, SELF_HOSTED only trusted providers
// and makes the source SELF_HOSTED, NONE and a missing answer nobody.
func serverAllows(t eri.ProviderType, p Provider) (ok bool, security policy.DataSecurity, reason string) {
	switch t {
	case eri.ProviderAny:
		return true, policy.AllowAny, ""
	case eri.ProviderSelfHosted:
		if !p.Trusted {
			return false, policy.SelfHosted, "its server allows only self-hosted providers"
		}
		return true, policy.SelfHosted, ""
	case eri.ProviderNone:
		return false, policy.NotSpecified, "its server allows no provider to process its data"
	}
	return false, policy.NotSpecified, "its server did not say which providers may process its data"
}
