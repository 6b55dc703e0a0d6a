package tool

import (
	"bytes"
	"encoding/json"
	"errors"
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
	// str is a string's value; for a parsed string value it is set only
	// once text decodes it.
	str     string
	escaped bool
	decoded bool
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

// parseJSONTree reads one JSON value and nothing after it. Strings keep
// their raw form, so an unchanged member is written back byte for byte.
func parseJSONTree(data []byte) (*jsonNode, error) {
	if !json.Valid(data) {
		// Let the standard decoder word what is wrong.
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, err
		}
		return nil, errors.New("invalid JSON")
	}
	p := treeParser{data: data}
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	return n, nil
}

// treeParser reads JSON already checked by json.Valid, so it only has to
// find where each value starts and ends.
type treeParser struct {
	data []byte
	pos  int
	// slab hands out nodes in chunks rather than one allocation each.
	slab []jsonNode
}

func (p *treeParser) node(kind jsonKind) *jsonNode {
	if len(p.slab) == 0 {
		p.slab = make([]jsonNode, 64)
	}
	n := &p.slab[0]
	p.slab = p.slab[1:]
	n.kind = kind
	return n
}

func (p *treeParser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *treeParser) value(depth int) (*jsonNode, error) {
	if depth > maxJSONDepth {
		return nil, errDepth
	}
	p.skipSpace()
	switch p.data[p.pos] {
	case '{':
		p.pos++
		n := p.node(jsonObject)
		for {
			p.skipSpace()
			if p.data[p.pos] == '}' {
				p.pos++
				return n, nil
			}
			if p.data[p.pos] == ',' {
				p.pos++
				p.skipSpace()
			}
			key, err := p.str(true)
			if err != nil {
				return nil, err
			}
			p.skipSpace()
			p.pos++ // ':'
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			n.keys = append(n.keys, key.str)
			n.vals = append(n.vals, v)
		}
	case '[':
		p.pos++
		n := p.node(jsonArray)
		for {
			p.skipSpace()
			if p.data[p.pos] == ']' {
				p.pos++
				return n, nil
			}
			if p.data[p.pos] == ',' {
				p.pos++
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, v)
		}
	case '"':
		return p.str(false)
	default:
		start := p.pos
		for p.pos < len(p.data) {
			switch p.data[p.pos] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				n := p.node(jsonScalar)
				n.raw = p.data[start:p.pos:p.pos]
				return n, nil
			}
			p.pos++
		}
		n := p.node(jsonScalar)
		n.raw = p.data[start:p.pos:p.pos]
		return n, nil
	}
}

// str reads a string at p.pos. A key is decoded at once; a value only
// when asked for (see text), since most values, descriptions above all,
// are written back unchanged.
func (p *treeParser) str(isKey bool) (*jsonNode, error) {
	start := p.pos
	p.pos++
	escaped := false
	for {
		c := p.data[p.pos]
		if c == '\\' {
			escaped = true
			p.pos += 2
			continue
		}
		p.pos++
		if c == '"' {
			break
		}
	}
	n := p.node(jsonString)
	n.raw = p.data[start:p.pos:p.pos]
	n.escaped = escaped
	if isKey {
		return n, n.decode()
	}
	return n, nil
}

// decode sets str from raw.
func (n *jsonNode) decode() error {
	n.decoded = true
	if !n.escaped {
		n.str = string(n.raw[1 : len(n.raw)-1])
		return nil
	}
	return json.Unmarshal(n.raw, &n.str)
}

// text returns a string node's value.
func (n *jsonNode) text() string {
	if n.raw != nil && !n.decoded {
		// raw passed json.Valid, so decoding cannot fail.
		_ = n.decode()
	}
	return n.str
}

// is reports whether n is the string s, without decoding when it can.
func (n *jsonNode) is(s string) bool {
	if n.kind != jsonString {
		return false
	}
	if n.raw != nil && !n.escaped {
		return string(n.raw[1:len(n.raw)-1]) == s
	}
	return n.text() == s
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
		if n.raw != nil {
			b.Write(n.raw)
		} else {
			writeJSONString(b, n.str)
		}
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
