package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// binary is the steward command, built once for every end-to-end test.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "steward-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "steward")
	out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building steward: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// scripted is a Chat Completions server on loopback that answers each
// request with the next scripted stream and records the requests.
type scripted struct {
	srv      *httptest.Server
	mu       sync.Mutex
	replies  []string
	requests []map[string]any
}

func newScripted(t *testing.T, replies ...string) *scripted {
	s := &scripted{replies: replies}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req map[string]any
		if err := json.Unmarshal(body, &req); err != nil {
			t.Errorf("provider got a body that is not JSON: %v", err)
		}
		s.mu.Lock()
		s.requests = append(s.requests, req)
		if len(s.replies) == 0 {
			s.mu.Unlock()
			t.Errorf("provider got an unscripted request %d", len(s.requests))
			http.Error(w, `{"error":{"message":"no more scripted replies"}}`, http.StatusBadRequest)
			return
		}
		reply := s.replies[0]
		s.replies = s.replies[1:]
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, reply)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *scripted) baseURL() string { return s.srv.URL + "/v1/" }

func (s *scripted) request(i int) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= len(s.requests) {
		return nil
	}
	return s.requests[i]
}

// textReply streams text in pieces, the way hosts do.
func textReply(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		c, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": p}}}})
		fmt.Fprintf(&b, "data: %s\n\n", c)
	}
	b.WriteString(`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":11,"completion_tokens":5}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// toolReply asks for one tool call.
func toolReply(id, name, args string) string {
	c, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"tool_calls": []any{
		map[string]any{"index": 0, "id": id, "type": "function", "function": map[string]any{"name": name, "arguments": args}}}}}}})
	return fmt.Sprintf("data: %s\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n", c)
}

type result struct {
	stdout, stderr string
	code           int
}

// steward runs the binary with a clean environment rooted in home.
func steward(t *testing.T, home, stdin string, env []string, args ...string) result {
	t.Helper()
	return runBinary(t, binary, home, stdin, env, args...)
}

// runBinary runs the steward binary bin (see steward).
func runBinary(t *testing.T, bin, home, stdin string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append([]string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"STEWARD_CONFIG_DIR=" + filepath.Join(home, "config"),
		"STEWARD_DATA_DIR=" + filepath.Join(home, "data"),
		"STEWARD_NO_OLLAMA_PROBE=1",
		"DBUS_SESSION_BUS_ADDRESS=disabled:",
	}, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("steward %v did not finish in 60s", args)
	}
	return result{stdout: out.String(), stderr: errb.String(), code: cmd.ProcessState.ExitCode()}
}

func TestFirstRunWithoutProviderSaysWhatToSet(t *testing.T) {
	home := t.TempDir()
	r := steward(t, home, "", nil, "ask", "hello")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1; stderr: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "OPENAI_API_KEY") || strings.Contains(r.stderr, "goroutine") {
		t.Fatalf("want one clear line naming what to set, got %q", r.stderr)
	}
}

func TestUsageErrorsExitTwo(t *testing.T) {
	home := t.TempDir()
	for _, args := range [][]string{{"ask"}, {"--bogus"}, {"nosuchcommand"}, {"settings", "frobnicate", "x.y"}, {"chats", "show"}, {"read"}} {
		if r := steward(t, home, "", nil, args...); r.code != 2 {
			t.Errorf("steward %v: exit %d, want 2 (stderr %q)", args, r.code, r.stderr)
		}
	}
	if r := steward(t, home, "", nil, "--help"); r.code != 0 || !strings.Contains(r.stdout, "Examples:") {
		t.Errorf("--help: exit %d, output %q", r.code, r.stdout)
	}
	for _, c := range []string{"ask", "chat", "chats", "tools", "providers", "settings", "config", "read", "mail", "mail add", "mail sync", "mail status", "mail search", "mail count"} {
		if r := steward(t, home, "", nil, append(strings.Fields(c), "--help")...); r.code != 0 || !strings.Contains(r.stdout, "Example") {
			t.Errorf("%s --help: exit %d, no examples in %q", c, r.code, r.stdout)
		}
	}
}

func TestAskTextAndJSON(t *testing.T) {
	home := t.TempDir()
	p := newScripted(t, textReply("Hello", ", world", "!"), textReply("Grüße"))
	r := steward(t, home, "", nil, "ask", "--provider", "vllm", "--base-url", p.baseURL(), "--model", "m1", "Say hello")
	if r.code != 0 || r.stdout != "Hello, world!\n" {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	req := p.request(0)
	if req["model"] != "m1" || req["stream"] != true {
		t.Fatalf("request: %v", req)
	}
	if _, has := req["parallel_tool_calls"]; has {
		t.Fatal("a request without tools must omit parallel_tool_calls")
	}

	r = steward(t, home, "Was ist das?", nil, "ask", "--json", "--provider", "vllm", "--base-url", p.baseURL(), "-")
	if r.code != 0 {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	var types []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("--json line is not JSON: %q", line)
		}
		types = append(types, ev["type"].(string))
		if ev["type"] == "text" && ev["text"] != "Grüße" {
			t.Fatalf("text event: %v", ev)
		}
	}
	if got := strings.Join(types, ","); got != "chat,text,usage,done" {
		t.Fatalf("events %s", got)
	}
	msgs := p.request(1)["messages"].([]any)
	if last := msgs[len(msgs)-1].(map[string]any); last["content"] != "Was ist das?" {
		t.Fatalf("the prompt from stdin did not arrive: %v", last)
	}
}

func TestChatThroughStdinAndResume(t *testing.T) {
	home := t.TempDir()
	p := newScripted(t, textReply("First answer."), textReply("Second answer."), textReply("Third answer."))
	r := steward(t, home, "first question\nsecond question\n/exit\n", nil, "chat", "--provider", "vllm", "--base-url", p.baseURL())
	if r.code != 0 || !strings.Contains(r.stdout, "First answer.") || !strings.Contains(r.stdout, "Second answer.") {
		t.Fatalf("chat: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if n := len(p.request(1)["messages"].([]any)); n != 4 {
		t.Fatalf("the second request must carry the history (system, user, assistant, user), has %d messages", n)
	}
	list := steward(t, home, "", nil, "chats", "--json")
	var chats []map[string]any
	if err := json.Unmarshal([]byte(list.stdout), &chats); err != nil || len(chats) != 1 {
		t.Fatalf("chats --json: %q %v", list.stdout, err)
	}
	id := chats[0]["id"].(string)
	r = steward(t, home, "third question\n", nil, "chat", "--resume", id[:8], "--provider", "vllm", "--base-url", p.baseURL())
	if r.code != 0 || !strings.Contains(r.stdout, "Third answer.") {
		t.Fatalf("resume: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	msgs := p.request(2)["messages"].([]any)
	if len(msgs) != 6 || !strings.Contains(fmt.Sprint(msgs[1]), "first question") {
		t.Fatalf("a resumed chat must send its whole history: %v", msgs)
	}
	show := steward(t, home, "", nil, "chats", "show", id)
	if !strings.Contains(show.stdout, "Third answer.") {
		t.Fatalf("chats show: %q", show.stdout)
	}
	if del := steward(t, home, "", nil, "chats", "delete", id); del.code != 0 {
		t.Fatalf("delete: %d %s", del.code, del.stderr)
	}
	if r := steward(t, home, "", nil, "chats", "show", id); r.code != 1 {
		t.Fatalf("a deleted chat must be gone: %d", r.code)
	}
}

func writeOrgPlugin(t *testing.T, home, group, id, body string) string {
	t.Helper()
	dir := filepath.Join(home, "config", "plugins", group, id)
	os.MkdirAll(dir, 0o755)
	p := filepath.Join(dir, "plugin.lua")
	src := fmt.Sprintf("ID = %q\nNAME = %q\nVERSION = \"1\"\nTYPE = \"CONFIGURATION\"\nCONFIG = {}\nCONFIG[\"SETTINGS\"] = {}\n", id, "Plugin "+id) + body
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigCheckReportsBrokenPluginsAndKeepsRunning(t *testing.T) {
	home := t.TempDir()
	writeOrgPlugin(t, home, "org", "syntax", "x = = 1\n")
	writeOrgPlugin(t, home, "local", "unknown", `CONFIG["SETTINGS"]["DataTools.Colour"] = "blue"`+"\n")
	writeOrgPlugin(t, home, "local", "wrongtype", `CONFIG["SETTINGS"]["DataTools.EnableTools"] = "yes"`+"\n")
	writeOrgPlugin(t, home, "local", "loop", "while true do end\n")
	writeOrgPlugin(t, home, "local", "bomb", "local s = 'xxxxxxxxxxxxxxxx'\nfor i = 1, 40 do s = s .. s end\n")
	start := time.Now()
	r := steward(t, home, "", nil, "config", "check")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1; %s %s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"syntax/plugin.lua:7", "unknown/plugin.lua:7: unknown setting \"DataTools.Colour\"", "wrongtype/plugin.lua:7: DataTools.EnableTools must be true or false", "loop/plugin.lua", "bomb/plugin.lua"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("config check output lacks %q:\n%s", want, r.stdout)
		}
	}
	t.Logf("config check on 5 broken plugins took %v", time.Since(start))
	// Steward keeps running with the broken plugins in place.
	p := newScripted(t, textReply("still here"))
	if r := steward(t, home, "", nil, "ask", "--provider", "vllm", "--base-url", p.baseURL(), "hi"); r.code != 0 || !strings.Contains(r.stdout, "still here") {
		t.Fatalf("ask with broken plugins: %d %q %q", r.code, r.stdout, r.stderr)
	}
	clean := t.TempDir()
	if r := steward(t, clean, "", nil, "config", "check"); r.code != 0 || r.stdout != "" {
		t.Fatalf("a clean configuration prints nothing: %d %q", r.code, r.stdout)
	}
}

func TestProviderErrorIsOneClearLine(t *testing.T) {
	home := t.TempDir()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`)
	}))
	defer srv.Close()
	r := steward(t, home, "", []string{"OPENAI_API_KEY=sk-wrong"}, "ask", "--provider", "openai", "--base-url", srv.URL+"/v1/", "hi")
	if r.code != 1 || !strings.Contains(r.stderr, "Incorrect API key") || strings.Contains(r.stderr, "sk-wrong") || strings.Contains(r.stderr, "goroutine") {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
}

