package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/stewardhq/steward/llm"
	"github.com/stewardhq/steward/mailbox"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/settings"
	"github.com/stewardhq/steward/store/mailindex"
)

// mailParts are opened on first use: the mail index is a SQLite database a
// run without mail tools never needs.
type mailParts struct {
	once    sync.Once
	index   *mailindex.Index
	err     error
	service *mailbox.Service
	indexer *mailbox.Indexer
	refresh *mailbox.BackgroundSync
}

// MailIndexPath is the local mail index.
func (a *App) MailIndexPath() string { return filepath.Join(a.DataDir, "mail.db") }

// MailEnabled reports whether the mailbox preview features are on.
func (a *App) MailEnabled() bool {
	return a.Policy.PreviewEnabled(settings.PreviewRAG) && a.Policy.PreviewEnabled(settings.PreviewMailboxes)
}

// mailIndex opens the index once.
func (a *App) mailIndex(ctx context.Context) (*mailindex.Index, error) {
	a.mail.once.Do(func() {
		path := a.MailIndexPath()
		if err := createPrivate(path); err != nil {
			a.mail.err = err
			return
		}
		a.mail.index, a.mail.err = mailindex.Open(ctx, path, a.indexOptions...)
		if a.mail.err == nil {
			privateFiles(path)
		}
	})
	return a.mail.index, a.mail.err
}

// MailService is the retrieval service the mail tools and the mail
// commands read through. It opens the index when mail is enabled.
func (a *App) MailService(ctx context.Context) (*mailbox.Service, error) {
	if a.mail.service != nil {
		return a.mail.service, nil
	}
	var ix *mailindex.Index
	var refresh mailbox.SyncRequester
	if a.MailEnabled() {
		indexer, err := a.MailIndexer(ctx)
		if err != nil {
			return nil, err
		}
		ix = a.mail.index
		// Drafts are synced on demand when a tool asks for them and the last
		// sync is older than a minute; Close waits for such a sync.
		a.mail.refresh = mailbox.NewBackgroundSync(context.WithoutCancel(ctx), indexer)
		refresh = a.mail.refresh
	}
	a.mail.service = mailbox.NewService(mailbox.ServiceOptions{
		Index:     ix,
		Mailboxes: a.MailboxConfigs,
		Policy:    a.mailPolicy(),
		Scheme:    a.Org.Scheme(),
		Embedders: a.embedders,
		Sync:      refresh,
		Enabled:   a.MailEnabled,
		Logger:    a.Logger,
	})
	return a.mail.service, nil
}

// MailIndexer syncs mailboxes into the index.
func (a *App) MailIndexer(ctx context.Context) (*mailbox.Indexer, error) {
	if a.mail.indexer != nil {
		return a.mail.indexer, nil
	}
	ix, err := a.mailIndex(ctx)
	if err != nil {
		return nil, fmt.Errorf("opening the mail index %s: %w", a.MailIndexPath(), err)
	}
	a.mail.indexer = mailbox.NewIndexer(mailbox.IndexerOptions{Index: ix, Secrets: mailSecrets{a}, Embedders: a.embedders, Scheme: a.Org.Scheme(), Logger: a.Logger})
	return a.mail.indexer, nil
}

// Close releases what the App opened, the MCP servers it started
// included.
func (a *App) Close() error {
	a.CloseMCP()
	if a.mail.refresh != nil {
		a.mail.refresh.Wait()
	}
	err := a.closeSources()
	if a.mail.index != nil {
		return errors.Join(a.mail.index.Close(), err)
	}
	return err
}

func (a *App) mailPolicy() mailbox.OrgPolicy {
	var p mailbox.OrgPolicy
	if _, ok := a.Org.Settings["DataMailboxes.AllowedServers"]; ok {
		p.Servers = mailbox.ServerPolicy{Set: true, Hosts: a.Org.StringList("DataMailboxes.AllowedServers")}
	}
	if m, ok := a.Org.Settings["DataMailboxes.MinimumOutboundDataRestriction"]; ok {
		r, _ := policy.ParseRestriction(fmt.Sprint(m.Value))
		p.MinimumOutbound = &r
	}
	return p
}

