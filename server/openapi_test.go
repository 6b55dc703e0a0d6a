package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// docURL is where the tests place the OpenAPI document for $ref
// resolution; eventSchemaURL is the loop's event schema, which the
// document references by its $id.
const (
	docURL         = "https://steward.invalid/openapi.json"
	eventSchemaURL = "https://github.com/stewardhq/steward/loop/event.schema.json"
)

// apiDoc is the OpenAPI document with compiled response schemas. Every
// answer a test receives is checked against it.
type apiDoc struct {
	raw      map[string]any
	compiler *jsonschema.Compiler
	mu       sync.Mutex
	schemas  map[string]*jsonschema.Schema
	seen     map[string]bool // "METHOD template status"
}

var (
	docOnce sync.Once
	docVal  *apiDoc
	docErr  error
)

func loadDoc(t testing.TB) *apiDoc {
	t.Helper()
	docOnce.Do(func() {
		d := &apiDoc{schemas: map[string]*jsonschema.Schema{}, seen: map[string]bool{}}
		if err := json.Unmarshal(OpenAPI(), &d.raw); err != nil {
			docErr = fmt.Errorf("openapi.json is not JSON: %w", err)
			return
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.AssertFormat()
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(OpenAPI()))
		if err != nil {
			docErr = err
			return
		}
		if err := c.AddResource(docURL, doc); err != nil {
			docErr = err
			return
		}
		b, err := os.ReadFile("../loop/event.schema.json")
		if err != nil {
			docErr = err
			return
		}
		ev, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			docErr = err
			return
		}
		if err := c.AddResource(eventSchemaURL, ev); err != nil {
			docErr = err
			return
		}
		d.compiler = c
		docVal = d
	})
	if docErr != nil {
		t.Fatal(docErr)
	}
	return docVal
}

func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func (d *apiDoc) schema(t testing.TB, pointer string) *jsonschema.Schema {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.schemas[pointer]; ok {
		return s
	}
	s, err := d.compiler.Compile(docURL + "#" + pointer)
	if err != nil {
		t.Fatalf("compiling %s: %v", pointer, err)
	}
	d.schemas[pointer] = s
	return s
}

// route finds the path template of the document that p matches.
func (d *apiDoc) route(p string) (string, bool) {
	paths := d.raw["paths"].(map[string]any)
	segs := strings.Split(p, "/")
	for tmpl := range paths {
		ts := strings.Split(tmpl, "/")
		if len(ts) != len(segs) {
			continue
		}
		ok := true
		for i := range ts {
			if strings.HasPrefix(ts[i], "{") && strings.HasSuffix(ts[i], "}") {
				if segs[i] == "" {
					ok = false
				}
				continue
			}
			if ts[i] != segs[i] {
				ok = false
				break
			}
		}
		if ok {
			return tmpl, true
		}
	}
	return "", false
}

