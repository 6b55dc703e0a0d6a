package chatcompletions

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/stewardhq/steward/internal/testenv"
)

// interaction is one recorded request and answer, whatever the cassette
// format.
type interaction struct {
	URL         string
	Request     map[string]any // nil when the recorder kept no request
	Status      int
	ContentType string
	Body        []byte
}

// recording is one recorded file.
type recording struct {
	Path         string // relative to the chat-completions fixture folder
	Interactions []interaction
}

func fixtureDir(t testing.TB) string {
	return filepath.Join(testenv.SharedDir(t), "peers", "fixtures", "chat-completions")
}

// loadRecordings reads every file under the chat-completions fixtures.
func loadRecordings(t testing.TB) []recording {
	t.Helper()
	root := fixtureDir(t)
	var out []recording
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var rec recording
		switch {
		case strings.HasSuffix(path, ".chunks.txt"):
			rec, err = parseChunks(b)
		case strings.HasSuffix(path, ".yaml"):
			rec, err = parseCassette(b)
		default:
			return fmt.Errorf("unknown recording format: %s", rel)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		rec.Path = filepath.ToSlash(rel)
		out = append(out, rec)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("no chat completions recordings found")
	}
	return out
}

// parseChunks re-frames vercel-ai's JSON lines as SSE with a final [DONE].
func parseChunks(b []byte) (recording, error) {
	var buf bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		fmt.Fprintf(&buf, "data: %s\n\n", line)
	}
	if err := sc.Err(); err != nil {
		return recording{}, err
	}
	buf.WriteString("data: [DONE]\n\n")
	return recording{Interactions: []interaction{{Status: 200, ContentType: "text/event-stream", Body: buf.Bytes()}}}, nil
}

// parseCassette reads go-vcr (fantasy, version 2) and VCR.py (pydantic-ai)
// cassettes.
func parseCassette(b []byte) (recording, error) {
	var doc struct {
		Interactions []struct {
			Request struct {
				URL        string `yaml:"url"`
				URI        string `yaml:"uri"`
				Body       any    `yaml:"body"`
				ParsedBody any    `yaml:"parsed_body"`
			} `yaml:"request"`
			Response struct {
				Code    int                 `yaml:"code"`
				Status  any                 `yaml:"status"`
				Headers map[string][]string `yaml:"headers"`
				Body    any                 `yaml:"body"`
				Parsed  any                 `yaml:"parsed_body"`
			} `yaml:"response"`
		} `yaml:"interactions"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return recording{}, err
	}
	var rec recording
	for _, it := range doc.Interactions {
		var in interaction
		in.URL = it.Request.URL + it.Request.URI
		switch body := it.Request.Body.(type) {
		case string:
			if err := json.Unmarshal([]byte(body), &in.Request); err != nil {
				return rec, fmt.Errorf("request body: %w", err)
			}
		}
		if it.Request.ParsedBody != nil {
			m, err := toJSONMap(it.Request.ParsedBody)
			if err != nil {
				return rec, err
			}
			in.Request = m
		}
		in.Status = it.Response.Code
		if st, ok := it.Response.Status.(map[string]any); ok {
			if c, ok := st["code"].(int); ok {
				in.Status = c
			}
		}
		for k, v := range it.Response.Headers {
			if strings.EqualFold(k, "content-type") && len(v) > 0 {
				in.ContentType = v[0]
			}
		}
		switch body := it.Response.Body.(type) {
		case string:
			in.Body = []byte(body)
		case map[string]any:
			if s, ok := body["string"].(string); ok {
				in.Body = []byte(s)
			}
		}
		if it.Response.Parsed != nil {
			j, err := json.Marshal(normalizeYAML(it.Response.Parsed))
			if err != nil {
				return rec, err
			}
			in.Body = j
		}
		rec.Interactions = append(rec.Interactions, in)
	}
	return rec, nil
}

func toJSONMap(v any) (map[string]any, error) {
	j, err := json.Marshal(normalizeYAML(v))
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(j, &m)
}

// normalizeYAML turns yaml.v3's maps into JSON-encodable ones.
func normalizeYAML(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeYAML(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = normalizeYAML(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = normalizeYAML(e)
		}
		return x
	}
	return v
}

// recordedText concatenates the first choice's content the simplest way,
// independently of the adapter's accumulator.
func recordedText(in interaction) string {
	var b strings.Builder
	add := func(j []byte) {
		var c struct {
			Choices []struct {
				Delta   *struct{ Content any } `json:"delta"`
				Message *struct{ Content any } `json:"message"`
			} `json:"choices"`
		}
		if json.Unmarshal(j, &c) != nil || len(c.Choices) == 0 {
			return
		}
		if d := c.Choices[0].Delta; d != nil {
			if s, ok := d.Content.(string); ok {
				b.WriteString(s)
			}
		}
		if m := c.Choices[0].Message; m != nil {
			if s, ok := m.Content.(string); ok {
				b.WriteString(s)
			}
		}
	}
	if strings.HasPrefix(in.ContentType, "application/json") {
		add(in.Body)
		return b.String()
	}
	for _, line := range strings.Split(string(in.Body), "\n") {
		if rest, ok := strings.CutPrefix(line, "data: "); ok {
			add([]byte(rest))
		}
	}
	return b.String()
}