// MailboxConfigs are the organization's mailboxes and the user's own.
func (a *App) MailboxConfigs() []mailbox.Config {
	var out []mailbox.Config
	n := 0
	for _, m := range a.Org.Mailboxes {
		n++
		sec, _ := mailbox.ParseSecurity(m.Security)
		auth, _ := mailbox.ParseAuthKind(m.Auth)
		c := mailbox.Config{ID: m.ID, Name: m.Name, Number: n, Host: m.Host, Port: m.Port, Security: sec, Auth: auth, Username: m.Username,
			SecretRef: orgSecretRef(m.ID), Folders: m.Folders, RequiredConfidence: m.RequiredProviderConfidence, Outbound: m.OutboundDataRestriction, MaxAgeDays: m.MaxAgeDays}
		c.Embedding = a.orgEmbedding(m.EmbeddingProviderID)
		out = append(out, c)
	}
	for _, m := range a.User.Mailboxes {
		n++
		sec, _ := mailbox.ParseSecurity(m.Security)
		auth, _ := mailbox.ParseAuthKind(m.Auth)
		level, err := policy.ParseConfidence(m.RequiredProviderConfidence)
		if err != nil {
			level = policy.High
		}
		restr, _ := policy.ParseRestriction(m.OutboundDataRestriction)
		c := mailbox.Config{ID: m.ID, Name: m.Name, Number: n, Host: m.Host, Port: m.Port, Security: sec, Auth: auth, Username: m.Username,
			SecretRef: userSecretRef(m.ID), Folders: m.Folders, RequiredConfidence: level, Outbound: restr, MaxAgeDays: m.MaxAgeDays}
		c.Embedding = a.userEmbedding(m.EmbeddingProvider)
		out = append(out, c)
	}
	return out
}

// orgEmbedding maps an organization embedding provider to the mailbox's.
func (a *App) orgEmbedding(id string) *mailbox.Embedding {
	for _, e := range a.Org.EmbeddingProviders {
		if e.ID != id || id == "" {
			continue
		}
		kind := mailbox.EmbeddingOpenAI
		scheme := strings.ToUpper(e.UsedLLMProvider)
		base := e.Hostname
		if strings.EqualFold(e.Host, "OLLAMA") {
			kind = mailbox.EmbeddingOllama
		}
		if k, ok := llm.LookupKind(e.UsedLLMProvider); ok && base == "" {
			info, _ := k.Info()
			base, scheme = info.DefaultBaseURL, info.Scheme
		}
		if scheme == "" {
			scheme = policy.ProviderSelfHosted
		}
		return &mailbox.Embedding{Kind: kind, BaseURL: base, Model: e.ModelID, Provider: scheme, SecretRef: "embedding::" + e.ID}
	}
	return nil
}

// userEmbedding reads "ollama:<model>[@<base URL>]", "openai:<model>" or
// the ID of an organization embedding provider.
func (a *App) userEmbedding(spec string) *mailbox.Embedding {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil
	}
	kind, rest, ok := strings.Cut(spec, ":")
	if !ok {
		return a.orgEmbedding(spec)
	}
	model, base, _ := strings.Cut(rest, "@")
	switch strings.ToLower(kind) {
	case "ollama":
		if base == "" {
			base = "http://127.0.0.1:11434/"
		}
		scheme := policy.ProviderSelfHosted
		if a.notSelfHosted(context.Background(), base) != "" {
			// An Ollama anywhere but here or in the organization's network
			// is a cloud provider for the confidence scheme.
			scheme = policy.ProviderUnlistedHost
		}
		return &mailbox.Embedding{Kind: mailbox.EmbeddingOllama, BaseURL: base, Model: model, Provider: scheme}
	case "openai":
		if base == "" {
			base = "https://api.openai.com/v1/"
		}
		return &mailbox.Embedding{Kind: mailbox.EmbeddingOpenAI, BaseURL: base, Model: model, Provider: policy.ProviderOpenAI, SecretRef: "embedding::openai"}
	}
	return nil
}

func (a *App) embedders(ctx context.Context, cfg mailbox.Config) (mailbox.Embedder, error) {
	if cfg.Embedding == nil {
		return nil, nil
	}
	key := ""
	if cfg.Embedding.SecretRef != "" {
		var err error
		if key, err = (mailSecrets{a}).Secret(ctx, cfg.Embedding.SecretRef); err != nil && !errors.Is(err, errNoSecret) {
			return nil, err
		}
		if key == "" && cfg.Embedding.SecretRef == "embedding::openai" {
			key = a.getenv("OPENAI_API_KEY")
		}
	}
	client, err := a.providerClient(cfg.Embedding.Provider, cfg.Embedding.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("the embedding provider %s: %w", cfg.Embedding.Model, err)
	}
	return mailbox.NewEmbedder(*cfg.Embedding, key, client)
}

