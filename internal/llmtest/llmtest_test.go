package llmtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestWireHelpers(t *testing.T) {
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"JSONEqual ignores key order and spacing", JSONEqual([]byte(`{"a":1, "b":[2]}`), []byte(`{"b":[2],"a":1}`)), true},
		{"JSONEqual tells values apart", JSONEqual([]byte(`{"a":1}`), []byte(`{"a":2}`)), false},
		{"JSONEqual refuses non-JSON", JSONEqual([]byte(`{`), []byte(`{`)), false},
		{"ContentText of a string", ContentText(json.RawMessage(`"hi"`)), "hi"},
		{"ContentText of parts", ContentText(json.RawMessage(`[{"type":"text","text":"a"},{"type":"input_text","text":"b"}]`)), "ab"},
		{"SSE names each event by its type", SSE(`{"type":"x"}`, `{"type":"y","v":1}`), "event: x\ndata: {\"type\":\"x\"}\n\nevent: y\ndata: {\"type\":\"y\",\"v\":1}\n\n"},
		{"JSONString escapes", JSONString(`a"b`), `"a\"b"`},
		{"Cuts by step and after events", Cuts([]byte("ab\n\ncd\n\n"), 5), []int{0, 5, 3, 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Errorf("got %#v, want %#v", tt.got, tt.want)
			}
		})
	}
}

func TestLoadRecordings(t *testing.T) {
	dir := t.TempDir()
	cassette := `interactions:
- request:
    body: '{"model":"m"}'
    url: https://api.example.invalid/v1/messages
  response:
    status: {code: 201}
    headers: {Content-Type: [application/json]}
    body: {string: '{"ok":true}'}
- request:
    uri: https://api.example.invalid/v1/messages
    parsed_body: {model: n}
  response:
    code: 200
    body: "data: {}\n\n"
`
	chunks := "{\"type\":\"start\",\"n\":1}\n{\"type\":\"delta\"}\n\n{\"type\":\"start\",\"n\":2}\n"
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cp := write("b/rec.yaml", cassette)
	kp := write("a/rec.chunks.txt", chunks)
	write("a/notes.md", "not a recording")

	exs := LoadCassette(t, cp)
	want := []Exchange{
		{Request: json.RawMessage(`{"model":"m"}`), URL: "https://api.example.invalid/v1/messages", Status: 201, ContentType: "application/json", Body: []byte(`{"ok":true}`)},
		{Request: json.RawMessage(`{"model":"n"}`), URL: "https://api.example.invalid/v1/messages", Status: 200, Body: []byte("data: {}\n\n")},
	}
	if !reflect.DeepEqual(exs, want) {
		t.Errorf("LoadCassette = %+v, want %+v", exs, want)
	}
	ks := LoadChunks(t, kp, "start")
	if len(ks) != 2 || string(ks[0].Body) != "event: start\ndata: {\"type\":\"start\",\"n\":1}\n\nevent: delta\ndata: {\"type\":\"delta\"}\n\n" || ks[1].ContentType != "text/event-stream" {
		t.Errorf("LoadChunks = %+v", ks)
	}
	if got := Recordings(t, dir); !reflect.DeepEqual(got, []string{kp, cp}) {
		t.Errorf("Recordings = %v, want %v", got, []string{kp, cp})
	}
	streams := RecordedStreams(t, []string{cp}, []string{kp}, "start")
	if len(streams) != 3 || string(streams[0]) != "data: {}\n\n" {
		t.Errorf("RecordedStreams = %q, want the streamed cassette answer then both chunk answers", streams)
	}
}
