package responses

import (
	"bytes"
	"io"
	"path/filepath"
	"testing"

	"github.com/stewardhq/steward/internal/llmtest"
	"github.com/stewardhq/steward/internal/testenv"
)

// recordedStreams returns the streamed answers of every recording, as sent.
func recordedStreams(t testing.TB) [][]byte {
	root := filepath.Join(testenv.SharedDir(t), "peers", "fixtures", "responses")
	files, _ := filepath.Glob(filepath.Join(root, "fantasy", "providertests", "testdata", "*", "*", "*.yaml"))
	chunks, _ := filepath.Glob(filepath.Join(root, "vercel-ai", "packages", "openai", "src", "responses", "__fixtures__", "*.chunks.txt"))
	return llmtest.RecordedStreams(t, files, chunks, "response.created")
}

// parseWithDeadline fails when parsing does not finish: a bytes.Reader
// always ends, so a parser that does not is stuck.
func parseWithDeadline(t *testing.T, data []byte) (*result, error) {
	t.Helper()
	return llmtest.WithDeadline(t, len(data), func() (*result, error) {
		return parseStream(bytes.NewReader(data), func(string) {})
	})
}

func FuzzParseStream(f *testing.F) {
	for _, s := range []string{
		answer(textItem, callWeather),
		answer(reasoningItem, callWeather),
		llmtest.SSE(`{"type":"error","message":"boom"}`),
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"output\":[{}]}}",
		"data: {\"type\":\"response.output_item.done\",\"output_index\":-1,\"item\":{}}\n\n",
		":\n\n\r\n",
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
		if err == nil {
			// Whatever came back can be turned into a round.
			a := &adapter{opts: Options{Logger: discard()}}
			a.finish(res)
		}
	})
}

// TestTruncatedRecordings cuts every recorded stream at every event
// boundary and at many points inside events: parsing never hangs, and a
// stream cut before any output item or the completed response is an error,
// never an empty answer.
func TestTruncatedRecordings(t *testing.T) {
	for _, stream := range recordedStreams(t) {
		cuts := llmtest.Cuts(stream, 257)
		for _, n := range cuts {
			prefix := stream[:n]
			res, err := parseWithDeadline(t, prefix)
			hasOutput := bytes.Contains(prefix, []byte(`"type":"response.output_item.done"`)) ||
				bytes.Contains(prefix, []byte(`"type":"response.completed"`))
			if !hasOutput && err == nil {
				t.Fatalf("a stream cut at %d bytes, before any output, gave a round: %+v", n, res)
			}
			if err == nil && len(res.output) == 0 && !bytes.Contains(prefix, []byte(`"type":"response.completed"`)) {
				t.Fatalf("cut at %d: a round without output", n)
			}
		}
	}
}

// BenchmarkParseStream decodes every recorded stream once per iteration.
func BenchmarkParseStream(b *testing.B) {
	llmtest.BenchmarkStreams(b, recordedStreams(b), func(r io.Reader) { parseStream(r, func(string) {}) })
}
