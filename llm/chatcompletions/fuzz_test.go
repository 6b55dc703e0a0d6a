package chatcompletions

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/llm"
)

// checkParsed states what must hold for any answer the parser accepted.
func checkParsed(t *testing.T, acc *accumulated, err error, text string) {
	t.Helper()
	if err == nil && acc.readable == 0 {
		t.Fatal("no error although nothing was readable")
	}
	if acc == nil {
		return
	}
	if acc.text.String() != text {
		t.Fatalf("accumulated text %q differs from what was handed on %q", acc.text.String(), text)
	}
	a := NewWithOptions(llm.KindGroq.Provider("m", "", "k"), weatherRequest(), nil, Options{Logger: quietLogger})
	round := a.finish(acc)
	for _, c := range round.Calls {
		if c.ID == "" {
			t.Fatal("a call without ID left the adapter")
		}
		if !json.Valid(c.Arguments) {
			t.Fatalf("call arguments are not JSON: %q", c.Arguments)
		}
		if c.Valid && (!ValidFunctionName(c.Name) || !isJSONObject(string(c.Arguments))) {
			t.Fatalf("call marked valid: %+v", c)
		}
	}
	a.RecordAssistantTurn()
	for _, c := range round.Calls {
		a.RecordToolResult(c.ID, "r", false)
	}
	b, berr := a.BuildBody(llm.RoundOptions{IncludeTools: true})
	if berr != nil || !json.Valid(b) {
		t.Fatalf("follow-up body broken: %v", berr)
	}
}

func addRecordedSeeds(f *testing.F) {
	for _, rec := range loadRecordings(f) {
		for _, in := range rec.Interactions {
			f.Add(in.Body)
		}
	}
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"x\",\"arguments\":\"{\"}}]}}]}\n\n"))
	f.Add([]byte("event: error\ndata: {\"error\":{\"message\":\"m\"}}\n\n"))
	f.Add([]byte("data: [DONE]\n\n"))
}

// FuzzReadSSE: no panic, no hang, and a consistent result for any stream.
func FuzzReadSSE(f *testing.F) {
	addRecordedSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		var text strings.Builder
		acc, err := readSSE(bytes.NewReader(data), func(s string) { text.WriteString(s) })
		checkParsed(t, acc, err, text.String())
	})
}

// FuzzReadJSON covers hosts that answer without streaming.
func FuzzReadJSON(f *testing.F) {
	f.Add([]byte(`{"choices":[{"index":0,"message":{"content":"hi","tool_calls":[{"function":{"name":"a","arguments":"{}"}}]}}]}`))
	f.Add([]byte(`{"error":"x"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var text strings.Builder
		acc, err := readJSON(bytes.NewReader(data), func(s string) { text.WriteString(s) })
		if acc == nil {
			if err == nil {
				t.Fatal("nil result without error")
			}
			return
		}
		checkParsed(t, acc, err, text.String())
	})
}

// TestTruncatedRecordingsNeverHang cuts every recorded answer at many
// points: each prefix must parse quickly, with either a result or an
// error, never a panic.
func TestTruncatedRecordingsNeverHang(t *testing.T) {
	cuts := 0
	for _, rec := range loadRecordings(t) {
		for _, in := range rec.Interactions {
			step := max(1, len(in.Body)/13)
			for n := 0; n <= len(in.Body); n += step {
				done := make(chan struct{})
				var acc *accumulated
				var err error
				var text strings.Builder
				go func() {
					defer close(done)
					acc, err = readSSE(bytes.NewReader(in.Body[:n]), func(s string) { text.WriteString(s) })
				}()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					t.Fatalf("%s: parsing %d bytes did not finish", rec.Path, n)
				}
				checkParsed(t, acc, err, text.String())
				cuts++
			}
		}
	}
	t.Logf("%d truncated answers parsed", cuts)
}
