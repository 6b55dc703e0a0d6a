package anthropic

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/testenv"
)

// recordedStreams returns the streamed answers of every recording, as sent.
func recordedStreams(t testing.TB) [][]byte {
	root := filepath.Join(testenv.SharedDir(t), "peers", "fixtures", "anthropic-messages")
	var files, chunks []string
	filepath.WalkDir(root, func(path string, d fsDirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case strings.HasSuffix(path, ".yaml"):
			files = append(files, path)
		case strings.HasSuffix(path, ".chunks.txt"):
			chunks = append(chunks, path)
		}
		return nil
	})
	if len(files) == 0 || len(chunks) == 0 {
		t.Fatal("recordings not found")
	}
	var out [][]byte
	for _, f := range files {
		for _, ex := range loadCassette(t, f) {
			if !strings.HasPrefix(ex.contentType, "application/json") {
				out = append(out, ex.body)
			}
		}
	}
	for _, f := range chunks {
		for _, ex := range loadChunks(t, f, "message_start") {
			out = append(out, ex.body)
		}
	}
	return out
}

func parseWithDeadline(t *testing.T, data []byte) (*result, error) {
	t.Helper()
	type out struct {
		res *result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := parseStream(bytes.NewReader(data), func(string) {})
		done <- out{res, err}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-time.After(10 * time.Second):
		t.Fatalf("parser hangs on %d bytes of input", len(data))
		return nil, nil
	}
}

func FuzzParseStream(f *testing.F) {
	for _, s := range []string{
		answer("tool_use", thinkingBlock, redactedBlock, textPreamble, useWeather),
		sse(`{"type":"error","error":{"message":"Overloaded"}}`),
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
			if !jsonValid(b) {
				t.Fatalf("a block that would go back is not JSON: %q", b)
			}
		}
		for _, c := range res.calls {
			if !jsonValid(c.Arguments) {
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
		cuts := []int{}
		for i := 0; i < len(stream); i += 131 {
			cuts = append(cuts, i)
		}
		for i := 0; i+1 < len(stream); i++ {
			if stream[i] == '\n' && stream[i+1] == '\n' {
				cuts = append(cuts, i+1)
			}
		}
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
	streams := recordedStreams(b)
	var total int64
	for _, s := range streams {
		total += int64(len(s))
	}
	b.SetBytes(total)
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range streams {
			parseStream(bytes.NewReader(s), func(string) {})
		}
	}
}
