package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// StrictSchema converts parameters written the ordinary way into the form
// OpenAI's strict mode demands, where every property is required and an
// optional one says so by allowing null. Adapters call it only where strict
// mode is kept; everywhere else the schema goes out as written.
//
// For every object schema, at every depth:
//   - an optional property of type T becomes ["T","null"], or "null" is
//     added to its type array; without a type, a {"type":"null"} branch
//     joins its anyOf, and a lone $ref moves into such an anyOf;
//   - null is inserted first into its enum, when it has one; array items are
//     left alone;
//   - "required" then lists every property, in property order;
//   - additionalProperties:false is added where it is missing.
//
// The order of members is kept exactly, so the converted schema is the same
// bytes for the same input, which prompt caching relies on. When nothing
// needs to change, the input is returned unchanged. An error names what
// strict mode cannot express, e.g. an object that allows additional
// properties; such a tool belongs out of strict mode (Function.NoStrict).
func StrictSchema(params json.RawMessage) (json.RawMessage, error) {
	root, err := parseJSONTree(params)
	if err != nil {
		return nil, fmt.Errorf("strict schema: the parameters are not valid JSON: %w", err)
	}
	if root.kind != jsonObject {
		return nil, errors.New("strict schema: the parameters must be a JSON Schema object")
	}
	changed, err := strictNode(root, &schemaPath{})
	if err != nil {
		return nil, fmt.Errorf("strict schema: %w", err)
	}
	if !changed {
		return append(json.RawMessage(nil), params...), nil
	}
	var b bytes.Buffer
	b.Grow(len(params) + 64)
	root.write(&b)
	return json.RawMessage(b.Bytes()), nil
}

// strictNode converts one schema and the schemas nested in it.
func strictNode(n *jsonNode, path *schemaPath) (bool, error) {
	if n.kind != jsonObject {
		return false, fmt.Errorf("%s: a schema must be a JSON object", path)
	}
	changed := false
	if isObjectSchema(n) {
		c, err := strictObject(n, path)
		if err != nil {
			return false, err
		}
		changed = c
	}
	if items := n.get("items"); items != nil {
		switch items.kind {
		case jsonObject:
			path.push("items", -1)
			c, err := strictNode(items, path)
			path.pop()
			if err != nil {
				return false, err
			}
			changed = changed || c
		case jsonArray:
			for i, e := range items.elems {
				path.push("items", i)
				c, err := strictNode(e, path)
				path.pop()
				if err != nil {
					return false, err
				}
				changed = changed || c
			}
		}
	}
	for _, key := range []string{"anyOf", "allOf", "oneOf"} {
		list := n.get(key)
		if list == nil {
			continue
		}
		if list.kind != jsonArray {
			return false, fmt.Errorf("%s.%s must be an array of schemas", path, key)
		}
		for i, e := range list.elems {
			path.push(key, i)
			c, err := strictNode(e, path)
			path.pop()
			if err != nil {
				return false, err
			}
			changed = changed || c
		}
	}
	for _, key := range []string{"$defs", "definitions"} {
		defs := n.get(key)
		if defs == nil {
			continue
		}
		if defs.kind != jsonObject {
			return false, fmt.Errorf("%s.%s must be an object of schemas", path, key)
		}
		for i, name := range defs.keys {
			path.push(key, -1)
			path.push(name, -1)
			c, err := strictNode(defs.vals[i], path)
			path.pop()
			path.pop()
			if err != nil {
				return false, err
			}
			changed = changed || c
		}
	}
	return changed, nil
}

// isObjectSchema reports whether n describes an object: its type is or
// includes "object", or it lists properties.
func isObjectSchema(n *jsonNode) bool {
	if n.get("properties") != nil {
		return true
	}
	t := n.get("type")
	if t == nil {
		return false
	}
	if t.kind == jsonString {
		return t.is("object")
	}
	if t.kind == jsonArray {
		for _, e := range t.elems {
			if e.is("object") {
				return true
			}
		}
	}
	return false
}

