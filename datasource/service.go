package datasource

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/stewardhq/steward/datasource/eri"
	"github.com/stewardhq/steward/guard"
	"github.com/stewardhq/steward/policy"
)

// InfoTTL is how long an ERI server's description and security answer are
// kept. Only answers that arrived are kept; a failure is asked again next
// time.
const InfoTTL = 5 * time.Minute

// Filter is the prompt-injection filter; *guard.Filter satisfies it.
type Filter interface {
	FilterBatch(ctx context.Context, texts []guard.Text) []guard.Outcome
	// BeginAction opens a reporting scope: what is filtered until end is
	// called is reported to the user once.
	BeginAction() (end func())
}

// LocalIndex searches the local index of folder and file sources. The
// app gives it, over datasource/local.
type LocalIndex interface {
	// Search returns up to limit of the source's best hits for query after
	// skipping offset of them.
	Search(ctx context.Context, src Source, query string, offset, limit int) (LocalResult, error)
}

// LocalResult is a page of local hits.
type LocalResult struct {
	Hits []LocalHit
	// HasMore is true when hits go on beyond this page.
	HasMore bool
	// WordsOnly is true when the query was searched by words only: the
	// source has no embedding provider, or it failed (see Issues).
	WordsOnly bool
	// Issues are what the model should know about this search, e.g. that
	// the embedding provider failed and only words were searched.
	Issues []string
}

// LocalHit is one chunk the local index found.
type LocalHit struct {
	// Path is the file's absolute path.
	Path string
	// Chunk is the chunk's index within the file, from 0.
	Chunk int
	// Page is the page the chunk starts on, 0 when the format has none.
	Page int
	Text string
}

// ERIClients builds the client of an ERI source, with its secret.
type ERIClients func(ctx context.Context, src Source) (*eri.Client, error)

// Options configure a Service.
type Options struct {
	// Sources returns every configured source; it is asked on every call,
	// so a settings change applies at once.
	Sources func() []Source
	// Enabled reports whether data sources are switched on (the preview);
	// nil means on.
	Enabled func() bool
	// Scheme gives embedding providers their confidence.
	Scheme policy.SchemeConfig
	// EmbeddingProvider returns the scheme's provider name of a local
	// source's embedding provider (e.g. SELF_HOSTED), or an error when it
	// does not resolve.
	EmbeddingProvider func(src Source) (string, error)
	// Local searches folder and file sources; nil leaves them unsearched.
	Local LocalIndex
	// ERI builds ERI clients; nil leaves ERI sources unusable.
	ERI ERIClients
	// Guard filters everything a source returns; nil passes it unchanged
	// (tests only).
	Guard  Filter
	Logger *slog.Logger
	Now    func() time.Time
}

// Service decides over data sources and searches them. It is safe for
// concurrent use.
type Service struct {
	o Options

	mu    sync.Mutex
	cache map[string]cachedInfo
}

// cachedInfo is what an ERI server said, for one configuration of it.
type cachedInfo struct {
	fingerprint string
	at          time.Time
	security    eri.SecurityRequirements
	methods     []eri.AuthScheme
	// description is filtered; "" when the server gave none or it failed.
	description string
	// described is true once the description was read successfully.
	described bool
}

