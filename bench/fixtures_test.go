package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/stewardhq/steward/internal/testenv"
)

// stream is one recorded streamed answer with status 200.
type stream struct {
	// Name is the recording's path under the API's fixture folder, with
	// "#n" for the n-th interaction of a cassette.
	Name string
	Body []byte
}

// streams returns the streamed answers recorded for one API folder
// ("chat-completions", "anthropic-messages" or "responses"), sorted by name. Non-streamed
// answers and answers with an HTTP error status are left out.
func streams(tb testing.TB, api string) []stream {
	tb.Helper()
	root := filepath.Join(testenv.SharedDir(tb), "peers", "fixtures", api)
	var out []stream
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		switch {
		case strings.HasSuffix(path, ".chunks.txt"):
			bodies, err := reframe(b, api != "chat-completions")
			if err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
			for i, body := range bodies {
				name := rel
				if len(bodies) > 1 {
					name = fmt.Sprintf("%s#%d", rel, i)
				}
				out = append(out, stream{Name: name, Body: body})
			}
		case strings.HasSuffix(path, ".yaml"):
			bodies, err := cassetteStreams(b)
			if err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
			for i, body := range bodies {
				if body != nil {
					out = append(out, stream{Name: fmt.Sprintf("%s#%d", rel, i), Body: body})
				}
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("reading the %s recordings: %v", api, err)
	}
	if len(out) == 0 {
		tb.Fatalf("no streamed %s recording under %s", api, root)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// reframe turns vercel-ai's JSON lines (SSE framing stripped by its
// recorder) back into SSE bodies: "data:" lines and a final [DONE] for
// Chat Completions, "event:"+"data:" pairs named by the type field for
// Anthropic and Responses. A file that holds several answers in a row (a
// new message_start or response.created) gives one body per answer, as
// each was one HTTP response.
func reframe(b []byte, named bool) ([][]byte, error) {
	var out [][]byte
	var buf bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if named {
			var ev struct {
				Type string `json:"type"`
			}
			if err := json.Unmarshal(line, &ev); err != nil || ev.Type == "" {
				return nil, fmt.Errorf("a chunk line without a type: %q", line)
			}
			if (ev.Type == "message_start" || ev.Type == "response.created") && buf.Len() > 0 {
				out = append(out, bytes.Clone(buf.Bytes()))
				buf.Reset()
			}
			fmt.Fprintf(&buf, "event: %s\n", ev.Type)
		}
		fmt.Fprintf(&buf, "data: %s\n\n", line)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !named {
		buf.WriteString("data: [DONE]\n\n")
	}
	return append(out, buf.Bytes()), nil
}

// cassetteStreams returns the response body of every interaction of a
// go-vcr or VCR.py cassette that is a streamed answer with status 200, nil
// for the others.
func cassetteStreams(b []byte) ([][]byte, error) {
	var doc struct {
		Interactions []struct {
			Response struct {
				Code   int `yaml:"code"`
				Status any `yaml:"status"` // "200 OK" (go-vcr) or {code: 200} (VCR.py)
				Body   any `yaml:"body"`
			} `yaml:"response"`
		} `yaml:"interactions"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	var out [][]byte
	for _, in := range doc.Interactions {
		code := in.Response.Code
		if st, ok := in.Response.Status.(map[string]any); ok && code == 0 {
			code, _ = st["code"].(int)
		}
		var body string
		switch x := in.Response.Body.(type) {
		case string:
			body = x
		case map[string]any:
			body, _ = x["string"].(string)
		}
		t := strings.TrimLeft(body, " \r\n")
		// A streamed body opens with an SSE field or comment (OpenRouter
		// starts with ": OPENROUTER PROCESSING"); a JSON answer with "{".
		sse := strings.HasPrefix(t, "data:") || strings.HasPrefix(t, "event:") || (strings.HasPrefix(t, ":") && strings.Contains(t, "\ndata:"))
		if code != 200 || !sse {
			out = append(out, nil)
			continue
		}
		out = append(out, []byte(body))
	}
	return out, nil
}
