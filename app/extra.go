package app

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ParseExtraParameters reads additional API parameters written as the body
// of a JSON object without braces, e.g. `"temperature": 0.5`, the way
// organizations write AdditionalJsonApiParameters. The adapters never let
// them override what they set themselves.
func ParseExtraParameters(s string) (map[string]any, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	if !strings.HasPrefix(s, "{") {
		s = "{" + s + "}"
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("not a list of JSON fields such as \"temperature\": 0.5 (%v)", err)
	}
	return m, nil
}