// check validates one answer against the document: the route, method and
// status must be documented, and the body must match the schema of its
// content type. A text/event-stream body is checked event by event.
func (d *apiDoc) check(t testing.TB, method, rawPath string, status int, contentType string, body []byte) {
	t.Helper()
	u, _ := url.Parse(rawPath)
	if !strings.HasPrefix(u.Path, "/api/") {
		return // the page and its files are no part of the API
	}
	tmpl, ok := d.route(u.Path)
	if !ok {
		t.Errorf("%s %s: the path is not in openapi.json", method, u.Path)
		return
	}
	item := d.raw["paths"].(map[string]any)[tmpl].(map[string]any)
	m := strings.ToLower(method)
	op, ok := item[m].(map[string]any)
	if !ok {
		// The server answers an undocumented method with 405; that is
		// net/http's, not the API's.
		if status != http.StatusMethodNotAllowed && status != http.StatusUnauthorized {
			t.Errorf("%s %s: the method is not documented and the answer was %d", method, tmpl, status)
		}
		return
	}
	code := fmt.Sprint(status)
	resp, ok := op["responses"].(map[string]any)[code].(map[string]any)
	if !ok {
		t.Errorf("%s %s answered %d, which openapi.json does not document; body: %.300s", method, tmpl, status, body)
		return
	}
	d.mu.Lock()
	d.seen[method+" "+tmpl+" "+code] = true
	d.mu.Unlock()
	respPtr := "/paths/" + pointerEscape(tmpl) + "/" + m + "/responses/" + code
	if ref, ok := resp["$ref"].(string); ok {
		respPtr = strings.TrimPrefix(ref, "#")
		name := respPtr[strings.LastIndex(respPtr, "/")+1:]
		resp = d.raw["components"].(map[string]any)["responses"].(map[string]any)[name].(map[string]any)
	}
	content, _ := resp["content"].(map[string]any)
	if len(content) == 0 {
		if len(bytes.TrimSpace(body)) != 0 {
			t.Errorf("%s %s %d: documented without a body, got %.200s", method, tmpl, status, body)
		}
		return
	}
	mt := strings.TrimSpace(strings.SplitN(contentType, ";", 2)[0])
	if _, ok := content[mt]; !ok {
		var types []string
		for k := range content {
			types = append(types, k)
		}
		t.Errorf("%s %s %d: content type %q, documented: %v", method, tmpl, status, contentType, types)
		return
	}
	ptr := respPtr + "/content/" + pointerEscape(mt) + "/schema"
	if mt == "text/event-stream" {
		s := d.schema(t, ptr+"/items")
		for _, ev := range readSSE(t, bytes.NewReader(body)) {
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(ev.data))
			if err != nil {
				t.Errorf("%s %s: event data is not JSON: %s", method, tmpl, ev.data)
				continue
			}
			if err := s.Validate(v); err != nil {
				t.Errorf("%s %s: event %s does not match openapi.json: %v\n%s", method, tmpl, ev.name, err, ev.data)
			}
			var typ struct {
				Type string `json:"type"`
			}
			_ = json.Unmarshal(ev.data, &typ)
			if typ.Type != ev.name {
				t.Errorf("%s %s: SSE event name %q carries type %q", method, tmpl, ev.name, typ.Type)
			}
		}
		return
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Errorf("%s %s %d: the body is not JSON: %.300s", method, tmpl, status, body)
		return
	}
	if err := d.schema(t, ptr).Validate(v); err != nil {
		t.Errorf("%s %s %d: the body does not match openapi.json: %v\n%.2000s", method, tmpl, status, err, body)
	}
}

// operations lists every "METHOD template" the document defines.
func (d *apiDoc) operations() []string {
	var out []string
	for tmpl, item := range d.raw["paths"].(map[string]any) {
		for m := range item.(map[string]any) {
			switch m {
			case "get", "post", "put", "patch", "delete":
				out = append(out, strings.ToUpper(m)+" "+tmpl)
			}
		}
	}
	sort.Strings(out)
	return out
}

// call sends a request as the page would (token, Origin) and checks the
// answer against the document; it returns the status and body.
func (e *env) call(method, path string, body any) (int, []byte) {
	e.t.Helper()
	res := e.do(method, path, body)
	return e.checked(method, path, res)
}

// checked reads res and checks it against the document.
func (e *env) checked(method, path string, res *http.Response) (int, []byte) {
	e.t.Helper()
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		e.t.Fatal(err)
	}
	loadDoc(e.t).check(e.t, method, path, res.StatusCode, res.Header.Get("Content-Type"), b)
	return res.StatusCode, b
}

// decode unmarshals b into a new T or fails the test.
func decode[T any](t testing.TB, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v
}

// TestOpenAPIDocumentIsValid checks server/openapi.json against the
// OpenAPI Initiative's schema of 3.1 documents, and that every schema in
// it compiles.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	b, err := os.ReadFile("testdata/oas-3.1-schema.json")
	if err != nil {
		t.Fatal(err)
	}
	meta, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("https://spec.openapis.org/oas/3.1/schema/2022-10-07", meta); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("https://spec.openapis.org/oas/3.1/schema/2022-10-07")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(OpenAPI()))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(doc); err != nil {
		t.Fatalf("openapi.json is not a valid OpenAPI 3.1 document: %v", err)
	}
	d := loadDoc(t)
	for name := range d.raw["components"].(map[string]any)["schemas"].(map[string]any) {
		d.schema(t, "/components/schemas/"+pointerEscape(name))
	}
}
