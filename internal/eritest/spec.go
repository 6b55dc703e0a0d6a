package eritest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/stewardhq/steward/internal/llmtest"
	"github.com/stewardhq/steward/internal/testenv"
)

// SpecPath returns the path of the ERI v1 OpenAPI document beside the
// repository; the test fails when it is missing.
func SpecPath(t testing.TB) string {
	t.Helper()
	p := filepath.Join(testenv.SharedDir(t), "reference", "eri", "v1.json")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("eritest: the ERI spec is missing: %v", err)
	}
	return p
}

var (
	docOnce sync.Once
	doc     any
	docErr  error
)

// loadSpec reads v1.json once and turns its OpenAPI 3.0 dialect into JSON
// Schema: "nullable": true becomes a type that also allows null.
func loadSpec(t testing.TB) (any, error) {
	docOnce.Do(func() {
		b, err := os.ReadFile(SpecPath(t))
		if err != nil {
			docErr = err
			return
		}
		var raw any
		if err := json.Unmarshal(b, &raw); err != nil {
			docErr = fmt.Errorf("eritest: v1.json is not JSON: %w", err)
			return
		}
		fixNullable(raw)
		j, err := json.Marshal(raw)
		if err != nil {
			docErr = err
			return
		}
		doc, docErr = jsonschema.UnmarshalJSON(bytes.NewReader(j))
	})
	return doc, docErr
}

func fixNullable(v any) {
	switch x := v.(type) {
	case map[string]any:
		if n, ok := x["nullable"].(bool); ok {
			delete(x, "nullable")
			if n {
				if typ, ok := x["type"].(string); ok {
					x["type"] = []any{typ, "null"}
				}
				if enum, ok := x["enum"].([]any); ok {
					x["enum"] = append(enum, nil)
				}
			}
		}
		for _, c := range x {
			fixNullable(c)
		}
	case []any:
		for _, c := range x {
			fixNullable(c)
		}
	}
}

// pointer escapes a JSON pointer segment.
func pointer(seg string) string {
	return strings.ReplaceAll(strings.ReplaceAll(seg, "~", "~0"), "/", "~1")
}

func schemaAt(name, ptr string) *llmtest.Schema {
	return &llmtest.Schema{Name: name, Resource: "eri-v1.json", Load: func(t testing.TB) (any, string, error) {
		d, err := loadSpec(t)
		return d, ptr, err
	}}
}

// responseSchema is the schema of an endpoint's 200 answer.
func responseSchema(method, path string) *llmtest.Schema {
	return schemaAt(method+" "+path+" response", "#/paths/"+pointer(path)+"/"+method+"/responses/200/content/application~1json/schema")
}

// Schemas the server checks with.
var (
	schemaMethods      = responseSchema("get", "/auth/methods")
	schemaAuth         = responseSchema("post", "/auth")
	schemaDataSource   = responseSchema("get", "/dataSource")
	schemaEmbeddings   = responseSchema("get", "/embedding/info")
	schemaRetrievals   = responseSchema("get", "/retrieval/info")
	schemaRetrieval    = responseSchema("post", "/retrieval")
	schemaSecurity     = responseSchema("get", "/security/requirements")
	schemaRequest      = schemaAt("RetrievalRequest", "#/components/schemas/RetrievalRequest")
	schemaAuthMethodIn = schemaAt("AuthMethod", "#/components/schemas/AuthMethod")
)

// ValidateAnswer checks a body as the 200 answer of method and path (e.g.
// "post", "/retrieval") against the spec.
func ValidateAnswer(t testing.TB, method, path string, body []byte) error {
	t.Helper()
	var s *llmtest.Schema
	switch strings.ToLower(method) + " " + path {
	case "get /auth/methods":
		s = schemaMethods
	case "post /auth":
		s = schemaAuth
	case "get /dataSource":
		s = schemaDataSource
	case "get /embedding/info":
		s = schemaEmbeddings
	case "get /retrieval/info":
		s = schemaRetrievals
	case "post /retrieval":
		s = schemaRetrieval
	case "get /security/requirements":
		s = schemaSecurity
	default:
		return fmt.Errorf("eritest: the spec has no endpoint %s %s", method, path)
	}
	return s.Validate(t, body)
}

// ValidateRetrievalRequest checks a retrieval request body against the
// spec's RetrievalRequest.
func ValidateRetrievalRequest(t testing.TB, body []byte) error {
	t.Helper()
	return schemaRequest.Validate(t, body)
}