func strictObject(n *jsonNode, path *schemaPath) (bool, error) {
	changed := false
	props := n.get("properties")
	if props != nil && props.kind != jsonObject {
		return false, fmt.Errorf("%s.properties must be an object", path)
	}
	var required []string
	if req := n.get("required"); req != nil {
		if req.kind != jsonArray {
			return false, fmt.Errorf("%s.required must be an array of property names", path)
		}
		for _, e := range req.elems {
			if e.kind != jsonString {
				return false, fmt.Errorf("%s.required must be an array of property names", path)
			}
			name := e.text()
			if props.get(name) == nil {
				return false, fmt.Errorf("%s.required names %q, which is not a property", path, name)
			}
			required = append(required, name)
		}
	}
	anyOptional := false
	if props != nil {
		for i, name := range props.keys {
			if slices.Contains(props.keys[:i], name) {
				return false, fmt.Errorf("%s.properties has %q twice", path, name)
			}
			prop := props.vals[i]
			path.push("properties", -1)
			path.push(name, -1)
			c, err := strictNode(prop, path)
			path.pop()
			path.pop()
			if err != nil {
				return false, err
			}
			changed = changed || c
			if !slices.Contains(required, name) {
				anyOptional = true
				if makeNullable(prop) {
					changed = true
				}
			}
		}
	}
	if anyOptional {
		all := &jsonNode{kind: jsonArray, elems: make([]*jsonNode, len(props.keys))}
		for i, name := range props.keys {
			all.elems[i] = newString(name)
		}
		n.insertAfter("properties", "required", all)
		changed = true
	}
	switch ap := n.get("additionalProperties"); {
	case ap == nil:
		n.set("additionalProperties", &jsonNode{kind: jsonScalar, raw: []byte("false")})
		changed = true
	case ap.kind != jsonScalar || string(ap.raw) != "false":
		return false, fmt.Errorf("%s allows additional properties, which strict mode cannot express; keep the tool out of strict mode", path)
	}
	return changed, nil
}

// makeNullable lets an optional property's schema accept null. It reports
// whether it changed anything.
func makeNullable(prop *jsonNode) bool {
	changed := false
	switch t := prop.get("type"); {
	case t != nil && t.kind == jsonString:
		if !t.is("null") {
			prop.set("type", &jsonNode{kind: jsonArray, elems: []*jsonNode{t, newString("null")}})
			changed = true
		}
	case t != nil && t.kind == jsonArray:
		if !hasString(t.elems, "null") {
			t.elems = append(t.elems, newString("null"))
			changed = true
		}
	case t == nil:
		if alts := prop.get("anyOf"); alts != nil {
			if alts.kind == jsonArray && !anyOfAllowsNull(alts) {
				alts.elems = append(alts.elems, nullSchema())
				changed = true
			}
		} else if prop.get("$ref") != nil {
			// Strict mode allows no keywords beside $ref, so the reference
			// moves into an anyOf with a null branch; the description stays.
			ref := &jsonNode{kind: jsonObject}
			var keys []string
			var vals []*jsonNode
			for i, k := range prop.keys {
				if k == "description" {
					keys, vals = append(keys, k), append(vals, prop.vals[i])
					continue
				}
				ref.keys, ref.vals = append(ref.keys, k), append(ref.vals, prop.vals[i])
			}
			prop.keys = append(keys, "anyOf")
			prop.vals = append(vals, &jsonNode{kind: jsonArray, elems: []*jsonNode{ref, nullSchema()}})
			return true
		}
	}
	if enum := prop.get("enum"); enum != nil && enum.kind == jsonArray {
		hasNull := false
		for _, e := range enum.elems {
			if e.isNull() {
				hasNull = true
				break
			}
		}
		if !hasNull {
			enum.elems = append([]*jsonNode{newNull()}, enum.elems...)
			changed = true
		}
	}
	return changed
}

func nullSchema() *jsonNode {
	return &jsonNode{kind: jsonObject, keys: []string{"type"}, vals: []*jsonNode{newString("null")}}
}

func hasString(elems []*jsonNode, s string) bool {
	for _, e := range elems {
		if e.is(s) {
			return true
		}
	}
	return false
}

func anyOfAllowsNull(alts *jsonNode) bool {
	for _, a := range alts.elems {
		if t := a.get("type"); t != nil && (t.is("null") || (t.kind == jsonArray && hasString(t.elems, "null"))) {
			return true
		}
	}
	return false
}

// schemaPath names where in the parameters a schema stands, for errors. It
// is a stack, so that naming costs nothing until an error needs it.
type schemaPath struct {
	segs []pathSeg
}

type pathSeg struct {
	key   string
	index int // -1 when the segment has no index
}

func (p *schemaPath) push(key string, index int) {
	p.segs = append(p.segs, pathSeg{key, index})
}

func (p *schemaPath) pop() { p.segs = p.segs[:len(p.segs)-1] }

// String writes the path, e.g. parameters.properties.filter.items[0].
func (p *schemaPath) String() string {
	var b strings.Builder
	b.WriteString("parameters")
	for _, s := range p.segs {
		b.WriteByte('.')
		b.WriteString(s.key)
		if s.index >= 0 {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
		}
	}
	return b.String()
}
