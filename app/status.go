package app

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/stewardhq/steward/chat"
	"github.com/stewardhq/steward/tools/webpage"
)

// MailboxView is a mailbox and what the index holds of it, as `steward
// mail status` shows it. Folder names are the user's own data: surfaces
// show them, logs never do.
type MailboxView struct {
	ID                 string          `json:"id"`
	Name               string          `json:"name"`
	Host               string          `json:"host"`
	ConfiguredBy       string          `json:"configured_by"`
	RequiredConfidence string          `json:"required_confidence"`
	Outbound           string          `json:"outbound_data_restriction"`
	MaxAgeDays         int             `json:"max_age_days"`
	Mails              int64           `json:"mails"`
	Chunks             int64           `json:"chunks"`
	Embedded           int64           `json:"embedded"`
	EmbeddingModel     string          `json:"embedding_model"`
	NeverSynced        bool            `json:"never_synced"`
	LastCompleteSync   *time.Time      `json:"last_complete_sync"`
	SignInRefusedAt    *time.Time      `json:"sign_in_refused_at"`
	IndexesAllMails    bool            `json:"indexes_all_mails"`
	IndexedSince       *time.Time      `json:"indexed_since"`
	Folders            []MailboxFolder `json:"folders"`
	// Problem says why the status could not be read; empty otherwise.
	Problem string `json:"problem"`
}

// MailboxFolder is one indexed folder.
type MailboxFolder struct {
	Path             string     `json:"path"`
	Indexed          int64      `json:"indexed"`
	ServerMessages   int64      `json:"server_messages"`
	LastCompleteSync *time.Time `json:"last_complete_sync"`
}

// MailboxStatuses reads the status of every configured mailbox from the
// local index; it never contacts a mail server. A mailbox whose status
// cannot be read carries the problem instead.
func (a *App) MailboxStatuses(ctx context.Context) ([]MailboxView, error) {
	cfgs := a.MailboxConfigs()
	out := []MailboxView{}
	if len(cfgs) == 0 {
		return out, nil
	}
	svc, err := a.MailServiceForUser(ctx)
	if err != nil {
		return nil, err
	}
	nOrg := len(a.Org.Mailboxes)
	for i, c := range cfgs {
		v := MailboxView{ID: c.ID, Name: c.Name, Host: c.Host, ConfiguredBy: "your settings", RequiredConfidence: c.RequiredConfidence.String(),
			Outbound: c.Outbound.Normalize().String(), MaxAgeDays: c.MaxAgeDays, Folders: []MailboxFolder{}}
		if i < nOrg {
			v.ConfiguredBy = "organization"
		}
		st, err := svc.Status(ctx, c)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			v.Problem = err.Error()
			out = append(out, v)
			continue
		}
		v.Mails, v.Chunks, v.Embedded, v.EmbeddingModel = int64(st.Stats.Mails), int64(st.Stats.Chunks), int64(st.Stats.Embedded), st.EmbeddingModel
		cov := st.Coverage
		v.NeverSynced, v.IndexesAllMails = cov.Unknown, cov.IndexesAllMails
		v.LastCompleteSync, v.SignInRefusedAt, v.IndexedSince = timeOrNil(cov.LastCompleteSync), timeOrNil(cov.SignInRefusedAt), timeOrNil(cov.IndexedSince)
		for _, f := range cov.Folders {
			v.Folders = append(v.Folders, MailboxFolder{Path: f.Path, Indexed: int64(f.Indexed), ServerMessages: int64(f.ServerMessages), LastCompleteSync: timeOrNil(f.LastCompleteSync)})
		}
		out = append(out, v)
	}
	return out, nil
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// MCPView is one configured MCP server and whether it runs.
type MCPView struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Type         string `json:"type"`
	ConfiguredBy string `json:"configured_by"`
	// State is "running", "disabled", "not started" or "failed".
	State string `json:"state"`
	// Problem says why it cannot be used; empty otherwise.
	Problem string `json:"problem"`
}

// MCPStatuses lists the configured MCP servers and what became of those
// this App started.
func (a *App) MCPStatuses() []MCPView {
	cfgs, _ := a.MCPServerConfigs()
	out := []MCPView{}
	for _, c := range cfgs {
		v := MCPView{ID: c.ID, Name: c.Name, Type: c.Type, ConfiguredBy: "your settings", State: "not started"}
		if c.Org {
			v.ConfiguredBy = "organization (" + c.Plugin + ")"
		}
		if c.Disabled {
			v.State = "disabled"
		}
		for _, s := range a.MCP {
			if s.Config.ID != c.ID {
				continue
			}
			switch {
			case s.Err != nil:
				v.State, v.Problem = "failed", s.Err.Error()
			case s.Conn != nil:
				v.State = "running"
			}
		}
		out = append(out, v)
	}
	return out
}

// Link is an address found in an answer and whether a surface may make
// it clickable.
type Link struct {
	URL       string `json:"url"`
	Clickable bool   `json:"clickable"`
}

// markdownTarget finds the targets of Markdown links and images,
// "[text](target" and "![alt](target".
var markdownTarget = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\]\(\s*<?([^\s)>]+)`) })

// Links lists the addresses in texts (bare ones and Markdown link
// targets, each once, in order) and whether the chat's outbound data
// restriction lets each be reached: a click carries the address, and
// whatever the model wrote into it, out of the chat. Only http and https
// addresses are ever clickable.
func (a *App) Links(t *chat.Thread, texts ...string) []Link {
	seen := map[string]bool{}
	out := []Link{}
	var wiki *url.URL
	if u, ok := a.wiki(); ok {
		wiki = u
	}
	add := func(u string) {
		u = strings.TrimSpace(u)
		if u == "" || seen[u] {
			return
		}
		seen[u] = true
		out = append(out, Link{URL: u, Clickable: webpage.AllowedByRestriction(t, wiki, u)})
	}
	for _, text := range texts {
		for _, m := range markdownTarget().FindAllStringSubmatch(text, -1) {
			add(m[1])
		}
		for _, u := range chat.FindWebAddresses(text) {
			add(u)
		}
	}
	return out
}
