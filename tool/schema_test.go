package tool

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// golden compares got (indented for reading) with testdata/<name>, or
// rewrites the file with -update.
func golden(t *testing.T, name string, got json.RawMessage) {
	t.Helper()
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, got, "", "  "); err != nil {
		t.Fatalf("%s: output is not JSON: %v\n%s", name, err, got)
	}
	pretty.WriteByte('\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v (run go test ./tool -run %s -update to create it)", name, err, t.Name())
	}
	if !bytes.Equal(pretty.Bytes(), want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, pretty.Bytes(), want)
	}
}

// isCompact reports whether raw has no whitespace outside strings.
func isCompact(raw []byte) bool {
	var c bytes.Buffer
	if err := json.Compact(&c, raw); err != nil {
		return false
	}
	return bytes.Equal(c.Bytes(), raw)
}

func builderCases() []struct {
	name   string
	schema *Schema
} {
	return []struct {
		name   string
		schema *Schema
	}{
		{"empty", NewSchema()},
		{"all_required", NewSchema().
			RequiredString("query", "What to search for.").
			RequiredInteger("limit", "How many results.").
			RequiredBoolean("include_headers", "Whether to add the header block.").
			RequiredEnum("order", "The order of results.", "newest", "oldest")},
		{"web_search", NewSchema().
			RequiredString("query", "The search query. Umlauts stay literal: Größe <b>&</b>.").
			OptionalEnum("time_range", "Only pages from this time range.", "day", "week", "month", "year").
			OptionalString("language", "A language code such as de.").
			OptionalInteger(PageArgument, "The page of results, from 1.")},
		{"arrays", NewSchema().
			RequiredStringArray("data_source_ids", "The data sources to search.", "ds-1", "ds-2").
			OptionalStringArray("keywords", "Words which must occur.").
			OptionalStringArray("kinds", "Kinds of results.", "mail", "attachment")},
		{"nested", NewSchema().
			RequiredString("query", "What to search for.").
			OptionalObject("filter", "Conditions the mails must meet.", NewSchema().
				OptionalString("from", "The sender.").
				RequiredEnum("folder", "The folder.", "inbox", "sent").
				OptionalBoolean("unread", "Only unread mails.").
				OptionalObject("received", "When the mail arrived.", NewSchema().
					OptionalString("after", "A date such as 2026-09-01.").
					OptionalString("before", "A date such as 2026-09-01."))).
			RequiredObject("options", "How to answer.", NewSchema().
				RequiredInteger("max_results", "At most this many."))},
	}
}

func TestSchemaBuilderGolden(t *testing.T) {
	for _, tc := range builderCases() {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := tc.schema.Build()
			if err != nil {
				t.Fatal(err)
			}
			if !isCompact(raw) {
				t.Errorf("schema is not compact JSON: %s", raw)
			}
			// Building twice gives the same bytes: the order is stable.
			again := tc.schema.MustBuild()
			if !bytes.Equal(raw, again) {
				t.Errorf("two builds differ:\n%s\n%s", raw, again)
			}
			golden(t, "schema/"+tc.name+".json", raw)
		})
	}
}

