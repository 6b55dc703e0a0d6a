package registry

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
)

// The registry "rejects invalid definitions with a reason"; the first
// failure wins.
func TestNewRejectsInvalidDefinitions(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(*tool.Definition)
		reason string
	}{
		{"blank ID", func(d *tool.Definition) { d.ID = " " }, "ID is blank"},
		{"upper-case ID", func(d *tool.Definition) { d.ID, d.Function.Name = "Web_Search", "Web_Search" }, "lower-case"},
		{"ID with a hyphen", func(d *tool.Definition) { d.ID = "web-search" }, "lower-case"},
		{"empty function name", func(d *tool.Definition) { d.Function.Name = "" }, "function name"},
		{"function name of 65", func(d *tool.Definition) { d.Function.Name = strings.Repeat("a", 65) }, "function name"},
		{"function name with a dot", func(d *tool.Definition) { d.Function.Name = "web.search" }, "function name"},
		{"parameters an array", func(d *tool.Definition) { d.Function.Parameters = json.RawMessage(`[]`) }, "JSON Schema object"},
		{"parameters null", func(d *tool.Definition) { d.Function.Parameters = json.RawMessage(`null`) }, "JSON Schema object"},
		{"parameters missing", func(d *tool.Definition) { d.Function.Parameters = nil }, "JSON Schema object"},
		{"parameters broken", func(d *tool.Definition) { d.Function.Parameters = json.RawMessage(`{"type":`) }, "JSON Schema object"},
		{"unknown allowed component", func(d *tool.Definition) { d.VisibleIn.Allowed = []string{"CHAT", "SPACESHIP"} }, `"SPACESHIP"`},
		{"unknown denied component", func(d *tool.Definition) { d.VisibleIn.Denied = []string{"chat"} }, `"chat"`},
		{"blank setting name", func(d *tool.Definition) { d.Settings.Fields = []tool.SettingField{{Name: " "}} }, "blank name"},
		{"setting defined twice", func(d *tool.Definition) { d.Settings.Fields = []tool.SettingField{{Name: "a"}, {Name: "a"}} }, "defined twice"},
		{"setting not a string", func(d *tool.Definition) { d.Settings.Fields = []tool.SettingField{{Name: "a", Type: "integer"}} }, "only string"},
		{"whitespace group", func(d *tool.Definition) { d.Settings.Fields = []tool.SettingField{{Name: "a", Group: "  "}} }, "whitespace"},
		{"option source and enum", func(d *tool.Definition) {
			d.Settings.Fields = []tool.SettingField{{Name: "a", OptionSource: "FREE_ADDRESS_CHOICE", Enum: []string{"ON"}}}
		}, "both an option source and an enum"},
		{"unknown option source", func(d *tool.Definition) {
			d.Settings.Fields = []tool.SettingField{{Name: "a", OptionSource: "COLOURS"}}
		}, `unknown option source "COLOURS"`},
		{"secret with a default", func(d *tool.Definition) {
			d.Settings.Fields = []tool.SettingField{{Name: "a", Secret: true, Default: "x"}}
		}, "never takes one"},
		{"required not defined", func(d *tool.Definition) { d.Settings.Required = []string{"b"} }, `"b" is not defined`},
		{"required blank", func(d *tool.Definition) {
			d.Settings.Fields = []tool.SettingField{{Name: "a"}}
			d.Settings.Required = []string{""}
		}, "required setting name is blank"},
		{"unknown activation", func(d *tool.Definition) { d.Activation = 7 }, "activation"},
		{"undefined confidence", func(d *tool.Definition) { d.MinimumConfidence = 5 }, "minimum confidence"},
		{"function name differs without reason", func(d *tool.Definition) { d.Function.Name = "search_web" }, "without a stated reason"},
		{"key differs without reason", func(d *tool.Definition) { d.ImplementationKey = "web_search_v2" }, "without a stated reason"},
		{"first failure wins", func(d *tool.Definition) {
			d.Function.Name = "bad name"
			d.Function.Parameters = json.RawMessage(`[]`)
			d.VisibleIn.Allowed = []string{"NOWHERE"}
		}, "function name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake("web_search", tt.edit)
			r, errs := New(Options{OptionSources: []string{"FREE_ADDRESS_CHOICE"}}, []tool.Tool{f, newFake("other", nil)}, nil)
			if len(errs) != 1 {
				t.Fatalf("want one error, got %v", errs)
			}
			var re *RegistrationError
			if !errors.As(errs[0], &re) || re.Kind != "tool" || !strings.Contains(re.Reason, tt.reason) {
				t.Fatalf("got %v, want a tool rejection containing %q", errs[0], tt.reason)
			}
			if r.IsKnown(f.Def.ID) || !r.IsKnown("other") {
				t.Fatal("the invalid tool must be left out and the valid one kept")
			}
		})
	}
}