// NewService returns a service.
func NewService(o Options) *Service {
	if o.Sources == nil {
		o.Sources = func() []Source { return nil }
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.EmbeddingProvider == nil {
		o.EmbeddingProvider = func(Source) (string, error) { return "", errors.New("no embedding providers are configured") }
	}
	return &Service{o: o, cache: map[string]cachedInfo{}}
}

// Enabled reports whether data sources are switched on. It is cheap.
func (s *Service) Enabled() bool { return s.o.Enabled == nil || s.o.Enabled() }

// Sources returns every configured source ordered by number, then ID.
func (s *Service) Sources() []Source {
	all := append([]Source(nil), s.o.Sources()...)
	Sort(all)
	return all
}

// Source returns a configured source by ID.
func (s *Service) Source(id string) (Source, bool) {
	for _, src := range s.o.Sources() {
		if src.ID == id {
			return src, true
		}
	}
	return Source{}, false
}

// Any reports whether at least one source is configured and data sources
// are on. It is cheap.
func (s *Service) Any() bool { return s.Enabled() && len(s.o.Sources()) > 0 }

// fingerprint identifies a source's configuration: a change asks its
// server again.
func fingerprint(src Source) string {
	b, _ := json.Marshal(struct {
		Source
		Ref string
	}{src, src.SecretRef})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// signIn builds the client of an ERI source and signs in, using the
// sign-in methods the server announced when they are known.
func (s *Service) signIn(ctx context.Context, src Source, methods []eri.AuthScheme) (*eri.Session, error) {
	if s.o.ERI == nil {
		return nil, errors.New("ERI servers cannot be reached from here")
	}
	c, err := s.o.ERI(ctx, src)
	if err != nil {
		return nil, err
	}
	return c.SignIn(ctx, methods)
}

// serverInfo returns the cached answers of an ERI source's server, asking
// it (methods, sign-in, security requirements, description) when there
// are none younger than InfoTTL for this configuration. The whole check
// runs within eri.InfoTimeout. Only what succeeded is kept: a failed check
// keeps nothing, and a description that could not be read is asked for
// again on the next call while the security answer stays cached.
func (s *Service) serverInfo(ctx context.Context, src Source) (cachedInfo, error) {
	fp := fingerprint(src)
	now := s.o.Now()
	s.mu.Lock()
	c, ok := s.cache[src.ID]
	s.mu.Unlock()
	fresh := ok && c.fingerprint == fp && now.Sub(c.at) < InfoTTL
	if fresh && c.described {
		return c, nil
	}
	ctx, cancel := context.WithTimeout(ctx, eri.InfoTimeout)
	defer cancel()
	info := cachedInfo{fingerprint: fp, at: now}
	if fresh {
		info = c
	}
	if s.o.ERI == nil {
		return info, errors.New("ERI servers cannot be reached from here")
	}
	client, err := s.o.ERI(ctx, src)
	if err != nil {
		return info, err
	}
	if !fresh {
		// The methods say under which names the server wants the secret; a
		// server that does not answer them still gets the usual names.
		if m, err := client.AuthMethods(ctx); err == nil {
			info.methods = m
		} else if ctx.Err() != nil {
			return info, err
		}
	}
	sess, err := client.SignIn(ctx, info.methods)
	if err != nil {
		if fresh {
			return info, nil // the security answer stands; the description waits
		}
		return info, err
	}
	if !fresh {
		if info.security, err = sess.SecurityRequirements(ctx); err != nil {
			return info, err
		}
	}
	if d, err := sess.DataSource(ctx); err == nil {
		info.described = true
		info.description = s.filterDescription(ctx, src, d)
	} else {
		s.o.Logger.Warn("an ERI server's description could not be read", "data_source", src.ID, "error", err)
	}
	s.mu.Lock()
	s.cache[src.ID] = info
	s.mu.Unlock()
	return info, nil
}

// filterDescription passes a server's description through the
// prompt-injection filter; the server's name goes with it when the
// description is empty.
func (s *Service) filterDescription(ctx context.Context, src Source, d eri.DataSourceInfo) string {
	text := oneLine(d.Description)
	if text == "" && oneLine(d.Name) != "" {
		text = oneLine(d.Name)
	}
	if text == "" || s.o.Guard == nil {
		return text
	}
	out := s.o.Guard.FilterBatch(ctx, []guard.Text{{Source: guard.Source{Kind: guard.DataSourceDescription, Label: src.Name}, Field: "description", Text: text}})
	return oneLine(out[0].Text)
}

// ServerDetails is what an ERI server says about itself, for the user.
type ServerDetails struct {
	Methods    []eri.AuthScheme
	Info       eri.DataSourceInfo
	Embeddings []eri.EmbeddingInfo
	Retrievals []eri.RetrievalInfo
	Security   eri.SecurityRequirements
}

// Describe asks an ERI source's server everything it says about itself,
// for `steward sources show`. Nothing of it is filtered: it goes to the
// user, not to a model.
func (s *Service) Describe(ctx context.Context, src Source) (ServerDetails, error) {
	var d ServerDetails
	if src.Kind != ERI {
		return d, fmt.Errorf("data source %s is a %s, not an ERI server", src.ID, src.Kind.Label())
	}
	if s.o.ERI == nil {
		return d, errors.New("ERI servers cannot be reached from here")
	}
	client, err := s.o.ERI(ctx, src)
	if err != nil {
		return d, err
	}
	if d.Methods, err = client.AuthMethods(ctx); err != nil {
		return d, err
	}
	sess, err := client.SignIn(ctx, d.Methods)
	if err != nil {
		return d, err
	}
	if d.Info, err = sess.DataSource(ctx); err != nil {
		return d, err
	}
	if d.Embeddings, err = sess.EmbeddingInfo(ctx); err != nil {
		return d, err
	}
	if d.Retrievals, err = sess.RetrievalInfo(ctx); err != nil {
		return d, err
	}
	d.Security, err = sess.SecurityRequirements(ctx)
	return d, err
}

// Forget drops what the cache holds of a source, e.g. after it was
// removed or changed.
func (s *Service) Forget(id string) {
	s.mu.Lock()
	delete(s.cache, id)
	s.mu.Unlock()
}
