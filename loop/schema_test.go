package loop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/stewardhq/steward/llm"
	"github.com/stewardhq/steward/loop"
	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
)

func eventSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	b, err := os.ReadFile("event.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	const url = "https://github.com/stewardhq/steward/loop/event.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validate(s *jsonschema.Schema, b []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// TestEventsMatchSchema runs scenarios that produce every kind of event and
// checks each event, as --json writes it, against event.schema.json.
func TestEventsMatchSchema(t *testing.T) {
	schema := eventSchema(t)
	secret := textTool("login", "ok")
	secret.sensitive = []string{"password"}
	locked := newTool("locked", policy.NoOutbound, func(context.Context, json.RawMessage, tool.ExecContext) (tool.Result, error) {
		return tool.Result{}, tool.Blocked("no")
	})
	src := newTool("read", policy.NoOutbound, func(context.Context, json.RawMessage, tool.ExecContext) (tool.Result, error) {
		return tool.Result{Text: "page", Sources: []tool.Source{{Title: "T", URL: "https://t.example/"}}}, nil
	})
	tools := offer(secret, locked, src)
	many := func() []step {
		var s []step
		for i := range 15 {
			s = append(s, step{calls: []llm.Call{call(fmt.Sprint("c", i), "read", `{}`)}})
		}
		return append(s, step{})
	}
	scenarios := map[string][]step{
		"answered": {
			{deltas: []string{"Hi"}, calls: []llm.Call{
				call("c1", "login", `{"user":"a","password":"p"}`),
				{ID: "c2", Name: "login", Arguments: json.RawMessage(`"x"`)},
				call("c3", "locked", `{}`),
				call("c4", "read", `{}`),
			}, usage: llm.Usage{InputTokens: 3, OutputTokens: 1, CachedTokens: 1}},
			{deltas: []string{"Done"}, sources: []llm.Citation{{URL: "https://p.example/"}}},
		},
		"limit":        many(),
		"invalid call": {{calls: []llm.Call{call("", "read", `{}`)}}},
		"no answer":    {{calls: []llm.Call{call("c1", "read", `{}`)}}, {}},
		"error":        {{deltas: []string{"x"}, err: errors.New("stream died")}},
		"silent":       {{}},
		"cancelled":    {{during: func(context.Context) error { return context.Canceled }}},
	}
	seen := map[loop.EventType]bool{}
	for name, steps := range scenarios {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			if name == "cancelled" {
				cancel()
			}
			defer cancel()
			rec := &recorder{}
			_, _ = loop.New(loop.Options{}).Run(ctx, newScripted(t, steps...), loop.RunContext{Tools: tools, Chat: &fakeChat{}, ProviderName: "P"}, rec)
			for _, e := range rec.events {
				seen[e.Type] = true
				b, err := json.Marshal(e)
				if err != nil {
					t.Fatal(err)
				}
				if err := validate(schema, b); err != nil {
					t.Errorf("event %s does not match the schema: %v", b, err)
				}
			}
		})
	}
	for _, ty := range []loop.EventType{loop.EventText, loop.EventToolCall, loop.EventTrace, loop.EventSources, loop.EventUsage, loop.EventError, loop.EventDone} {
		if !seen[ty] {
			t.Errorf("no scenario produced a %q event", ty)
		}
	}
	// The schema refuses what no event may look like.
	for _, bad := range []string{`{"type":"text"}`, `{"type":"done"}`, `{"type":"trace","trace":{"order":1}}`, `{"type":"nonsense"}`, `{"type":"text","text":"a","extra":1}`} {
		if validate(schema, []byte(bad)) == nil {
			t.Errorf("the schema accepts %s", bad)
		}
	}
}

// The events a surface adds around a run (the chat it belongs to, what the
// filter removed) match the schema as they are written.
func TestSurfaceEventsMatchSchema(t *testing.T) {
	schema := eventSchema(t)
	for _, e := range []loop.Event{
		{Type: loop.EventChat, Chat: &loop.ChatInfo{ID: "3f2a9c1e-0000-4000-8000-000000000000", Stored: true}},
		{Type: loop.EventChat, Chat: &loop.ChatInfo{ID: "x", Continued: true}},
		{Type: loop.EventFilter, Filter: &loop.FilterReport{Sources: []loop.FilteredSource{{Kind: "WEB_CONTENT", Label: "https://a.example/", Fields: []string{"content"},
			Findings: []loop.FilterFinding{{Rule: "phrase.override", Category: "override"}}}}}},
		{Type: loop.EventFilter, Filter: &loop.FilterReport{Sources: []loop.FilteredSource{}, Warning: "the classifier could not be reached"}},
	} {
		b, _ := json.Marshal(e)
		if err := validate(schema, b); err != nil {
			t.Errorf("event %s does not match the schema: %v", b, err)
		}
	}
	for _, bad := range []string{`{"type":"chat"}`, `{"type":"chat","chat":{"id":""}}`, `{"type":"filter","filter":{"sources":[{"kind":"WEB_CONTENT","label":"x","fields":[],"findings":[]}]}}`} {
		if validate(schema, []byte(bad)) == nil {
			t.Errorf("the schema accepts %s", bad)
		}
	}
}
