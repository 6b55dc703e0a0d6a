package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Schema builds a function's parameters the ordinary way: an object whose
// properties are written in the order they were added, whose "required"
// lists the required ones in that order, and which allows no other
// properties. An optional argument is simply absent from "required".
//
// The zero value is an empty schema ready to use. Each method returns the
// schema so calls chain:
//
//	params := tool.NewSchema().
//		RequiredString(ArgQuery, "What to search for.").
//		OptionalInteger(tool.PageArgument, "The page of results, from 1.").
//		MustBuild()
type Schema struct {
	props []schemaProp
	// err is the first mistake in building; Build reports it.
	err error
}

type propKind int

const (
	kindString propKind = iota
	kindInteger
	kindBoolean
	kindStringArray
	kindObject
)

type schemaProp struct {
	name        string
	description string
	required    bool
	kind        propKind
	enum        []string
	object      *Schema
}

// NewSchema returns an empty schema.
func NewSchema() *Schema { return &Schema{} }

func (s *Schema) add(p schemaProp) *Schema {
	if s.err != nil {
		return s
	}
	if p.name == "" {
		s.err = fmt.Errorf("schema: a property needs a name")
		return s
	}
	for _, q := range s.props {
		if q.name == p.name {
			s.err = fmt.Errorf("schema: property %q is added twice", p.name)
			return s
		}
	}
	seen := make(map[string]bool, len(p.enum))
	for _, v := range p.enum {
		if seen[v] {
			s.err = fmt.Errorf("schema: property %q lists the choice %q twice", p.name, v)
			return s
		}
		seen[v] = true
	}
	if p.object != nil && p.object.err != nil {
		s.err = fmt.Errorf("schema: property %q: %w", p.name, p.object.err)
		return s
	}
	s.props = append(s.props, p)
	return s
}

func (s *Schema) enumProp(name, description string, required bool, kind propKind, values []string) *Schema {
	if len(values) == 0 && kind != kindStringArray {
		if s.err == nil {
			s.err = fmt.Errorf("schema: property %q needs at least one choice", name)
		}
		return s
	}
	return s.add(schemaProp{name: name, description: description, required: required, kind: kind, enum: append([]string(nil), values...)})
}

// RequiredString adds a string argument the model must give.
func (s *Schema) RequiredString(name, description string) *Schema {
	return s.add(schemaProp{name: name, description: description, required: true, kind: kindString})
}

// OptionalString adds a string argument the model may leave out.
func (s *Schema) OptionalString(name, description string) *Schema {
	return s.add(schemaProp{name: name, description: description, kind: kindString})
}

// RequiredInteger adds an integer argument the model must give.
func (s *Schema) RequiredInteger(name, description string) *Schema {
	return s.add(schemaProp{name: name, description: description, required: true, kind: kindInteger})
}

// OptionalInteger adds an integer argument the model may leave out.
func (s *Schema) OptionalInteger(name, description string) *Schema {
	return s.add(schemaProp{name: name, description: description, kind: kindInteger})
}

// RequiredBoolean adds a boolean argument the model must give.
func (s *Schema) RequiredBoolean(name, description string) *Schema {
	return s.add(schemaProp{name: name, description: description, required: true, kind: kindBoolean})
}

// OptionalBoolean adds a boolean argument the model may leave out.
func (s *Schema) OptionalBoolean(name, description string) *Schema {
	return s.add(schemaProp{name: name, description: description, kind: kindBoolean})
}

// RequiredEnum adds a string argument limited to values, which the model
// must give. values must not be empty.
func (s *Schema) RequiredEnum(name, description string, values ...string) *Schema {
	return s.enumProp(name, description, true, kindString, values)
}

// OptionalEnum adds a string argument limited to values, which the model may
// leave out. values must not be empty.
func (s *Schema) OptionalEnum(name, description string, values ...string) *Schema {
	return s.enumProp(name, description, false, kindString, values)
}

// RequiredStringArray adds a list of strings the model must give. With
// values, every item is limited to them; without, items are free strings
// and the schema carries no enum at all.
func (s *Schema) RequiredStringArray(name, description string, values ...string) *Schema {
	return s.enumProp(name, description, true, kindStringArray, values)
}

