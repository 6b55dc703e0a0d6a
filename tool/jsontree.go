package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// jsonNode is a JSON value that keeps the order of an object's members, so a
// schema can be changed and written again without reordering anything.
type jsonNode struct {
	kind jsonKind
	// members of an object, in input order.
	keys []string
	vals []*jsonNode
	// elems of an array.
	elems []*jsonNode
	// raw is a scalar's JSON text.
	raw []byte
	// str is a string scalar's value.
	str string
}

type jsonKind int

const (
	jsonScalar jsonKind = iota
	jsonString
	jsonObject
	jsonArray
)

// maxJSONDepth bounds nesting so a hostile document cannot exhaust the stack.
const maxJSONDepth = 200

var errDepth = errors.New("JSON nested too deeply")

// parseJSONTree reads one JSON value and nothing after it.
func parseJSONTree(data []byte) (*jsonNode, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := readJSONNode(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return n, nil
}

func readJSONNode(dec *json.Decoder, depth int) (*jsonNode, error) {
	if depth > maxJSONDepth {
		return nil, errDepth
	}
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &jsonNode{kind: jsonObject}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key is not a string")
				}
				v, err := readJSONNode(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, key)
				n.vals = append(n.vals, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		case '[':
			n := &jsonNode{kind: jsonArray}
			for dec.More() {
				v, err := readJSONNode(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.elems = append(n.elems, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case string:
		return &jsonNode{kind: jsonString, str: t}, nil
	case json.Number:
		return &jsonNode{kind: jsonScalar, raw: []byte(t)}, nil
	case bool:
		if t {
			return &jsonNode{kind: jsonScalar, raw: []byte("true")}, nil
		}
		return &jsonNode{kind: jsonScalar, raw: []byte("false")}, nil
	case nil:
		return &jsonNode{kind: jsonScalar, raw: []byte("null")}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

func newString(s string) *jsonNode { return &jsonNode{kind: jsonString, str: s} }

func newNull() *jsonNode { return &jsonNode{kind: jsonScalar, raw: []byte("null")} }

func (n *jsonNode) isNull() bool { return n.kind == jsonScalar && string(n.raw) == "null" }

// get returns the member called key, or nil.
func (n *jsonNode) get(key string) *jsonNode {
	if n == nil || n.kind != jsonObject {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// set replaces the member called key, or appends it.
func (n *jsonNode) set(key string, v *jsonNode) {
	for i, k := range n.keys {
		if k == key {
			n.vals[i] = v
			return
		}
	}
	n.keys = append(n.keys, key)
	n.vals = append(n.vals, v)
}

// insertAfter puts key right after the member called after, or at the end
// when there is none; an existing key is replaced where it stands.
func (n *jsonNode) insertAfter(after, key string, v *jsonNode) {
	for i, k := range n.keys {
		if k == key {
			n.vals[i] = v
			return
		}
	}
	for i, k := range n.keys {
		if k == after {
			n.keys = append(n.keys[:i+1], append([]string{key}, n.keys[i+1:]...)...)
			n.vals = append(n.vals[:i+1], append([]*jsonNode{v}, n.vals[i+1:]...)...)
			return
		}
	}
	n.set(key, v)
}

// write writes the node as compact JSON.
func (n *jsonNode) write(b *bytes.Buffer) {
	switch n.kind {
	case jsonString:
		writeJSONString(b, n.str)
	case jsonObject:
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, k)
			b.WriteByte(':')
			n.vals[i].write(b)
		}
		b.WriteByte('}')
	case jsonArray:
		b.WriteByte('[')
		for i, e := range n.elems {
			if i > 0 {
				b.WriteByte(',')
			}
			e.write(b)
		}
		b.WriteByte(']')
	default:
		b.Write(n.raw)
	}
}
