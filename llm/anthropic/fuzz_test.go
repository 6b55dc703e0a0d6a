package anthropic

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"testing"

	"github.com/stewardhq/steward/internal/llmtest"
	"github.com/stewardhq/steward/internal/testenv"
)

// recordedStreams returns the streamed answers of every recording, as sent.
func recordedStreams(t testing.TB) [][]byte {
	root := filepath.Join(testenv.SharedDir(t), "peers", "fixtures", "anthropic-messages")
	var files, chunks []string
	for _, f := range llmtest.Recordings(t, root) {
		if llmtest.IsChunks(f) {
			chunks = append(chunks, f)
		} else {
			files = append(files, f)
		}
	}
	return llmtest.RecordedStreams(t, files, chunks, "message_start")
}

func parseWithDeadline(t *testing.T, data []byte) (*result, error) {
	t.Helper()
	return llmtest.WithDeadline(t, len(data), func() (*result, error) {
		return parseStream(bytes.NewReader(data), func(string) {})
	})
}

func FuzzParseStream(f *testing.F) {
	for _, s := range []string{
		answer("tool_use", thinkingBlock, redactedBlock, textPreamble, useWeather),
		llmtest.SSE(`{"type":"error","error":{"message":"Overloaded"}}`),
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\ndata: {\"type\":\"message_stop\"}",
		"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"input\":[]}}\n\ndata: {\"type\":\"message_stop\"}\n\n",
	} {
		f.Add([]byte(s))
	}
	for _, s := range recordedStreams(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := parseWithDeadline(t, data)
		if err == nil && res == nil {
			t.Fatal("no result and no error")
		}
		if err != nil {
			return
		}
		for _, b := range res.blocks {
			if !json.Valid(b) {
				t.Fatalf("a block that would go back is not JSON: %q", b)
			}
		}
		for _, c := range res.calls {
			if !json.Valid(c.Arguments) {
				t.Fatalf("call arguments are not JSON: %q", c.Arguments)
			}
		}
	})
}

// TestTruncatedRecordings cuts every recorded stream at every event
// boundary and at many points inside events: parsing never hangs, and a
// stream cut before the stop reason or message_stop is an error, never an
// empty or partial answer.
func TestTruncatedRecordings(t *testing.T) {
	for _, stream := range recordedStreams(t) {
		cuts := llmtest.Cuts(stream, 131)
		for _, n := range cuts {
			prefix := stream[:n]
			_, err := parseWithDeadline(t, prefix)
			ended := bytes.Contains(prefix, []byte(`"stop_reason":"`)) || bytes.Contains(prefix, []byte(`{"type":"message_stop"}`))
			if !ended && err == nil {
				t.Fatalf("a stream cut at %d bytes, before its end, gave a round", n)
			}
		}
	}
}

// BenchmarkParseStream decodes every recorded stream once per iteration.
func BenchmarkParseStream(b *testing.B) {
	llmtest.BenchmarkStreams(b, recordedStreams(b), func(r io.Reader) { parseStream(r, func(string) {}) })
}
