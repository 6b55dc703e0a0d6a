package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	_ "github.com/ncruces/go-sqlite3/driver" // registers the "sqlite3" driver

	"github.com/stewardhq/steward/policy"
)

// Chat is a stored chat.
type Chat struct {
	ID           string
	Title        string
	SystemPrompt string
	Provider     string
	Model        string
	// BaseURL is the provider's base URL when the chat was last answered,
	// so that a resumed chat goes to the same server.
	BaseURL string
	Created time.Time
	Updated time.Time
	// The chat's requirements; they only ever tighten.
	RequiredConfidence policy.Confidence
	DataSecurity       policy.DataSecurity
	Outbound           policy.OutboundRequirement
	// DataSources are the chat's own data-source options; nil while it
	// follows the defaults.
	DataSources *DataSourceOptions
	Messages    []Message
}

// DataSourceOptions are which data sources a chat searches and how.
type DataSourceOptions struct {
	Disabled  bool     `json:"disabled,omitempty"`
	Automatic bool     `json:"automatic,omitempty"`
	Selected  []string `json:"selected,omitempty"`
	// Retrieval is SEMANTIC_SEARCH, EVERY_MESSAGE or empty.
	Retrieval string `json:"retrieval,omitempty"`
}

// Message is one stored message.
type Message struct {
	Role   string // "user" or "assistant"
	Text   string
	Hidden bool
	// Incomplete marks an answer that was cut off (the stream ended early,
	// the request failed part-way, or the user stopped it): Text is what
	// arrived, not the whole answer.
	Incomplete bool
	Created    time.Time
	Documents  []Document
	// Traces of the tool calls that led to an assistant answer, without
	// their results.
	Traces []Trace
	// Sources used by tools for this answer.
	Sources []Source
}

// Document is a file or page attached to a user message.
type Document struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// Trace is what a tool call did, never what it returned.
type Trace struct {
	Order         int    `json:"order"`
	ToolID        string `json:"tool_id"`
	ToolName      string `json:"tool_name"`
	CallID        string `json:"call_id"`
	Status        string `json:"status"`
	StatusMessage string `json:"status_message,omitempty"`
	// Arguments are already masked where a tool named them sensitive.
	Arguments string `json:"arguments,omitempty"`
}

// Source is one entry of "Sources used by tools".
type Source struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

// Summary describes a chat in a listing.
type Summary struct {
	ID       string
	Title    string
	Updated  time.Time
	Messages int
}

// ErrNotFound is returned for an unknown chat ID.
var ErrNotFound = errors.New("no stored chat with that ID")

// Store is an open chat database.
type Store struct {
	db     *sql.DB
	redact func(string) string
}

// RedactWith makes Save pass every text of a chat through f first (the
// title, the system prompt, messages, documents, traces and sources), so
// that no configured secret is written to disk.
func (s *Store) RedactWith(f func(string) string) { s.redact = f }

// DefaultPath returns $XDG_DATA_HOME/steward/steward.db, or
// ~/.local/share/steward/steward.db.
func DefaultPath() (string, error) {
	dir := os.Getenv("XDG_DATA_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("finding the data directory: set XDG_DATA_HOME or HOME: %w", err)
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "steward", "steward.db"), nil
}

