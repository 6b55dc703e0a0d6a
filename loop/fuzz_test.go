package loop_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stewardhq/steward/loop"
)

// FuzzMaskArguments: model-written arguments never panic the trace, only a
// JSON object yields arguments, and a sensitive value never shows.
func FuzzMaskArguments(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `{"password":"hunter2","q":"x"}`, `{"password":{"nested":"hunter2"}}`, `[1]`, `"s"`, `{"a":`, `{"a":1}}`,
		`{"a":1} x`, `{"\u0070assword":"hunter2"}`, `{"password":"hunter2","password":"again"}`, ` {"n":1e400} `, "{\"a\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		got := loop.MaskArguments(args, []string{"password"})
		trimmed := bytes.TrimSpace(args)
		if got == nil {
			return
		}
		if len(trimmed) > 0 && (!json.Valid(trimmed) || trimmed[0] != '{') {
			t.Fatalf("arguments %q are not a JSON object but gave %v", args, got)
		}
		for _, a := range got {
			if a.Name == "password" && a.Value != loop.MaskedValue {
				t.Fatalf("sensitive value shown: %v", a)
			}
		}
	})
}