// TestSchemaOptionalIsAbsentFromRequired checks the seed's rule: an optional
// argument is simply absent from required, and required keeps the order in
// which the arguments were added.
func TestSchemaOptionalIsAbsentFromRequired(t *testing.T) {
	raw := NewSchema().
		OptionalString("b", "b").
		RequiredString("z", "z").
		OptionalInteger("c", "c").
		RequiredEnum("a", "a", "x", "y").
		MustBuild()
	var got struct {
		Type                 string                     `json:"type"`
		Properties           map[string]json.RawMessage `json:"properties"`
		Required             []string                   `json:"required"`
		AdditionalProperties *bool                      `json:"additionalProperties"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if got.Type != "object" || got.AdditionalProperties == nil || *got.AdditionalProperties {
		t.Errorf("want an object allowing no additional properties, got %s", raw)
	}
	if strings.Join(got.Required, ",") != "z,a" {
		t.Errorf("required = %v, want [z a]", got.Required)
	}
	if len(got.Properties) != 4 {
		t.Errorf("want 4 properties, got %d", len(got.Properties))
	}
	// Properties appear in the order they were added.
	order := []string{`"b":`, `"z":`, `"c":`, `"a":`}
	last := -1
	for _, k := range order {
		i := bytes.Index(raw, []byte(k))
		if i <= last {
			t.Fatalf("property %s is out of order in %s", k, raw)
		}
		last = i
	}
}

func TestSchemaBuilderMistakes(t *testing.T) {
	tests := []struct {
		name   string
		schema *Schema
		want   string
	}{
		{"twice", NewSchema().RequiredString("q", "").OptionalString("q", ""), `"q" is added twice`},
		{"no name", NewSchema().RequiredString("", "x"), "needs a name"},
		{"empty enum", NewSchema().RequiredEnum("order", "x"), "at least one choice"},
		{"duplicate choice", NewSchema().OptionalStringArray("k", "x", "a", "b", "a"), `choice "a" twice`},
		{"nested mistake", NewSchema().OptionalObject("f", "x", NewSchema().OptionalEnum("e", "x")), `property "f"`},
		{"first mistake wins", NewSchema().RequiredEnum("e", "x").RequiredString("q", "").RequiredString("q", ""), "at least one choice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.schema.Build()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
			defer func() {
				if recover() == nil {
					t.Error("MustBuild did not panic")
				}
			}()
			tc.schema.MustBuild()
		})
	}
}

func TestStrictSchemaGolden(t *testing.T) {
	cases := map[string]json.RawMessage{}
	var names []string
	for _, tc := range builderCases() {
		cases[tc.name] = tc.schema.MustBuild()
		names = append(names, tc.name)
	}
	handWritten := []struct {
		name string
		raw  string
	}{
		// A type array gains null at its end; an enum which has null keeps
		// it where it stands.
		{"type_array", `{"type":"object","properties":{"v":{"type":["string","integer"],"description":"A value."},"w":{"type":"string","enum":["a",null,"b"]}},"required":[]}`},
		// A property without a type but with anyOf gains a null branch.
		{"any_of", `{"type":"object","properties":{"when":{"anyOf":[{"type":"string"},{"type":"integer"}]},"id":{"type":"string"}},"required":["id"],"additionalProperties":false}`},
		// Objects nested in arrays are converted too; items of an optional
		// array stay as they are.
		{"array_of_objects", `{"type":"object","properties":{"rows":{"type":"array","items":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer","enum":[1,2]}},"required":["a"]}}}}`},
		// Required is rewritten where it stands, the member order is kept.
		{"member_order", `{"additionalProperties":false,"required":["z"],"properties":{"z":{"description":"Z","type":"string"},"a":{"enum":["x"],"type":"string","description":"A"}},"type":"object","description":"Ordered."}`},
		// Definitions are converted as well.
		{"defs", `{"type":"object","properties":{"p":{"$ref":"#/$defs/point"}},"required":["p"],"additionalProperties":false,"$defs":{"point":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x"],"additionalProperties":false}}}`},
		// An optional reference moves into an anyOf with a null branch.
		{"optional_ref", `{"type":"object","properties":{"from":{"$ref":"#/$defs/point","description":"Start."},"to":{"$ref":"#/$defs/point"}},"required":["to"],"additionalProperties":false,"$defs":{"point":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"],"additionalProperties":false}}}`},
	}
	for _, h := range handWritten {
		cases[h.name] = json.RawMessage(h.raw)
		names = append(names, h.name)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			in := cases[name]
			out, err := StrictSchema(in)
			if err != nil {
				t.Fatal(err)
			}
			if !isCompact(out) {
				t.Errorf("strict schema is not compact JSON: %s", out)
			}
			checkStrict(t, out)
			// Converting again changes nothing.
			again, err := StrictSchema(out)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, again) {
				t.Errorf("conversion is not idempotent:\n%s\n%s", out, again)
			}
			golden(t, "strict/"+name+".json", out)
		})
	}
}