func TestNewAcceptsValidVariants(t *testing.T) {
	tools := []tool.Tool{
		newFake("read_web_page", func(d *tool.Definition) {
			d.Settings = tool.SettingsSchema{
				Fields: []tool.SettingField{
					{Name: "freeAddressChoice", Type: "String", OptionSource: "FREE_ADDRESS_CHOICE", Group: "Addresses"},
					{Name: "mode", Enum: []string{"a", "b"}},
					{Name: "token", Secret: true},
				},
				Required: []string{"mode"},
			}
			d.VisibleIn = tool.Visibility{Allowed: []string{"CHAT"}, Denied: []string{"WRITER"}}
			d.MinimumConfidence = policy.High
		}),
		// A stated reason lets ID, key and function name differ.
		newFake("legacy_search", func(d *tool.Definition) { d.Function.Name = "search"; d.ImplementationKey = "legacy" }),
		newFake("semantic_search", func(d *tool.Definition) { d.Activation = tool.Context }),
	}
	mustNew(t, Options{OptionSources: []string{"FREE_ADDRESS_CHOICE"}, NamingReasons: map[string]string{"legacy_search": "providers cached the old name"}}, tools, nil)
}

// Duplicate keys, IDs and function names: the first wins, later ones are
// rejected with a reason.
func TestNewDuplicates(t *testing.T) {
	first := newFake("web_search", func(d *tool.Definition) { d.Function.Description = "first" })
	sameID := newFake("web_search", func(d *tool.Definition) { d.Function.Description = "second"; d.ImplementationKey = "web_search_2" })
	sameName := newFake("search_two", func(d *tool.Definition) { d.Function.Name = "web_search" })
	sameKey := newFake("search_three", func(d *tool.Definition) { d.ImplementationKey = "web_search" })
	opts := Options{NamingReasons: map[string]string{"web_search": "test", "search_two": "test", "search_three": "test"}}
	r, errs := New(opts, []tool.Tool{first, nil, sameID, sameName, sameKey}, nil)
	want := []string{"nil", "ID is taken", `function name "web_search" is taken by tool "web_search"`, `implementation key "web_search" is taken`}
	if len(errs) != len(want) {
		t.Fatalf("errors %v", errs)
	}
	for i, w := range want {
		if !strings.Contains(errs[i].Error(), w) {
			t.Errorf("error %d = %v, want %q", i, errs[i], w)
		}
	}
	c, _ := r.Collection("web_search")
	if c.Description != "first" || r.IsKnown("search_two") || r.IsKnown("search_three") {
		t.Fatalf("the first registration must win: %+v", c)
	}
}