func TestToolsShowsWhyAProviderIsBlocked(t *testing.T) {
	home := t.TempDir()
	writeOrgPlugin(t, home, "org", "it", `CONFIG["SETTINGS"]["DataTools.MinimumProviderConfidenceByToolId"] = { ["read_web_page"] = "HIGH" }`+"\n")
	r := steward(t, home, "", []string{"OPENAI_API_KEY=sk-test"}, "tools", "--provider", "openai")
	if r.code != 0 || !strings.Contains(r.stdout, "not offered to OpenAI") || !strings.Contains(r.stdout, "PROVIDER_CONFIDENCE_TOO_LOW") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = steward(t, home, "", nil, "tools", "--provider", "ollama", "--json")
	var out struct {
		Tools []struct {
			ID      string `json:"id"`
			Offered *bool  `json:"offered"`
		} `json:"tools"`
		Tokens int `json:"tool_tokens"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	found := false
	for _, tl := range out.Tools {
		if tl.ID == "read_web_page" {
			found = true
			if tl.Offered == nil || !*tl.Offered {
				t.Fatalf("a self-hosted (HIGH) provider must be offered read_web_page: %s", r.stdout)
			}
		}
	}
	if !found || out.Tokens <= 0 {
		t.Fatalf("catalogue or token count missing: %s", r.stdout)
	}
}

func TestSettingsSetRefusedOnLockedField(t *testing.T) {
	home := t.TempDir()
	writeOrgPlugin(t, home, "org", "it", `CONFIG["SETTINGS"]["read_web_page.timeoutSeconds"] = "30"`+"\n")
	r := steward(t, home, "", nil, "settings", "set", "read_web_page.timeoutSeconds", "90")
	if r.code != 1 || !strings.Contains(r.stderr, `locked by the organization plugin "Plugin it"`) {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	r = steward(t, home, "", nil, "settings", "set", "read_web_page.maxContentCharacters", "20000")
	if r.code != 0 {
		t.Fatalf("an unlocked field can be set: %d %q", r.code, r.stderr)
	}
	r = steward(t, home, "", nil, "settings", "get", "read_web_page.maxContentCharacters")
	if !strings.Contains(r.stdout, "= 20000") {
		t.Fatalf("get: %q", r.stdout)
	}
	r = steward(t, home, "", nil, "settings", "get", "read_web_page.timeoutSeconds")
	if !strings.Contains(r.stdout, "= 30") || !strings.Contains(r.stdout, "locked") {
		t.Fatalf("get locked: %q", r.stdout)
	}
	if r := steward(t, home, "", nil, "settings", "set", "read_web_page.nosuch", "1"); r.code != 2 {
		t.Fatalf("unknown field: %d", r.code)
	}
}

// TestAskEveryWireAPI drives `steward ask` against scripted servers of the
// other two wire APIs, chosen by provider kind and --base-url.
func TestAskEveryWireAPI(t *testing.T) {
	home := t.TempDir()
	anthropicStream := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":12,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: ping\ndata: {\"type\":\"ping\"}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Servus \"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"aus Wien.\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":5}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	an := newScripted(t, anthropicStream)
	r := steward(t, home, "", []string{"ANTHROPIC_API_KEY=sk-ant-test"}, "ask", "--provider", "anthropic", "--base-url", an.baseURL(), "Grüß dich")
	if r.code != 0 || r.stdout != "Servus aus Wien.\n" {
		t.Fatalf("anthropic: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if req := an.request(0); req["system"] == nil || req["max_tokens"] == nil || req["stream"] != true {
		t.Fatalf("anthropic request: %v", req)
	}

	responsesStream := "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"in_progress\",\"output\":[]}}\n\n" +
		"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":1,\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"Hello from \"}\n\n" +
		"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":2,\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"Responses.\"}\n\n" +
		"event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"sequence_number\":3,\"output_index\":0,\"item\":{\"id\":\"msg_1\",\"type\":\"message\",\"status\":\"completed\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"Hello from Responses.\",\"annotations\":[]}]}}\n\n" +
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":4,\"response\":{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"completed\",\"output\":[{\"id\":\"msg_1\",\"type\":\"message\",\"status\":\"completed\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"Hello from Responses.\",\"annotations\":[]}]}],\"usage\":{\"input_tokens\":9,\"output_tokens\":4,\"total_tokens\":13}}}\n\n"
	rs := newScripted(t, responsesStream)
	r = steward(t, home, "", []string{"OPENAI_API_KEY=sk-test"}, "ask", "--provider", "openai", "--api", "responses", "--model", "gpt-4o", "--base-url", rs.baseURL(), "Hello")
	if r.code != 0 || r.stdout != "Hello from Responses.\n" {
		t.Fatalf("responses: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if req := rs.request(0); req["store"] != false || req["input"] == nil {
		t.Fatalf("responses request: %v", req)
	}
}