// checkStrict walks a converted schema and checks OpenAI's strict rules at
// every depth: every object lists all of its properties in required, in
// property order, and allows nothing else.
func checkStrict(t *testing.T, raw json.RawMessage) {
	t.Helper()
	root, err := parseJSONTree(raw)
	if err != nil {
		t.Fatal(err)
	}
	var walk func(n *jsonNode, path string)
	walk = func(n *jsonNode, path string) {
		if n.kind == jsonObject && isObjectSchema(n) {
			props := n.get("properties")
			req := n.get("required")
			if props != nil && len(props.keys) > 0 {
				if req == nil || len(req.elems) != len(props.keys) {
					t.Errorf("%s: required does not list every property", path)
				} else {
					for i, k := range props.keys {
						if req.elems[i].text() != k {
							t.Errorf("%s: required[%d] = %q, want %q", path, i, req.elems[i].text(), k)
						}
					}
				}
			}
			if ap := n.get("additionalProperties"); ap == nil || string(ap.raw) != "false" {
				t.Errorf("%s: additionalProperties is not false", path)
			}
		}
		for i, v := range n.vals {
			walk(v, path+"."+n.keys[i])
		}
		for i, e := range n.elems {
			walk(e, path+"["+string(rune('0'+i%10))+"]")
		}
	}
	walk(root, "$")
}