// "ToolRegistry registers collections after the tools and leaves out what
// it cannot accept: a collection taking the ID of a tool, a tool which is
// not registered or which offers itself from the context of a chat, and a
// tool another collection claimed first."
func TestCollections(t *testing.T) {
	tools := []tool.Tool{
		newFake("search_mails", nil), newFake("read_mail", nil), newFake("count_mails", nil),
		newFake("semantic_search", func(d *tool.Definition) { d.Activation = tool.Context }),
		newFake("web_search", nil),
	}
	cols := []Collection{
		{ID: "mailboxes", ToolIDs: []string{"search_mails", "read_mail", "read_mail", "ghost", "count_mails"}, MinimumConfidence: policy.VeryLow},
		{ID: "web_search", ToolIDs: []string{"web_search"}},
		{ID: "context", ToolIDs: []string{"semantic_search"}},
		{ID: "mail_again", ToolIDs: []string{"read_mail", "web_search"}},
		{ID: "mailboxes", ToolIDs: []string{"web_search"}},
		{ID: " ", ToolIDs: []string{"web_search"}},
		{ID: "Bad", ToolIDs: []string{"web_search"}},
		{ID: "empty"},
		{ID: "bad_level", ToolIDs: []string{"web_search"}, MinimumConfidence: 3},
	}
	r, errs := New(Options{}, tools, cols)
	want := []string{
		`collection "mailboxes" leaves out tool "read_mail": the tool is listed twice`,
		`collection "mailboxes" leaves out tool "ghost": no such tool is registered`,
		`collection "web_search" rejected: the ID is a tool's ID`,
		`collection "context" leaves out tool "semantic_search": the tool offers itself`,
		`collection "context" rejected: none of its tools`,
		`collection "mail_again" leaves out tool "read_mail": collection "mailboxes" claimed the tool first`,
		`collection "mailboxes" rejected: the ID is taken by an earlier collection`,
		`collection " " rejected: the ID is blank`,
		`collection "Bad" rejected: the ID must be lower-case`,
		`collection "empty" rejected: none of its tools`,
		`collection "bad_level" rejected: minimum confidence 3`,
	}
	if len(errs) != len(want) {
		t.Fatalf("errors:\n%v", errors.Join(errs...))
	}
	for i, w := range want {
		if !strings.Contains(errs[i].Error(), w) {
			t.Errorf("error %d = %v\nwant %q", i, errs[i], w)
		}
	}
	// mail_again kept web_search, which therefore is no lone tool.
	for id, wantCol := range map[string]string{
		"search_mails": "mailboxes", "read_mail": "mailboxes", "count_mails": "mailboxes",
		"web_search": "mail_again", "semantic_search": "semantic_search", "unknown_x": "unknown_x", "mailboxes": "mailboxes",
	} {
		if got := r.CollectionID(id); got != wantCol {
			t.Errorf("CollectionID(%s) = %s, want %s", id, got, wantCol)
		}
	}
	c, ok := r.Collection("mailboxes")
	if !ok || strings.Join(c.ToolIDs, ",") != "search_mails,read_mail,count_mails" || c.MinimumConfidence != policy.VeryLow {
		t.Fatalf("mailboxes = %+v", c)
	}
	for _, id := range []string{"mailboxes", "search_mails", "semantic_search", "mail_again"} {
		if !r.IsKnown(id) {
			t.Errorf("IsKnown(%s) = false", id)
		}
	}
	for _, id := range []string{"context", "empty", "ghost"} {
		if r.IsKnown(id) {
			t.Errorf("IsKnown(%s) = true", id)
		}
	}
}

// "Whether it exists right now follows from its tools: it disappears with
// the last of them."
func TestCollectionExistsWhileAToolIsAvailable(t *testing.T) {
	a, b := newFake("search_mails", nil), newFake("read_mail", nil)
	a.unavailable, b.unavailable = true, true
	lone := newFake("web_search", nil)
	lone.unavailable = true
	r := mustNew(t, Options{}, []tool.Tool{a, b, lone}, []Collection{{ID: "mailboxes", ToolIDs: []string{"search_mails", "read_mail"}}})
	if _, ok := r.Collection("mailboxes"); ok {
		t.Fatal("a collection without an available tool must not exist")
	}
	if _, ok := r.Collection("web_search"); ok {
		t.Fatal("an unavailable lone tool's collection must not exist")
	}
	b.unavailable = false
	if _, ok := r.Collection("mailboxes"); !ok {
		t.Fatal("the collection must exist while one of its tools is available")
	}
}

// The visibility table: flags while both lists are empty, lists otherwise;
// an empty allow list allows all, the deny list wins.
func TestVisible(t *testing.T) {
	const assistant = "EMAIL_ASSISTANT"
	tests := []struct {
		name            string
		v               tool.Visibility
		chat, assistant bool
	}{
		{"zero value", tool.Visibility{}, false, false},
		{"both flags", tool.Visibility{Chat: true, Assistants: true}, true, true},
		{"chat flag only", tool.Visibility{Chat: true}, true, false},
		{"assistants flag only", tool.Visibility{Assistants: true}, false, true},
		{"allow list replaces flags", tool.Visibility{Allowed: []string{assistant}}, false, true},
		{"allow list ignores a true chat flag", tool.Visibility{Chat: true, Allowed: []string{assistant}}, false, true},
		{"deny only: empty allow allows every component", tool.Visibility{Denied: []string{"WRITER"}}, true, true},
		{"deny only overrides false flags", tool.Visibility{Chat: false, Assistants: false, Denied: []string{"WRITER"}}, true, true},
		{"deny wins over allow", tool.Visibility{Allowed: []string{ComponentChat, assistant}, Denied: []string{ComponentChat}}, false, true},
		{"deny the assistant", tool.Visibility{Chat: true, Assistants: true, Denied: []string{assistant}}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Visible(tt.v, ComponentChat); got != tt.chat {
				t.Errorf("chat: %v", got)
			}
			if got := Visible(tt.v, assistant); got != tt.assistant {
				t.Errorf("assistant: %v", got)
			}
		})
	}
	if !IsComponent("CHAT") || IsComponent("chat") || len(Components()) != 30 {
		t.Fatal("component list")
	}
}
