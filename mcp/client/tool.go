package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stewardhq/steward/guard"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
)

// Tool is one tool of an MCP server as a Steward tool.
type Tool struct {
	tool.Base
	conn     *Conn
	remote   string
	schema   *schemaDoc
	outbound policy.OutboundData
	readOnly bool
	// gone is set when the server, started again, no longer lists the
	// tool; guarded by conn.mu.
	gone bool
}

var _ tool.Tool = (*Tool)(nil)

// OutboundData is the server's declared kind, tightened by the tool's own
// openWorldHint.
func (t *Tool) OutboundData() policy.OutboundData { return t.outbound }

// ReturnsUntrustedContent is true unless the server is declared trusted.
func (t *Tool) ReturnsUntrustedContent() bool { return !t.conn.srv.TrustedContent }

// ReadOnly is the server's claim that the tool changes nothing
// (readOnlyHint). It is a hint: Steward decides nothing with it.
func (t *Tool) ReadOnly() bool { return t.readOnly }

// Remote is the server's own name of the tool.
func (t *Tool) Remote() string { return t.remote }

// ServerID names the server the tool belongs to.
func (t *Tool) ServerID() string { return t.conn.srv.ID }

// Execute validates the arguments against the tool's schema, calls the
// server within its timeout and returns what it answered, truncated and,
// for an untrusted server, filtered. A failure names the server and never
// holds a secret.
func (t *Tool) Execute(ctx context.Context, args json.RawMessage, _ tool.ExecContext) (tool.Result, error) {
	c := t.conn
	sendArgs, err := checkArguments(t.schema, args)
	if err != nil {
		return tool.Result{}, err
	}
	session, err := c.live(ctx)
	if err != nil {
		return tool.Result{}, err
	}
	c.mu.Lock()
	gone := t.gone
	c.mu.Unlock()
	if gone {
		return tool.Result{}, fmt.Errorf("the MCP server %q no longer offers the tool %s since it started again; Steward takes its new tools when it starts again", c.srv.Name, t.remote)
	}
	callCtx, cancel := context.WithTimeout(ctx, c.srv.Timeout)
	defer cancel()
	res, err := session.CallTool(callCtx, &mcp.CallToolParams{Name: t.remote, Arguments: sendArgs})
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		cerr := c.callError(callCtx, err)
		var se *serverError
		if errors.As(cerr, &se) {
			msg := t.filterOne(ctx, "error", truncateRunes(se.message, 2000))
			return tool.Result{}, c.red.Error(fmt.Errorf("the MCP server %q refused the call: %s", c.srv.Name, msg))
		}
		return tool.Result{}, c.red.Error(cerr)
	}
	if res == nil {
		return tool.Result{}, fmt.Errorf("the MCP server %q answered without a result", c.srv.Name)
	}
	return t.result(ctx, res)
}

// part is one piece of a result on its way to the model.
type part struct {
	text string
	// source is set for a resource link to a web address.
	source *tool.Source
}