const schema = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chats (
	id TEXT PRIMARY KEY,
	title TEXT NOT NULL,
	system_prompt TEXT NOT NULL,
	provider TEXT NOT NULL,
	model TEXT NOT NULL,
	created TEXT NOT NULL,
	updated TEXT NOT NULL,
	required_confidence TEXT NOT NULL,
	data_security TEXT NOT NULL,
	outbound_set INTEGER NOT NULL,
	outbound_restriction TEXT NOT NULL,
	outbound_mailbox_id TEXT NOT NULL,
	outbound_mailbox_name TEXT NOT NULL,
	base_url TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS messages (
	chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
	seq INTEGER NOT NULL,
	role TEXT NOT NULL,
	text TEXT NOT NULL,
	hidden INTEGER NOT NULL,
	created TEXT NOT NULL,
	documents TEXT NOT NULL,
	traces TEXT NOT NULL,
	sources TEXT NOT NULL,
	incomplete INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (chat_id, seq)
);
CREATE TABLE IF NOT EXISTS chat_data_sources (
	chat_id TEXT PRIMARY KEY REFERENCES chats(id) ON DELETE CASCADE,
	options TEXT NOT NULL
);
`

// schemaVersion is written to meta; a newer database is refused rather than
// misread. Version 2 adds chats.base_url and messages.incomplete.
const schemaVersion = "2"

// migrations bring a database of the version before each to the next.
var migrations = map[string]string{
	"1": `ALTER TABLE chats ADD COLUMN base_url TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN incomplete INTEGER NOT NULL DEFAULT 0;`,
}

// Open opens (creating when needed) the database at path.
func Open(ctx context.Context, path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating the data directory: %w", err)
	}
	dsn := "file:" + filepath.ToSlash(path) + "?_pragma=journal_mode(wal)&_pragma=foreign_keys(1)&_pragma=busy_timeout(5000)&_pragma=synchronous(normal)"
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("opening the chat store %s: %w", path, err)
	}
	if _, err := db.ExecContext(ctx, schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("preparing the chat store %s: %w", path, err)
	}
	var v string
	err = db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='schema_version'`).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := db.ExecContext(ctx, `INSERT INTO meta(key,value) VALUES('schema_version',?)`, schemaVersion); err != nil {
			db.Close()
			return nil, err
		}
	case err != nil:
		db.Close()
		return nil, err
	case v != schemaVersion:
		if err := migrate(ctx, db, v); err != nil {
			db.Close()
			return nil, fmt.Errorf("the chat store %s: %w", path, err)
		}
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		_ = os.Chmod(p, 0o600)
	}
	return &Store{db: db}, nil
}

// migrate brings a database of version from to schemaVersion, one version
// at a time, in one transaction; a version it does not know (a newer
// Steward's) is refused.
func migrate(ctx context.Context, db *sql.DB, from string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for v := from; v != schemaVersion; {
		q, ok := migrations[v]
		if !ok {
			return fmt.Errorf("it has schema version %s, this Steward reads version %s: update Steward", from, schemaVersion)
		}
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("migrating from schema version %s: %w", v, err)
		}
		n, _ := strconv.Atoi(v)
		v = strconv.Itoa(n + 1)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE meta SET value=? WHERE key='schema_version'`, schemaVersion); err != nil {
		return err
	}
	return tx.Commit()
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

const timeFormat = time.RFC3339Nano

// Save writes the whole chat in one transaction: either all of it is stored
// or the earlier state stays.
func (s *Store) Save(ctx context.Context, c *Chat) error {
	if c.ID == "" {
		return errors.New("store: a chat needs an ID")
	}
	now := time.Now().UTC()
	if c.Created.IsZero() {
		c.Created = now
	}
	c.Updated = now
	if s.redact != nil {
		c = redacted(c, s.redact)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	outSet := 0
	if c.Outbound.Set {
		outSet = 1
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO chats(id,title,system_prompt,provider,model,created,updated,required_confidence,data_security,outbound_set,outbound_restriction,outbound_mailbox_id,outbound_mailbox_name,base_url)
VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)
ON CONFLICT(id) DO UPDATE SET title=excluded.title, system_prompt=excluded.system_prompt, provider=excluded.provider, model=excluded.model, base_url=excluded.base_url,
updated=excluded.updated, required_confidence=excluded.required_confidence, data_security=excluded.data_security, outbound_set=excluded.outbound_set,
outbound_restriction=excluded.outbound_restriction, outbound_mailbox_id=excluded.outbound_mailbox_id, outbound_mailbox_name=excluded.outbound_mailbox_name`,
		c.ID, c.Title, c.SystemPrompt, c.Provider, c.Model, c.Created.Format(timeFormat), c.Updated.Format(timeFormat),
		c.RequiredConfidence.String(), c.DataSecurity.String(), outSet, c.Outbound.Restriction.String(), c.Outbound.MailboxID, c.Outbound.MailboxName, c.BaseURL)
	if err != nil {
		return fmt.Errorf("storing chat %s: %w", c.ID, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE chat_id=?`, c.ID); err != nil {
		return err
	}
	if c.DataSources == nil {
		if _, err := tx.ExecContext(ctx, `DELETE FROM chat_data_sources WHERE chat_id=?`, c.ID); err != nil {
			return err
		}
	} else {
		opts, _ := json.Marshal(c.DataSources)
		if _, err := tx.ExecContext(ctx, `INSERT INTO chat_data_sources(chat_id,options) VALUES(?,?) ON CONFLICT(chat_id) DO UPDATE SET options=excluded.options`, c.ID, string(opts)); err != nil {
			return fmt.Errorf("storing the data-source options of chat %s: %w", c.ID, err)
		}
	}
	for i, m := range c.Messages {
		if m.Created.IsZero() {
			m.Created = now
		}
		docs, _ := json.Marshal(nonNil(m.Documents))
		traces, _ := json.Marshal(nonNil(m.Traces))
		sources, _ := json.Marshal(nonNil(m.Sources))
		hidden := 0
		if m.Hidden {
			hidden = 1
		}
		incomplete := 0
		if m.Incomplete {
			incomplete = 1
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages(chat_id,seq,role,text,hidden,created,documents,traces,sources,incomplete) VALUES(?,?,?,?,?,?,?,?,?,?)`,
			c.ID, i, m.Role, m.Text, hidden, m.Created.Format(timeFormat), string(docs), string(traces), string(sources), incomplete); err != nil {
			return fmt.Errorf("storing a message of chat %s: %w", c.ID, err)
		}
	}
	return tx.Commit()
}

