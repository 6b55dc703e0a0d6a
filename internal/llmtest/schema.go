package llmtest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema is a request schema of a provider API, compiled once on first
// use from the document Load returns.
type Schema struct {
	// Name names the schema in failures, e.g. "CreateMessageParams".
	Name string
	// Resource names the document, e.g. "anthropic-openapi.json"; the
	// schema is compiled at mem://<Resource><pointer>.
	Resource string
	// Load returns the API document, decoded as jsonschema.UnmarshalJSON
	// decodes it, and the JSON pointer of the schema within it (starting
	// with "#/").
	Load func(t testing.TB) (doc any, pointer string, err error)

	once   sync.Once
	schema *jsonschema.Schema
	err    error
}

// Validate checks body against the schema; the test fails if the schema
// cannot be compiled.
func (s *Schema) Validate(t testing.TB, body []byte) error {
	t.Helper()
	s.once.Do(func() {
		doc, pointer, err := s.Load(t)
		if err != nil {
			s.err = err
			return
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("mem://"+s.Resource, doc); err != nil {
			s.err = err
			return
		}
		s.schema, s.err = c.Compile("mem://" + s.Resource + pointer)
	})
	if s.err != nil {
		t.Fatalf("compiling %s: %v", s.Name, s.err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return err
	}
	return s.schema.Validate(inst)
}

// ValidateSent checks every request srv received against s.
func ValidateSent(t testing.TB, srv *ReplayServer, s *Schema) {
	t.Helper()
	for i, b := range srv.Bodies() {
		if err := s.Validate(t, b); err != nil {
			t.Errorf("request %d does not validate against %s: %v\n%.2000s", i, s.Name, err, b)
		}
	}
}

// CheckGolden compares body, indented, with the golden file at path;
// update rewrites the file first.
func CheckGolden(t testing.TB, path string, body []byte, update bool) {
	t.Helper()
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, body, "", "  "); err != nil {
		t.Fatal(err)
	}
	pretty.WriteByte('\n')
	if update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(pretty.Bytes(), want) {
		t.Errorf("request differs from %s:\n%s", path, pretty.Bytes())
	}
}

// CheckRequest validates body against s, stopping the test when it does
// not validate, and compares it with the golden file at path; update
// rewrites the file first.
func CheckRequest(t testing.TB, s *Schema, body []byte, path string, update bool) {
	t.Helper()
	if err := s.Validate(t, body); err != nil {
		t.Fatalf("request does not validate against %s: %v\n%s", s.Name, err, body)
	}
	CheckGolden(t, path, body, update)
}