// result turns what the server answered into what the model reads.
func (t *Tool) result(ctx context.Context, res *mcp.CallToolResult) (tool.Result, error) {
	c := t.conn
	var parts []part
	for _, item := range res.Content {
		parts = append(parts, describe(item))
	}
	var structured any
	if res.StructuredContent != nil {
		structured = normalizeJSON(res.StructuredContent)
		// A server shows structured content as text too, for older
		// clients; the model needs it once.
		kept := parts[:0]
		for _, p := range parts {
			if p.source == nil && sameJSON(p.text, structured) {
				continue
			}
			kept = append(kept, p)
		}
		parts = kept
	}
	// Truncate first: only what reaches the model is filtered.
	budget := c.srv.MaxResultChars
	total := 0
	for _, p := range parts {
		total += utf8.RuneCountInString(p.text)
	}
	var structuredText string
	if structured != nil {
		structuredText, _ = tool.MarshalRelaxed(structured)
		total += utf8.RuneCountInString(structuredText)
	}
	cut := false
	left := budget
	for i := range parts {
		n := utf8.RuneCountInString(parts[i].text)
		if n > left {
			parts[i].text = truncateRunes(parts[i].text, left)
			cut = true
			left = 0
			continue
		}
		left -= n
	}
	filtered := t.filterParts(ctx, parts, structured)
	parts = filtered.parts
	if structured != nil {
		structuredText, _ = tool.MarshalRelaxed(filtered.structured)
		if n := utf8.RuneCountInString(structuredText); n > left {
			structuredText = truncateRunes(structuredText, left)
			cut = true
		}
	}
	var b strings.Builder
	var sources []tool.Source
	for _, p := range parts {
		if p.text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(p.text)
		if p.source != nil {
			sources = append(sources, *p.source)
		}
	}
	if structuredText != "" {
		if b.Len() > 0 {
			b.WriteString("\n\nStructured content:\n")
		}
		b.WriteString(structuredText)
	}
	if cut {
		fmt.Fprintf(&b, "\n\n[Steward cut this result: the MCP server %s returned %d characters; the first %d are shown. Ask for less, e.g. a narrower range, if more is needed.]", c.srv.Name, total, budget)
	}
	text := b.String()
	if res.IsError {
		if strings.TrimSpace(text) == "" {
			text = "the tool reported an error without saying what went wrong"
		}
		if !c.demandsSomething() {
			return tool.Result{}, fmt.Errorf("the MCP server %q reported an error: %s", c.srv.Name, text)
		}
		// The error's text reached the model all the same, so what the
		// server demands applies to it.
		text = "The tool reported an error:\n" + text
	}
	out := tool.Result{Text: text, Sources: sources}
	if strings.TrimSpace(text) == "" {
		out.Text = "The tool returned nothing."
		return out, nil
	}
	// What reached the model demands what the server is configured to.
	srv := c.srv
	out.RequiredConfidence = srv.ResultConfidence
	out.RequiredDataSecurity = srv.DataSecurity
	if srv.Outbound.Set {
		out.RequiredOutbound = policy.OutboundRequirement{Set: true, Restriction: srv.Outbound.Restriction,
			MailboxID: SourceID(srv.ID), MailboxName: srv.Name}
	}
	return out, nil
}

// demandsSomething reports whether a result of the server tightens the
// chat.
func (c *Conn) demandsSomething() bool {
	return c.srv.Outbound.Set || c.srv.ResultConfidence > policy.None || c.srv.DataSecurity != policy.NotSpecified
}

// describe writes one content item as text; what the model cannot read
// (images, audio, binary resources) is named, not sent.
func describe(item mcp.Content) part {
	switch v := item.(type) {
	case *mcp.TextContent:
		return part{text: v.Text}
	case *mcp.ImageContent:
		return part{text: fmt.Sprintf("[An image (%s, %d bytes) the model cannot be shown.]", mimeOr(v.MIMEType), len(v.Data))}
	case *mcp.AudioContent:
		return part{text: fmt.Sprintf("[Audio (%s, %d bytes) the model cannot be given.]", mimeOr(v.MIMEType), len(v.Data))}
	case *mcp.ResourceLink:
		name := firstOf(v.Title, v.Name, v.URI)
		text := fmt.Sprintf("Resource: %s <%s>", name, v.URI)
		if v.Description != "" {
			text += "\n" + v.Description
		}
		p := part{text: text}
		if u, err := url.Parse(v.URI); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
			p.source = &tool.Source{Title: name, URL: v.URI}
		}
		return p
	case *mcp.EmbeddedResource:
		if v.Resource == nil {
			return part{text: "[An embedded resource without content.]"}
		}
		if v.Resource.Text != "" {
			return part{text: fmt.Sprintf("Resource <%s>:\n%s", v.Resource.URI, v.Resource.Text)}
		}
		return part{text: fmt.Sprintf("[The resource <%s> (%s, %d bytes) is binary and cannot be shown.]", v.Resource.URI, mimeOr(v.Resource.MIMEType), len(v.Resource.Blob))}
	case nil:
		return part{}
	}
	return part{text: "[Content of a kind Steward does not show.]"}
}

