package tool

import (
	"bytes"
	"encoding/json"
)

// ModelContent writes the result the way the model reads it: JSON content
// with only the escaping JSON requires (umlauts, <, >, & stay literal),
// else the text.
func (r Result) ModelContent() string {
	if r.JSON == nil {
		return r.Text
	}
	s, err := MarshalRelaxed(r.JSON)
	if err != nil {
		return r.Text
	}
	return s
}

// MarshalRelaxed serializes v as compact JSON, escaping only what JSON
// requires.
func MarshalRelaxed(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return string(bytes.TrimRight(buf.Bytes(), "\n")), nil
}