// redacted returns a copy of c with f applied to every text.
func redacted(c *Chat, f func(string) string) *Chat {
	out := *c
	out.Title, out.SystemPrompt = f(c.Title), f(c.SystemPrompt)
	out.Messages = make([]Message, len(c.Messages))
	for i, m := range c.Messages {
		m.Text = f(m.Text)
		m.Documents = append([]Document(nil), m.Documents...)
		for j := range m.Documents {
			m.Documents[j].Name, m.Documents[j].Text = f(m.Documents[j].Name), f(m.Documents[j].Text)
		}
		m.Traces = append([]Trace(nil), m.Traces...)
		for j := range m.Traces {
			m.Traces[j].StatusMessage, m.Traces[j].Arguments = f(m.Traces[j].StatusMessage), f(m.Traces[j].Arguments)
		}
		m.Sources = append([]Source(nil), m.Sources...)
		for j := range m.Sources {
			m.Sources[j].Title, m.Sources[j].URL = f(m.Sources[j].Title), f(m.Sources[j].URL)
		}
		out.Messages[i] = m
	}
	return &out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Load reads a chat by its full ID or by a unique prefix of it.
func (s *Store) Load(ctx context.Context, idOrPrefix string) (*Chat, error) {
	id, err := s.resolve(ctx, idOrPrefix)
	if err != nil {
		return nil, err
	}
	c := &Chat{}
	var created, updated, conf, sec, restr string
	var outSet int
	err = s.db.QueryRowContext(ctx, `SELECT id,title,system_prompt,provider,model,created,updated,required_confidence,data_security,outbound_set,outbound_restriction,outbound_mailbox_id,outbound_mailbox_name,base_url FROM chats WHERE id=?`, id).
		Scan(&c.ID, &c.Title, &c.SystemPrompt, &c.Provider, &c.Model, &created, &updated, &conf, &sec, &outSet, &restr, &c.Outbound.MailboxID, &c.Outbound.MailboxName, &c.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("reading chat %s: %w", id, err)
	}
	c.Created, _ = time.Parse(timeFormat, created)
	c.Updated, _ = time.Parse(timeFormat, updated)
	// A level this version cannot read counts as the strictest, never as
	// the most open: a stored requirement must not loosen on load.
	if c.RequiredConfidence, err = policy.ParseConfidence(conf); err != nil {
		c.RequiredConfidence = policy.High
	}
	if c.DataSecurity, err = policy.ParseDataSecurity(sec); err != nil {
		c.DataSecurity = policy.SelfHosted
	}
	c.Outbound.Set = outSet == 1
	c.Outbound.Restriction, _ = policy.ParseRestriction(restr)
	var opts string
	switch err := s.db.QueryRowContext(ctx, `SELECT options FROM chat_data_sources WHERE chat_id=?`, id).Scan(&opts); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, fmt.Errorf("reading the data-source options of chat %s: %w", id, err)
	default:
		c.DataSources = &DataSourceOptions{}
		if err := json.Unmarshal([]byte(opts), c.DataSources); err != nil {
			return nil, fmt.Errorf("chat %s: unreadable data-source options: %w", id, err)
		}
	}
	rows, err := s.db.QueryContext(ctx, `SELECT role,text,hidden,created,documents,traces,sources,incomplete FROM messages WHERE chat_id=? ORDER BY seq`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var m Message
		var hidden, incomplete int
		var mc, docs, traces, sources string
		if err := rows.Scan(&m.Role, &m.Text, &hidden, &mc, &docs, &traces, &sources, &incomplete); err != nil {
			return nil, err
		}
		m.Hidden = hidden == 1
		m.Incomplete = incomplete == 1
		m.Created, _ = time.Parse(timeFormat, mc)
		if err := json.Unmarshal([]byte(docs), &m.Documents); err != nil {
			return nil, fmt.Errorf("chat %s: unreadable documents: %w", id, err)
		}
		if err := json.Unmarshal([]byte(traces), &m.Traces); err != nil {
			return nil, fmt.Errorf("chat %s: unreadable traces: %w", id, err)
		}
		if err := json.Unmarshal([]byte(sources), &m.Sources); err != nil {
			return nil, fmt.Errorf("chat %s: unreadable sources: %w", id, err)
		}
		c.Messages = append(c.Messages, m)
	}
	return c, rows.Err()
}

