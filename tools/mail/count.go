package mail

import (
	"context"
	"encoding/json"

	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/store/mailindex"
	"github.com/stewardhq/steward/tool"
)

// Count is count_mails.
type Count struct{ base }

const countDescription = "Counts the user's mails in the local index of their mailboxes that meet the conditions, " +
	"by folder or by sender on request, with how many mails the folders held on the server at the last sync."

// NewCount returns count_mails.
func NewCount(o Options) *Count {
	params := addConditions(tool.NewSchema(), nil).
		OptionalEnum(ArgGroupBy, "Group the count by folder or by sender.", mailindex.GroupFolder, mailindex.GroupSender).MustBuild()
	return &Count{base{Base: tool.Base{Def: tool.Definition{
		ID:                CountID,
		Function:          tool.Function{Name: CountID, Description: countDescription, Parameters: params},
		VisibleIn:         tool.DefaultVisibility(),
		MinimumConfidence: policy.VeryLow,
	}}, o: o}}
}

// OutboundData is NoOutbound: only the local index is read.
func (*Count) OutboundData() policy.OutboundData { return policy.NoOutbound }

// ResolveFunction lists the readable mailboxes, or offers nothing.
func (c *Count) ResolveFunction(_ context.Context, rc tool.ResolveContext) (*tool.Function, error) {
	rs, err := c.offerable(rc.ProviderConfidence)
	if err != nil {
		return nil, err
	}
	params, err := addConditions(tool.NewSchema(), readableIDs(rs)).
		OptionalEnum(ArgGroupBy, "Group the count by folder or by sender.", mailindex.GroupFolder, mailindex.GroupSender).Build()
	if err != nil {
		return nil, err
	}
	f := rc.Definition.Function
	f.Description = countDescription + " Mailboxes:" + mailboxList(rs, false)
	f.Parameters = params
	return &f, nil
}

type groupJSON struct {
	Folder             string `json:"folder,omitempty"`
	Sender             string `json:"sender,omitempty"`
	MailCount          int64  `json:"mail_count"`
	ServerMessageCount *int64 `json:"server_message_count,omitempty"`
	ServerUnseenCount  *int64 `json:"server_unseen_count,omitempty"`
}

type countBoxJSON struct {
	ID                 string      `json:"id"`
	Name               string      `json:"name"`
	MailCount          *int64      `json:"mail_count,omitempty"`
	ServerMessageCount *int64      `json:"server_message_count,omitempty"`
	ServerUnseenCount  *int64      `json:"server_unseen_count,omitempty"`
	IndexedSince       string      `json:"indexed_since,omitempty"`
	IndexesAllMails    bool        `json:"indexes_all_mails"`
	LastCompleteSync   string      `json:"last_complete_sync,omitempty"`
	SyncRequested      bool        `json:"sync_requested,omitempty"`
	Groups             []groupJSON `json:"groups,omitempty"`
	MoreGroups         bool        `json:"more_groups,omitempty"`
	Folders            []string    `json:"folders,omitempty"`
	Issues             []string    `json:"issues,omitempty"`
}

// CountResult is the JSON count_mails returns.
type CountResult struct {
	Conditions map[string]any  `json:"conditions,omitempty"`
	GroupBy    string          `json:"group_by,omitempty"`
	Mailboxes  []*countBoxJSON `json:"mailboxes"`
}

func known(n int64) *int64 {
	if n < 0 {
		return nil
	}
	return &n
}

// Execute runs count_mails.
func (c *Count) Execute(ctx context.Context, raw json.RawMessage, ec tool.ExecContext) (tool.Result, error) {
	rs, err := c.readable(ec)
	if err != nil {
		return tool.Result{}, err
	}
	a, err := tool.ReadArgs(raw)
	if err != nil {
		return tool.Result{}, err
	}
	if err := a.RefuseUnknown(append([]string{ArgGroupBy}, conditionArgs...)...); err != nil {
		return tool.Result{}, err
	}
	loc := c.o.loc()
	cond, err := readConditions(a, rs, loc)
	if err != nil {
		return tool.Result{}, err
	}
	groupBy, _, err := a.OptionalChoice(ArgGroupBy, []string{mailindex.GroupFolder, mailindex.GroupSender}, "to count without groups")
	if err != nil {
		return tool.Result{}, err
	}
	out := CountResult{Conditions: cond.echo, GroupBy: groupBy}
	if len(out.Conditions) == 0 {
		out.Conditions = nil
	}
	var b batch
	var req requirements
	for _, r := range cond.mailboxes {
		box := &countBoxJSON{ID: r.Config.ID, Name: r.Config.Name}
		out.Mailboxes = append(out.Mailboxes, box)
		res, err := c.o.Service.Count(ctx, r, cond.filter, groupBy)
		if err != nil {
			if ctx.Err() != nil {
				return tool.Result{}, ctx.Err()
			}
			c.o.log().Warn("mailbox count failed", "mailbox_id", r.Config.ID, "mailbox", r.Config.Name, "error", err)
			box.Issues = append(box.Issues, "This mailbox could not be counted: its count is missing rather than zero.")
			continue
		}
		box.Issues = append(box.Issues, coverageIssues(res.Coverage, loc)...)
		box.IndexesAllMails, box.IndexedSince = coverageScope(res.Coverage)
		box.Issues = append(box.Issues, scopeIssues(res.Coverage, cond.filter, "counted")...)
		if !res.Coverage.LastCompleteSync.IsZero() {
			box.LastCompleteSync = res.Coverage.LastCompleteSync.In(loc).Format(TimeLayout)
		}
		if res.Folder.Unknown {
			box.Folders = res.Folder.Known
			box.Issues = append(box.Issues, unknownFolderIssue())
			continue
		}
		box.SyncRequested = res.Refresh.SyncRequested
		box.Issues = append(box.Issues, refreshIssues(res.Refresh, res.Coverage, loc)...)
		n := res.Mails
		box.MailCount = &n
		box.ServerMessageCount, box.ServerUnseenCount = known(res.ServerMessages), known(res.ServerUnseen)
		box.MoreGroups = res.MoreGroups
		src := mailSource(r)
		for _, g := range res.Groups {
			gj := groupJSON{MailCount: g.Mails}
			if groupBy == mailindex.GroupFolder {
				gj.Folder = g.Key
				gj.ServerMessageCount, gj.ServerUnseenCount = known(g.ServerMessages), known(g.ServerUnseen)
			} else {
				gj.Sender = g.Key
				if gj.Sender == "" {
					gj.Sender = "(no sender)"
				}
			}
			box.Groups = append(box.Groups, gj)
		}
		for i := range box.Groups {
			b.add(src, "sender", &box.Groups[i].Sender)
		}
		// A count of nothing brought nothing of the mailbox into the chat.
		if n > 0 {
			req.add(r)
		}
	}
	b.run(ctx, c.o.Guard)
	var res tool.Result
	req.apply(&res)
	res.JSON = out
	c.o.log().Info("count_mails ran", "mailboxes", len(cond.mailboxes), "group_by", groupBy)
	return res, nil
}