// TestStrictSchemaOptionalBecomesNullable states the seed's rule directly:
// an optional argument allows null, null joins its enum first, and items
// are left alone.
func TestStrictSchemaOptionalBecomesNullable(t *testing.T) {
	in := NewSchema().
		RequiredString("query", "q").
		OptionalEnum("range", "r", "day", "week").
		OptionalStringArray("ids", "i", "a", "b").
		MustBuild()
	out, err := StrictSchema(in)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Properties map[string]struct {
			Type  any   `json:"type"`
			Enum  []any `json:"enum"`
			Items struct {
				Type string `json:"type"`
				Enum []any  `json:"enum"`
			} `json:"items"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Required, ",") != "query,range,ids" {
		t.Errorf("required = %v", got.Required)
	}
	if got.Properties["query"].Type != "string" {
		t.Errorf("a required property changed: %v", got.Properties["query"].Type)
	}
	r := got.Properties["range"]
	if tt, ok := r.Type.([]any); !ok || len(tt) != 2 || tt[0] != "string" || tt[1] != "null" {
		t.Errorf("range type = %v, want [string null]", r.Type)
	}
	if len(r.Enum) != 3 || r.Enum[0] != nil || r.Enum[1] != "day" {
		t.Errorf("range enum = %v, want [null day week]", r.Enum)
	}
	ids := got.Properties["ids"]
	if tt, ok := ids.Type.([]any); !ok || len(tt) != 2 || tt[0] != "array" || tt[1] != "null" {
		t.Errorf("ids type = %v, want [array null]", ids.Type)
	}
	if ids.Items.Type != "string" || len(ids.Items.Enum) != 2 {
		t.Errorf("items changed: %+v", ids.Items)
	}
}

func TestStrictSchemaUnchangedWhenNothingIsOptional(t *testing.T) {
	in := json.RawMessage(`{"type":"object",  "properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}`)
	out, err := StrictSchema(in)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(in, out) {
		t.Errorf("schema changed:\n%s\n%s", in, out)
	}
	// The result does not share memory with the input.
	out[0] = ' '
	if in[0] != '{' {
		t.Error("output aliases the input")
	}
}

func TestStrictSchemaRefuses(t *testing.T) {
	tests := []struct {
		name, raw, want string
	}{
		{"not json", `{"type":`, "not valid JSON"},
		{"trailing data", `{} {}`, "not valid JSON"},
		{"array root", `[]`, "must be a JSON Schema object"},
		{"unknown required", `{"type":"object","properties":{"a":{"type":"string"}},"required":["b"]}`, `names "b"`},
		{"additional allowed", `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":true}`, "allows additional properties"},
		{"nested additional", `{"type":"object","properties":{"o":{"type":"object","properties":{},"additionalProperties":{"type":"string"}}},"required":["o"],"additionalProperties":false}`, "parameters.properties.o allows additional"},
		{"property not a schema", `{"type":"object","properties":{"a":true}}`, "parameters.properties.a: a schema must be a JSON object"},
		{"properties not object", `{"type":"object","properties":[]}`, "properties must be an object"},
		{"required not array", `{"type":"object","properties":{},"required":"a"}`, "required must be an array"},
		{"duplicate property", `{"type":"object","properties":{"a":{"type":"string"},"a":{"type":"string"}}}`, `has "a" twice`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := StrictSchema(json.RawMessage(tc.raw))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// realisticSchema resembles search_mails: a dozen properties, enums, arrays
// and a nested object.
func realisticSchema() json.RawMessage {
	return NewSchema().
		OptionalString("query", "What to search for, by meaning and by words. Leave it out to list the newest mails.").
		OptionalStringArray("mailbox_ids", "The mailboxes to search.", "mb-1", "mb-2", "mb-3").
		OptionalString("from", "Only mails from this sender.").
		OptionalString("to", "Only mails to this recipient.").
		OptionalString("folder", "Only mails in this folder.").
		OptionalString("received_after", "A date such as 2026-09-01, or with a time of day such as 2026-09-01T14:30.").
		OptionalString("received_before", "A date such as 2026-09-01, or with a time of day such as 2026-09-01T14:30.").
		OptionalBoolean("has_attachments", "Only mails with attachments.").
		OptionalBoolean("unread", "Only unread mails.").
		OptionalEnum("order", "The order of mails without a query.", "newest", "oldest").
		OptionalObject("size", "Limits on the mail size.", NewSchema().
			OptionalInteger("min_kb", "At least this many kilobytes.").
			OptionalInteger("max_kb", "At most this many kilobytes.")).
		OptionalInteger(PageArgument, "The page of results, from 1.").
		MustBuild()
}

func BenchmarkStrictSchema(b *testing.B) {
	in := realisticSchema()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := StrictSchema(in); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzWriteJSONString checks the schema writer's string escaping against
// MarshalRelaxed, the one the result content uses.
func FuzzWriteJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "Größe <b>&</b>", "quote\" back\\slash", "\n\r\t\b\f\x00\x1f", "\u2028\u2029", "bad \xff utf8", "emoji 😀"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b bytes.Buffer
		writeJSONString(&b, s)
		want, err := MarshalRelaxed(s)
		if err != nil {
			t.Fatal(err)
		}
		if b.String() != want {
			t.Fatalf("writeJSONString(%q) = %s, MarshalRelaxed = %s", s, b.String(), want)
		}
	})
}

// FuzzStrictSchema converts arbitrary JSON: it never panics, and whatever
// it accepts comes out as valid, compact-or-unchanged JSON which a second
// conversion leaves as it is.
func FuzzStrictSchema(f *testing.F) {
	f.Add(string(realisticSchema()))
	f.Add(`{"type":"object","properties":{"a":{"type":"string","enum":["x"]}}}`)
	f.Add(`{"properties":{"a":{"anyOf":[{"type":"string"}]},"b":{"type":["integer"]}},"required":["a"]}`)
	f.Add(`{"type":"object","properties":{"a":{"type":"array","items":[{"type":"object"}]}},"$defs":{"d":{"type":"object"}}}`)
	f.Add(`{"type":"object","properties":{"a\u00e9\"":{"type":"string","description":"\u003c"}}}`)
	f.Fuzz(func(t *testing.T, s string) {
		out, err := StrictSchema(json.RawMessage(s))
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid output %s", out)
		}
		again, err := StrictSchema(out)
		if err != nil {
			t.Fatalf("second conversion failed: %v\n%s", err, out)
		}
		if !bytes.Equal(out, again) {
			t.Fatalf("not idempotent:\n%s\n%s", out, again)
		}
	})
}