func (s *Store) resolve(ctx context.Context, idOrPrefix string) (string, error) {
	idOrPrefix = strings.TrimSpace(idOrPrefix)
	if idOrPrefix == "" {
		return "", errors.New("a chat ID is required: see `steward chats` for the stored ones")
	}
	var id string
	err := s.db.QueryRowContext(ctx, `SELECT id FROM chats WHERE id=?`, idOrPrefix).Scan(&id)
	if err == nil {
		return id, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM chats WHERE substr(id,1,?)=? LIMIT 2`, len(idOrPrefix), idOrPrefix)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return "", err
		}
		found = append(found, v)
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%w: %q (see `steward chats` for the stored ones)", ErrNotFound, idOrPrefix)
	case 1:
		return found[0], nil
	default:
		return "", fmt.Errorf("the ID prefix %q matches several chats: give more characters", idOrPrefix)
	}
}

// List returns the stored chats, the most recently updated first.
func (s *Store) List(ctx context.Context) ([]Summary, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT c.id, c.title, c.updated, (SELECT count(*) FROM messages m WHERE m.chat_id=c.id) FROM chats c ORDER BY c.updated DESC, c.id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Summary
	for rows.Next() {
		var s Summary
		var upd string
		if err := rows.Scan(&s.ID, &s.Title, &upd, &s.Messages); err != nil {
			return nil, err
		}
		s.Updated, _ = time.Parse(timeFormat, upd)
		out = append(out, s)
	}
	return out, rows.Err()
}

// Delete removes a chat by ID or unique prefix.
func (s *Store) Delete(ctx context.Context, idOrPrefix string) (string, error) {
	id, err := s.resolve(ctx, idOrPrefix)
	if err != nil {
		return "", err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE chat_id=?`, id); err != nil {
		return "", err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM chat_data_sources WHERE chat_id=?`, id); err != nil {
		return "", err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM chats WHERE id=?`, id); err != nil {
		return "", err
	}
	return id, tx.Commit()
}