func orgSecretRef(id string) string  { return "org-mailbox::" + id }
func userSecretRef(id string) string { return "mailbox::" + id }

var errNoSecret = errors.New("no secret stored")

// mailSecrets gives the indexer the passwords and tokens: an
// organization's decrypted secret, or the user's from the secret store.
type mailSecrets struct{ a *App }

func (s mailSecrets) Secret(_ context.Context, ref string) (string, error) {
	if id, ok := strings.CutPrefix(ref, "org-mailbox::"); ok {
		for _, m := range s.a.Org.Mailboxes {
			if m.ID == id && m.Secret != "" {
				return m.Secret, nil
			}
		}
		ref = userSecretRef(id)
	}
	if id, ok := strings.CutPrefix(ref, "embedding::"); ok {
		for _, e := range s.a.Org.EmbeddingProviders {
			if e.ID == id && e.APIKey != "" {
				return e.APIKey, nil
			}
		}
	}
	v, ok, err := s.a.Secrets.Get(ref, "secret")
	if err != nil {
		return "", fmt.Errorf("reading the secret from %s: %w", s.a.Secrets.Where(), err)
	}
	if !ok {
		return "", errNoSecret
	}
	return v, nil
}

// createPrivate creates an empty file at path readable only by the user,
// unless it exists, so that SQLite opens it with these permissions: mails
// are as private as chats.
func createPrivate(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating the data directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	return f.Close()
}

// privateFiles makes a database and its WAL and shared-memory files
// readable only by the user, whatever the umask was when they were made.
func privateFiles(path string) {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm() != 0o600 {
			_ = os.Chmod(p, 0o600)
		}
	}
}

// ErrOrgMailbox is wrapped by the error of removing a mailbox that an
// organization plugin defines.
var ErrOrgMailbox = errors.New("the mailbox is defined by an organization plugin")

// RemoveMailbox removes one of the user's mailboxes: its settings, its
// stored secret and everything the local index holds of it. It returns
// how the index could not be cleared, if it could not, after the rest was
// done; a mailbox an organization plugin defines is refused.
func (a *App) RemoveMailbox(ctx context.Context, id string) error {
	for _, m := range a.Org.Mailboxes {
		if m.ID == id {
			return fmt.Errorf("%w (%s): remove it there, or ask your administrator", ErrOrgMailbox, m.Plugin)
		}
	}
	idx := -1
	for i, m := range a.User.Mailboxes {
		if m.ID == id {
			idx = i
		}
	}
	if idx < 0 {
		return fmt.Errorf("there is no mailbox %q in your settings", id)
	}
	a.User.Mailboxes = append(a.User.Mailboxes[:idx:idx], a.User.Mailboxes[idx+1:]...)
	if err := a.SaveUserSettings(); err != nil {
		return err
	}
	if err := a.Secrets.Delete(userSecretRef(id), "secret"); err != nil {
		return fmt.Errorf("the mailbox is removed from your settings, but its secret could not be deleted from %s: %w", a.Secrets.Where(), err)
	}
	if _, err := os.Stat(a.MailIndexPath()); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	ix, err := a.mailIndex(ctx)
	if err != nil {
		return fmt.Errorf("the mailbox is removed from your settings, but the mail index could not be opened to delete its mails: %w", err)
	}
	if err := ix.DeleteMailbox(ctx, id); err != nil {
		return fmt.Errorf("the mailbox is removed from your settings, but its mails could not be deleted from the index: %w", err)
	}
	return nil
}

// SetMailboxSecret stores a mailbox's password or token.
func (a *App) SetMailboxSecret(id, secret string) error {
	return a.Secrets.Set(userSecretRef(id), "secret", secret)
}

// MailServiceForUser is a retrieval service over the open index for the
// user's own commands (steward mail search, count, status): the user reads
// their own mail, so the preview switch of the tools does not apply.
func (a *App) MailServiceForUser(ctx context.Context) (*mailbox.Service, error) {
	ix, err := a.mailIndex(ctx)
	if err != nil {
		return nil, fmt.Errorf("opening the mail index %s: %w", a.MailIndexPath(), err)
	}
	return mailbox.NewService(mailbox.ServiceOptions{
		Index:     ix,
		Mailboxes: a.MailboxConfigs,
		Policy:    a.mailPolicy(),
		Scheme:    a.Org.Scheme(),
		Embedders: a.embedders,
		Logger:    a.Logger,
	}), nil
}
