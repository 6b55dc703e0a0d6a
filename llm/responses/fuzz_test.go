package responses

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
	root := filepath.Join(testenv.SharedDir(t), "peers", "fixtures", "responses")
	files, _ := filepath.Glob(filepath.Join(root, "fantasy", "providertests", "testdata", "*", "*", "*.yaml"))
	chunks, _ := filepath.Glob(filepath.Join(root, "vercel-ai", "packages", "openai", "src", "responses", "__fixtures__", "*.chunks.txt"))
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
		for _, ex := range loadChunks(t, f, "response.created") {
			out = append(out, ex.body)
		}
	}
	return out
}

// parseWithDeadline fails when parsing does not finish: a bytes.Reader
// always ends, so a parser that does not is stuck.
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
		answer(textItem, callWeather),
		answer(reasoningItem, callWeather),
		sse(`{"type":"error","message":"boom"}`),
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
		cuts := []int{}
		for i := 0; i < len(stream); i += 257 {
			cuts = append(cuts, i)
		}
		for i := 0; i+1 < len(stream); i++ {
			if stream[i] == '\n' && stream[i+1] == '\n' {
				cuts = append(cuts, i+1)
			}
		}
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
