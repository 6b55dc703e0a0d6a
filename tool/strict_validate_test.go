package tool

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func compileSchema(t *testing.T, raw json.RawMessage) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem://schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem://schema.json")
	if err != nil {
		t.Fatalf("not a valid JSON Schema: %v\n%s", err, raw)
	}
	return s
}

// TestStrictSchemaLosesNothing validates calls against the schema as
// written and as converted: a call that leaves an optional argument out
// under the written schema says null for it under the strict one, and both
// refuse the same wrong values. "Nothing is lost there, because a tool
// treats an absent argument and a null one the same way."
func TestStrictSchemaLosesNothing(t *testing.T) {
	var written json.RawMessage
	for _, c := range builderCases() {
		if c.name == "nested" {
			written = c.schema.MustBuild()
		}
	}
	strict, err := StrictSchema(written)
	if err != nil {
		t.Fatal(err)
	}
	ws, ss := compileSchema(t, written), compileSchema(t, strict)
	tests := []struct {
		name             string
		call             string
		writtenOK, strOK bool
	}{
		{"optional left out", `{"query":"q","options":{"max_results":3}}`, true, false},
		{"optional as null", `{"query":"q","filter":null,"options":{"max_results":3}}`, false, true},
		{"nested optional as null", `{"query":"q","filter":{"from":null,"folder":"inbox","unread":null,"received":{"after":"2026-09-01","before":null}},"options":{"max_results":3}}`, false, true},
		{"nested optional left out", `{"query":"q","filter":{"folder":"inbox","received":{"after":"2026-09-01"}},"options":{"max_results":3}}`, true, false},
		{"all given", `{"query":"q","filter":{"from":"a","folder":"sent","unread":true,"received":{"after":"x","before":"y"}},"options":{"max_results":3}}`, true, true},
		{"required never null", `{"query":null,"filter":null,"options":{"max_results":3}}`, false, false},
		{"wrong choice", `{"query":"q","filter":{"from":null,"folder":"spam","unread":null,"received":null},"options":{"max_results":3}}`, false, false},
		{"unknown argument", `{"query":"q","filter":null,"options":{"max_results":3},"extra":1}`, false, false},
		{"unknown nested argument", `{"query":"q","filter":null,"options":{"max_results":3,"x":1}}`, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(tc.call)))
			if err != nil {
				t.Fatal(err)
			}
			if err := ws.Validate(inst); (err == nil) != tc.writtenOK {
				t.Errorf("written schema: valid=%v, want %v (%v)", err == nil, tc.writtenOK, err)
			}
			if err := ss.Validate(inst); (err == nil) != tc.strOK {
				t.Errorf("strict schema: valid=%v, want %v (%v)", err == nil, tc.strOK, err)
			}
		})
	}
}
