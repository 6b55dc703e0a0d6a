package llmtest

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// Exchange is one recorded request and its answer.
type Exchange struct {
	// Request is the recorded request body; nil when the recording has
	// none.
	Request     json.RawMessage
	URL         string
	Status      int
	ContentType string
	Body        []byte
}

// LoadCassette reads a go-vcr cassette (version 1 or 2) or a VCR.py one.
func LoadCassette(t testing.TB, path string) []Exchange {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Interactions []struct {
			Request  map[string]any `yaml:"request"`
			Response map[string]any `yaml:"response"`
		} `yaml:"interactions"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []Exchange
	for _, in := range c.Interactions {
		var ex Exchange
		switch body := in.Request["body"].(type) {
		case string:
			if body != "" {
				ex.Request = json.RawMessage(body)
			}
		}
		if pb, ok := in.Request["parsed_body"]; ok && ex.Request == nil {
			ex.Request, _ = json.Marshal(pb)
		}
		ex.URL, _ = in.Request["url"].(string)
		if ex.URL == "" {
			ex.URL, _ = in.Request["uri"].(string)
		}
		ex.Status = 200
		switch code := in.Response["code"].(type) {
		case int:
			ex.Status = code
		}
		if st, ok := in.Response["status"].(map[string]any); ok {
			if code, ok := st["code"].(int); ok {
				ex.Status = code
			}
		}
		if hs, ok := in.Response["headers"].(map[string]any); ok {
			for k, v := range hs {
				if strings.EqualFold(k, "content-type") {
					if l, ok := v.([]any); ok && len(l) > 0 {
						ex.ContentType, _ = l[0].(string)
					}
				}
			}
		}
		switch body := in.Response["body"].(type) {
		case string:
			ex.Body = []byte(body)
		case map[string]any:
			s, _ := body["string"].(string)
			ex.Body = []byte(s)
		}
		if pb, ok := in.Response["parsed_body"]; ok && len(ex.Body) == 0 {
			ex.Body, _ = json.Marshal(pb)
		}
		out = append(out, ex)
	}
	return out
}

// LoadChunks reads a vercel-ai chunks file: one JSON event per line, SSE
// framing stripped. Every event of type first starts a new answer; each is
// framed again as "event: <type>\ndata: <line>\n\n".
func LoadChunks(t testing.TB, path, first string) []Exchange {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []Exchange
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(line), &head); err != nil {
			t.Fatalf("%s: unreadable line: %v", path, err)
		}
		if head.Type == first || len(out) == 0 {
			out = append(out, Exchange{Status: 200, ContentType: "text/event-stream"})
		}
		ex := &out[len(out)-1]
		ex.Body = append(ex.Body, fmt.Sprintf("event: %s\ndata: %s\n\n", head.Type, line)...)
	}
	return out
}

// IsChunks reports whether path is a vercel-ai chunks file rather than a
// cassette.
func IsChunks(path string) bool { return strings.HasSuffix(path, ".chunks.txt") }

// Recordings returns every recording below root (cassettes ending in
// .yaml, chunks files ending in .chunks.txt), sorted. It fails the test
// when there are none: a replay without data must not pass.
func Recordings(t testing.TB, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".yaml") || IsChunks(path)) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no recordings found")
	}
	sort.Strings(files)
	return files
}

// RecordedStreams returns the streamed answers of the given cassettes (as
// sent; whole JSON answers are left out), then those of the given chunks
// files, each split at events of type first. It fails the test when either
// list is empty.
func RecordedStreams(t testing.TB, cassettes, chunks []string, first string) [][]byte {
	t.Helper()
	if len(cassettes) == 0 || len(chunks) == 0 {
		t.Fatal("recordings not found")
	}
	var out [][]byte
	for _, f := range cassettes {
		for _, ex := range LoadCassette(t, f) {
			if !strings.HasPrefix(ex.ContentType, "application/json") {
				out = append(out, ex.Body)
			}
		}
	}
	for _, f := range chunks {
		for _, ex := range LoadChunks(t, f, first) {
			out = append(out, ex.Body)
		}
	}
	return out
}

// ReplayAll runs replay on every recording below root, each in a subtest
// named by its path below root, and returns how many recordings there were,
// how many rounds the replays reported and how many recordings each host
// had.
func ReplayAll(t *testing.T, root string, replay func(t *testing.T, path string) (host string, rounds int)) (files, rounds int, perHost map[string]int) {
	t.Helper()
	paths := Recordings(t, root)
	perHost = map[string]int{}
	for _, f := range paths {
		rel, _ := filepath.Rel(root, f)
		t.Run(rel, func(t *testing.T) {
			host, n := replay(t, f)
			perHost[host]++
			rounds += n
		})
	}
	return len(paths), rounds, perHost
}