// OptionalStringArray adds a list of strings the model may leave out. With
// values, every item is limited to them; without, items are free strings.
func (s *Schema) OptionalStringArray(name, description string, values ...string) *Schema {
	return s.enumProp(name, description, false, kindStringArray, values)
}

// RequiredObject adds a nested object argument, described by object, which
// the model must give.
func (s *Schema) RequiredObject(name, description string, object *Schema) *Schema {
	if object == nil {
		object = NewSchema()
	}
	return s.add(schemaProp{name: name, description: description, required: true, kind: kindObject, object: object})
}

// OptionalObject adds a nested object argument, described by object, which
// the model may leave out.
func (s *Schema) OptionalObject(name, description string, object *Schema) *Schema {
	if object == nil {
		object = NewSchema()
	}
	return s.add(schemaProp{name: name, description: description, kind: kindObject, object: object})
}

// Build writes the schema as compact JSON, or reports the first mistake made
// while building it (a property added twice, a choice listed twice, an enum
// without choices).
func (s *Schema) Build() (json.RawMessage, error) {
	if s.err != nil {
		return nil, s.err
	}
	var b bytes.Buffer
	s.write(&b, "")
	return json.RawMessage(b.Bytes()), nil
}

// MustBuild is Build for schemas written in code, where a mistake is a
// programming error: it panics on one.
func (s *Schema) MustBuild() json.RawMessage {
	raw, err := s.Build()
	if err != nil {
		panic(err)
	}
	return raw
}

// write writes the object schema; description is written when not empty
// (nested objects carry the property's description).
func (s *Schema) write(b *bytes.Buffer, description string) {
	b.WriteString(`{"type":"object"`)
	if description != "" {
		b.WriteString(`,"description":`)
		writeJSONString(b, description)
	}
	b.WriteString(`,"properties":{`)
	for i, p := range s.props {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSONString(b, p.name)
		b.WriteByte(':')
		p.write(b)
	}
	b.WriteString(`},"required":[`)
	n := 0
	for _, p := range s.props {
		if !p.required {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		writeJSONString(b, p.name)
		n++
	}
	b.WriteString(`],"additionalProperties":false}`)
}

func (p schemaProp) write(b *bytes.Buffer) {
	switch p.kind {
	case kindObject:
		p.object.write(b, p.description)
		return
	case kindStringArray:
		b.WriteString(`{"type":"array","description":`)
		writeJSONString(b, p.description)
		b.WriteString(`,"items":{"type":"string"`)
		writeEnum(b, p.enum)
		b.WriteString(`}}`)
		return
	}
	b.WriteString(`{"type":`)
	switch p.kind {
	case kindInteger:
		b.WriteString(`"integer"`)
	case kindBoolean:
		b.WriteString(`"boolean"`)
	default:
		b.WriteString(`"string"`)
	}
	b.WriteString(`,"description":`)
	writeJSONString(b, p.description)
	writeEnum(b, p.enum)
	b.WriteByte('}')
}

func writeEnum(b *bytes.Buffer, values []string) {
	if len(values) == 0 {
		return
	}
	b.WriteString(`,"enum":[`)
	for i, v := range values {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSONString(b, v)
	}
	b.WriteByte(']')
}

// writeJSONString writes s as a JSON string, escaping only what JSON
// requires, the same way MarshalRelaxed does: quotes, backslashes and
// control characters, plus U+2028 and U+2029, which encoding/json escapes
// too. Invalid UTF-8 becomes U+FFFD.
func writeJSONString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b.WriteString(s[start:i])
			switch c {
			case '"', '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			case '\b':
				b.WriteString(`\b`)
			case '\f':
				b.WriteString(`\f`)
			default:
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&15])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(s[start:i])
			b.WriteString(`\ufffd`)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b.WriteString(s[start:i])
			b.WriteString(`\u202`)
			b.WriteByte(hex[r&15])
			i += size
			start = i
			continue
		}
		i += size
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}