func mimeOr(m string) string {
	if m == "" {
		return "unknown type"
	}
	return m
}

func firstOf(v ...string) string {
	for _, s := range v {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

type filteredResult struct {
	parts      []part
	structured any
}

// filterParts passes every text and every string of the structured
// content through the prompt-injection filter in one batch and action.
func (t *Tool) filterParts(ctx context.Context, parts []part, structured any) filteredResult {
	c := t.conn
	out := filteredResult{parts: parts, structured: structured}
	if c.srv.TrustedContent || c.opts.Guard == nil {
		return out
	}
	src := t.source()
	var texts []guard.Text
	var sets []func(string)
	for i := range out.parts {
		i := i
		if out.parts[i].text != "" {
			texts = append(texts, guard.Text{Source: src, Field: fmt.Sprintf("content[%d]", i), Text: out.parts[i].text})
			sets = append(sets, func(s string) { out.parts[i].text = s })
		}
		if s := out.parts[i].source; s != nil && s.Title != "" {
			texts = append(texts, guard.Text{Source: src, Field: fmt.Sprintf("content[%d].title", i), Text: s.Title})
			sets = append(sets, func(v string) { out.parts[i].source.Title = v })
		}
	}
	if structured != nil {
		out.structured = collectStrings(structured, "structuredContent", &texts, &sets, src, 0)
	}
	if len(texts) == 0 {
		return out
	}
	end := c.opts.Guard.BeginAction()
	outs := c.opts.Guard.FilterBatch(ctx, texts)
	end()
	for i, o := range outs {
		if i < len(sets) {
			sets[i](o.Text)
		}
	}
	return out
}

func (t *Tool) source() guard.Source {
	return guard.Source{Kind: guard.MCPContent, Label: fmt.Sprintf("MCP server %s, tool %s", t.conn.srv.Name, t.remote)}
}

// filterOne filters a single text of the server, e.g. an error message.
func (t *Tool) filterOne(ctx context.Context, field, text string) string {
	c := t.conn
	if c.srv.TrustedContent || c.opts.Guard == nil || text == "" {
		return text
	}
	end := c.opts.Guard.BeginAction()
	defer end()
	return c.opts.Guard.FilterBatch(ctx, []guard.Text{{Source: t.source(), Field: field, Text: text}})[0].Text
}

// collectStrings copies v, registering every string (object keys stay) to
// be filtered into the copy.
func collectStrings(v any, path string, texts *[]guard.Text, sets *[]func(string), src guard.Source, depth int) any {
	if depth > 64 {
		return nil
	}
	switch n := v.(type) {
	case string:
		holder := &n
		*texts = append(*texts, guard.Text{Source: src, Field: path, Text: n})
		*sets = append(*sets, func(s string) { *holder = s })
		return holder
	case map[string]any:
		m := make(map[string]any, len(n))
		for k, c := range n {
			m[k] = collectStrings(c, path+"."+k, texts, sets, src, depth+1)
		}
		return m
	case []any:
		l := make([]any, len(n))
		for i, c := range n {
			l[i] = collectStrings(c, fmt.Sprintf("%s[%d]", path, i), texts, sets, src, depth+1)
		}
		return l
	}
	return v
}

// normalizeJSON turns any value into the plain JSON types.
func normalizeJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}

// sameJSON reports whether text is the JSON of v.
func sameJSON(text string, v any) bool {
	var w any
	if json.Unmarshal([]byte(text), &w) != nil {
		return false
	}
	return reflect.DeepEqual(w, v)
}

// truncateRunes keeps the first n characters of s, cut at a line break
// in the last tenth when there is one.
func truncateRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	out := string(r[:n])
	if i := strings.LastIndexByte(out, '\n'); i > 0 && utf8.RuneCountInString(out[:i]) > n*9/10 {
		out = out[:i]
	}
	return out
}

func marshalSchema(doc map[string]any) (json.RawMessage, error) {
	s, err := tool.MarshalRelaxed(doc)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(s), nil
}
