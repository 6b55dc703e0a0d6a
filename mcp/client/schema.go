package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// schemaDoc is a tool's input schema as Steward keeps it: normalized,
// with its descriptions filtered, and compiled for checking arguments.
type schemaDoc struct {
	doc      map[string]any
	compiled *jsonschema.Resolved
}

// normalizeSchema reads a server's input schema and makes it what every
// provider accepts: a JSON object of type object with properties. It
// refuses what cannot describe a tool's arguments.
func normalizeSchema(raw any) (map[string]any, error) {
	if raw == nil {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, fmt.Errorf("its input schema cannot be read: %v", err)
	}
	if len(b) > MaxSchemaBytes {
		return nil, fmt.Errorf("its input schema has %d bytes, more than the %d Steward accepts", len(b), MaxSchemaBytes)
	}
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil || doc == nil {
		return nil, errors.New("its input schema is not a JSON object")
	}
	switch t := doc["type"].(type) {
	case nil:
		doc["type"] = "object"
	case string:
		if t != "object" {
			return nil, fmt.Errorf("its input schema has type %q; tool arguments must be an object", t)
		}
	default:
		return nil, errors.New("its input schema's type must be \"object\"")
	}
	if _, ok := doc["properties"]; !ok {
		doc["properties"] = map[string]any{}
	} else if _, ok := doc["properties"].(map[string]any); !ok {
		return nil, errors.New("its input schema's properties must be an object")
	}
	addArrayItems(doc, 0)
	return doc, nil
}

// addArrayItems gives every array schema without items an empty items
// schema: several providers reject an array whose items are not described
// (as Crush's wrapper does too).
func addArrayItems(v any, depth int) {
	if depth > 64 {
		return
	}
	switch n := v.(type) {
	case map[string]any:
		if isArraySchema(n) {
			if _, ok := n["items"]; !ok {
				n["items"] = map[string]any{}
			}
		}
		for k, c := range n {
			if k == "enum" || k == "const" || k == "default" || k == "examples" {
				continue
			}
			addArrayItems(c, depth+1)
		}
	case []any:
		for _, c := range n {
			addArrayItems(c, depth+1)
		}
	}
}

func isArraySchema(n map[string]any) bool {
	switch t := n["type"].(type) {
	case string:
		return t == "array"
	case []any:
		return slices.Contains(t, any("array"))
	}
	return false
}

// schemaTexts are the places in a schema whose text reaches the model and
// which Steward may rewrite: descriptions and titles of schemas.
type schemaText struct {
	node map[string]any
	key  string
	path string
}

// collectSchemaTexts lists the descriptions and titles of every schema in
// doc, in a stable order.
func collectSchemaTexts(doc map[string]any) []schemaText {
	var out []schemaText
	var walk func(v any, path string, depth int)
	walk = func(v any, path string, depth int) {
		if depth > 64 {
			return
		}
		switch n := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(n))
			for k := range n {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				c := n[k]
				if _, isText := c.(string); isText && (k == "description" || k == "title") {
					out = append(out, schemaText{node: n, key: k, path: path + "." + k})
					continue
				}
				if k == "enum" || k == "const" || k == "default" || k == "examples" {
					continue
				}
				walk(c, path+"."+k, depth+1)
			}
		case []any:
			for i, c := range n {
				walk(c, fmt.Sprintf("%s[%d]", path, i), depth+1)
			}
		}
	}
	walk(doc, "inputSchema", 0)
	return out
}

// compileSchema checks doc as JSON Schema and compiles it for checking
// arguments, with github.com/google/jsonschema-go (draft 2020-12 and
// draft-07), which the MCP SDK links anyway and which costs nothing at
// start-up. It loads nothing: a $ref outside the document is refused.
func compileSchema(doc map[string]any) (*jsonschema.Resolved, error) {
	b, err := json.Marshal(lenientPatterns(doc, 0))
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("its input schema is not valid JSON Schema: %s", oneLine(err.Error()))
	}
	r, err := s.Resolve(&jsonschema.ResolveOptions{BaseURI: "mem:///input-schema.json", Loader: noLoader})
	if err != nil {
		return nil, fmt.Errorf("its input schema is not valid JSON Schema: %s", oneLine(err.Error()))
	}
	return r, nil
}

