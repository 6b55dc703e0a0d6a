package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// JSONEqual reports whether two JSON texts hold the same value; text that
// is not JSON equals nothing.
func JSONEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// ContentText returns the text of a message content that is either a JSON
// string or a list of parts with a "text" field, the parts' texts joined.
func ContentText(c json.RawMessage) string {
	var s string
	if json.Unmarshal(c, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(c, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// SSE frames JSON events as "event: <type>\ndata: <json>\n\n", the type
// read from each event's "type" field.
func SSE(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		var head struct {
			Type string `json:"type"`
		}
		json.Unmarshal([]byte(e), &head)
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", head.Type, e)
	}
	return b.String()
}

// JSONString returns s as a JSON string literal.
func JSONString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// WithDeadline runs parse and fails the test when it has not finished
// within ten seconds: parsers read from memory, so one that does not end
// is stuck. n is the input's size, for the failure message.
func WithDeadline[R any](t testing.TB, n int, parse func() (R, error)) (R, error) {
	t.Helper()
	type out struct {
		res R
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := parse()
		done <- out{res, err}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-time.After(10 * time.Second):
		t.Fatalf("parser hangs on %d bytes of input", n)
		var zero R
		return zero, nil
	}
}

// Cuts returns where to cut a stream to test truncation: every step bytes
// from 0, then after every blank line that ends an event.
func Cuts(stream []byte, step int) []int {
	cuts := []int{}
	for i := 0; i < len(stream); i += step {
		cuts = append(cuts, i)
	}
	for i := 0; i+1 < len(stream); i++ {
		if stream[i] == '\n' && stream[i+1] == '\n' {
			cuts = append(cuts, i+1)
		}
	}
	return cuts
}

// BenchmarkStreams has parse read every stream once per iteration and
// reports the bytes read and the allocations.
func BenchmarkStreams(b *testing.B, streams [][]byte, parse func(r io.Reader)) {
	var total int64
	for _, s := range streams {
		total += int64(len(s))
	}
	b.SetBytes(total)
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range streams {
			parse(bytes.NewReader(s))
		}
	}
}