// noLoader refuses every reference to another document.
func noLoader(u *url.URL) (*jsonschema.Schema, error) {
	return nil, fmt.Errorf("the schema refers to another document (%s), which Steward does not load", u)
}

// lenientPatterns returns a copy of a schema without the patterns Go's
// engine cannot read (ECMAScript look-arounds): they are accepted without
// being checked here, so the server, which wrote them, checks them.
func lenientPatterns(v any, depth int) any {
	if depth > 64 {
		return v
	}
	switch n := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(n))
		for k, c := range n {
			switch k {
			case "pattern":
				if p, ok := c.(string); ok {
					if _, err := regexp.Compile(p); err != nil {
						continue
					}
				}
			case "patternProperties":
				if pp, ok := c.(map[string]any); ok {
					kept := map[string]any{}
					for p, sub := range pp {
						if _, err := regexp.Compile(p); err == nil {
							kept[p] = lenientPatterns(sub, depth+1)
						}
					}
					out[k] = kept
					continue
				}
			}
			out[k] = lenientPatterns(c, depth+1)
		}
		return out
	case []any:
		out := make([]any, len(n))
		for i, c := range n {
			out[i] = lenientPatterns(c, depth+1)
		}
		return out
	}
	return v
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// checkArguments validates a call's arguments against the schema and
// returns them as the server should get them: a JSON object in which an
// optional argument sent as null (as strict mode sends it) is left out.
func checkArguments(sd *schemaDoc, args json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		trimmed = []byte("{}")
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("the arguments are not valid JSON: %v", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("the arguments must be a JSON object of the tool's parameters")
	}
	pruneNulls(sd.doc, obj, 0)
	out, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	if sd.compiled != nil {
		var inst any
		if err := json.Unmarshal(out, &inst); err != nil {
			return nil, err
		}
		if err := sd.compiled.Validate(inst); err != nil {
			return nil, fmt.Errorf("the arguments do not fit the tool's parameters: %s. Correct them and call the tool again", validationMessage(err))
		}
	}
	return out, nil
}

// schemaPath is where jsonschema-go says a check failed.
var schemaPath = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`validating (?:root|/\S*): `) })

// validationMessage words a validation error for the model: where and
// what, without the schema's location URL.
func validationMessage(err error) string {
	msg := strings.ReplaceAll(err.Error(), "mem:///input-schema.json", "")
	msg = schemaPath().ReplaceAllStringFunc(msg, func(m string) string {
		p := strings.TrimSuffix(strings.TrimPrefix(m, "validating "), ": ")
		if p == "root" {
			return "the arguments: "
		}
		return "argument " + strings.ReplaceAll(strings.ReplaceAll(p, "/properties/", "/"), "/items/", "/[]/") + ": "
	})
	return oneLine(strings.ReplaceAll(msg, "the arguments: argument ", "argument "))
}

// pruneNulls removes null values of optional properties the schema does
// not allow null for, at every depth the schema describes.
func pruneNulls(schema map[string]any, obj map[string]any, depth int) {
	if depth > 32 || schema == nil {
		return
	}
	props, _ := schema["properties"].(map[string]any)
	var required []string
	if r, ok := schema["required"].([]any); ok {
		for _, e := range r {
			if s, ok := e.(string); ok {
				required = append(required, s)
			}
		}
	}
	for k, v := range obj {
		ps, _ := props[k].(map[string]any)
		if v == nil {
			if !slices.Contains(required, k) && !allowsNull(ps) {
				delete(obj, k)
			}
			continue
		}
		switch c := v.(type) {
		case map[string]any:
			pruneNulls(ps, c, depth+1)
		case []any:
			if items, ok := ps["items"].(map[string]any); ok {
				for _, e := range c {
					if m, ok := e.(map[string]any); ok {
						pruneNulls(items, m, depth+1)
					}
				}
			}
		}
	}
}

func allowsNull(s map[string]any) bool {
	if s == nil {
		return false
	}
	switch t := s["type"].(type) {
	case string:
		return t == "null"
	case []any:
		return slices.Contains(t, any("null"))
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok {
			for _, a := range alts {
				if m, ok := a.(map[string]any); ok && allowsNull(m) {
					return true
				}
			}
		}
	}
	return false
}
