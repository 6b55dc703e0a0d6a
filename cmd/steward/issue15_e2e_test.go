package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stewardhq/steward/mailbox"
)

// counting is a provider that answers every request with status and body,
// and counts the requests.
func counting(t *testing.T, status int, header map[string]string, body string) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// events decodes --json output, one event per line.
func events(t *testing.T, stdout string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if line == "" {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("--json line is not JSON: %q", line)
		}
		out = append(out, ev)
	}
	return out
}

func lastChat(t *testing.T, home string) map[string]any {
	t.Helper()
	r := steward(t, home, "", nil, "chats", "show", "--json", listFirstChatID(t, home))
	var c map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &c); err != nil {
		t.Fatalf("chats show --json: %v %q", err, r.stdout)
	}
	return c
}

// Point 3: a stream that closes after two chunks, with no finish_reason and
// no [DONE], is an error (exit 1, one line), --json ends with done/error,
// and the partial answer is stored marked incomplete.
func TestCutOffAnswerIsAnError(t *testing.T) {
	home := t.TempDir()
	cut := `data: {"choices":[{"index":0,"delta":{"content":"The capital is"}}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{"content":" Can"}}]}` + "\n\n"
	p := newScripted(t, cut, cut)
	r := steward(t, home, "", nil, "ask", "--provider", "vllm", "--base-url", p.baseURL(), "Capital of Australia?")
	if r.code != 1 || !strings.Contains(r.stderr, "ended before the answer was complete") {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	if n := strings.Count(r.stderr, "ended before the answer was complete"); n != 1 {
		t.Fatalf("the error is printed %d times, want once: %q", n, r.stderr)
	}
	if !strings.Contains(r.stdout, "The capital is Can") {
		t.Fatalf("what arrived is shown: %q", r.stdout)
	}
	c := lastChat(t, home)
	msgs := c["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	if last["role"] != "assistant" || last["incomplete"] != true || last["text"] != "The capital is Can" {
		t.Fatalf("the partial answer must be stored marked incomplete: %v", last)
	}
	r = steward(t, home, "", nil, "ask", "--json", "--provider", "vllm", "--base-url", p.baseURL(), "Again?")
	evs := events(t, r.stdout)
	end := evs[len(evs)-1]
	if r.code != 1 || end["type"] != "done" || end["stop"] != "error" {
		t.Fatalf("--json must end with done/error, not answered: %v (exit %d)", end, r.code)
	}
	if show := steward(t, home, "", nil, "chats", "show", listFirstChatID(t, home)); !strings.Contains(show.stdout, "incomplete") {
		t.Fatalf("chats show must say the answer is incomplete: %q", show.stdout)
	}
}

// Point 3 on the other wire APIs: no response.completed, no message_stop.
func TestCutOffAnswerOnResponsesAndMessages(t *testing.T) {
	home := t.TempDir()
	responses := "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r\",\"status\":\"in_progress\",\"output\":[]}}\n\n" +
		"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"content_index\":0,\"delta\":\"Hello from \"}\n\n"
	rs := newScripted(t, responses)
	r := steward(t, home, "", []string{"OPENAI_API_KEY=sk-test-1234567"}, "ask", "--provider", "openai", "--api", "responses", "--model", "gpt-4o", "--base-url", rs.baseURL(), "Hello")
	if r.code != 1 || !strings.Contains(r.stderr, "response.completed") || !strings.Contains(r.stdout, "Hello from") {
		t.Fatalf("responses: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	messages := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Servus \"}}\n\n"
	an := newScripted(t, messages)
	r = steward(t, home, "", []string{"ANTHROPIC_API_KEY=sk-ant-test-123"}, "ask", "--json", "--provider", "anthropic", "--base-url", an.baseURL(), "Hi")
	evs := events(t, r.stdout)
	if end := evs[len(evs)-1]; r.code != 1 || end["stop"] != "error" || !strings.Contains(r.stderr, "message_stop") {
		t.Fatalf("messages: exit %d last event %v stderr %q", r.code, end, r.stderr)
	}
}

// Point 3 and 7: a stream that closes before anything was shown is asked
// again, with one "retrying (2/4) after …" line.
func TestEmptyStreamIsRetriedOnce(t *testing.T) {
	home := t.TempDir()
	p := newScripted(t, "", textReply("Canberra."))
	r := steward(t, home, "", nil, "ask", "--provider", "vllm", "--base-url", p.baseURL(), "Capital of Australia?")
	if r.code != 0 || r.stdout != "Canberra.\n" {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if n := strings.Count(r.stderr, "retrying (2/4) after"); n != 1 || strings.Contains(r.stderr, "(3/4)") {
		t.Fatalf("want one retry line, got %q", r.stderr)
	}
}

// Point 4: unknown tool IDs are a usage error naming the known ones; a
// refused one gets one line with the reason.
func TestToolsFlagUnknownAndRefused(t *testing.T) {
	home := t.TempDir()
	p := newScripted(t, textReply("ok"))
	r := steward(t, home, "", nil, "ask", "--provider", "vllm", "--base-url", p.baseURL(), "--tools", "web_serch,bogus", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "web_serch, bogus") || !strings.Contains(r.stderr, "web_search") || !strings.Contains(r.stderr, "read_web_page") {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	if p.request(0) != nil {
		t.Fatal("a usage error must send nothing")
	}
	writeOrgPlugin(t, home, "org", "it", `CONFIG["SETTINGS"]["DataTools.MinimumProviderConfidenceByToolId"] = { ["read_web_page"] = "HIGH" }`+"\n")
	r = steward(t, home, "", []string{"OPENAI_API_KEY=sk-test-1234567"}, "ask", "--provider", "openai", "--base-url", p.baseURL(), "--tools", "read_web_page", "hi")
	if r.code != 0 {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	lines := 0
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.Contains(l, "read_web_page is not offered to OpenAI") {
			lines++
			if !strings.Contains(l, "PROVIDER_CONFIDENCE_TOO_LOW") {
				t.Errorf("the line must name the reason: %q", l)
			}
		}
	}
	if lines != 1 {
		t.Fatalf("want one line for the refused tool, got %d: %q", lines, r.stderr)
	}
}

// Point 7: no key, a malformed base URL, errors that cannot get better,
// and every error printed once.
func TestFailingFast(t *testing.T) {
	home := t.TempDir()
	srv, n := counting(t, 200, nil, "")
	start := time.Now()
	r := steward(t, home, "", nil, "ask", "--provider", "openai", "--base-url", srv.URL+"/v1/", "hi")
	if r.code != 1 || !strings.Contains(r.stderr, "OPENAI_API_KEY") || n.Load() != 0 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("no key: exit %d, %d requests, stderr %q", r.code, n.Load(), r.stderr)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("refusing a provider without its key took %s", d)
	}
	for _, bad := range []string{"not a url", "ftp://127.0.0.1/v1/", "http://", "127.0.0.1:8080/v1", "http://127.0.0.1:99999/v1/", "http://user:pw@127.0.0.1/v1/"} {
		if r := steward(t, home, "", nil, "ask", "--provider", "vllm", "--base-url", bad, "hi"); r.code != 2 || !strings.Contains(r.stderr, "--base-url") {
			t.Errorf("--base-url %q: exit %d stderr %q", bad, r.code, r.stderr)
		}
	}
	for _, status := range []int{400, 401, 403, 404} {
		srv, n := counting(t, status, nil, `{"error":{"message":"nope `+fmt.Sprint(status)+`"}}`)
		r := steward(t, home, "", []string{"OPENAI_API_KEY=sk-test-1234567"}, "ask", "--provider", "openai", "--base-url", srv.URL+"/v1/", "hi")
		if r.code != 1 || n.Load() != 1 || strings.Contains(r.stderr, "retrying") {
			t.Errorf("HTTP %d: exit %d, %d requests (want 1, no retry), stderr %q", status, r.code, n.Load(), r.stderr)
		}
		if c := strings.Count(r.stderr, "nope "+fmt.Sprint(status)); c != 1 {
			t.Errorf("HTTP %d: the error is printed %d times: %q", status, c, r.stderr)
		}
	}
	// 503 is worth another try: one line per retry, then the error once.
	srv, n = counting(t, 503, map[string]string{"Retry-After": "0"}, `{"error":{"message":"overloaded"}}`)
	r = steward(t, home, "", []string{"OPENAI_API_KEY=sk-test-1234567"}, "ask", "--provider", "openai", "--base-url", srv.URL+"/v1/", "hi")
	if r.code != 1 || n.Load() != 4 || strings.Count(r.stderr, "retrying (") != 3 || !strings.Contains(r.stderr, "retrying (2/4) after 0s") || strings.Count(r.stderr, "overloaded") != 4 {
		t.Fatalf("503: exit %d, %d requests, stderr %q", r.code, n.Load(), r.stderr)
	}
}

// Point 8: piped text and a prompt combine; piped text alone is enough.
func TestPipedTextAndPromptCombine(t *testing.T) {
	home := t.TempDir()
	p := newScripted(t, textReply("Looks fine."), textReply("A diff."))
	diff := "diff --git a/x.go b/x.go\n+func x() {}\n"
	r := steward(t, home, diff, nil, "ask", "--provider", "vllm", "--base-url", p.baseURL(), "review", "this")
	if r.code != 0 {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	msgs := p.request(0)["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)["content"].(string)
	if !strings.HasPrefix(last, "review this") || !strings.Contains(last, "+func x() {}") {
		t.Fatalf("the request must carry the prompt and the piped text: %q", last)
	}
	r = steward(t, home, diff, nil, "ask", "--provider", "vllm", "--base-url", p.baseURL())
	if r.code != 0 {
		t.Fatalf("piped text alone: exit %d stderr %q", r.code, r.stderr)
	}
	msgs = p.request(1)["messages"].([]any)
	if last := msgs[len(msgs)-1].(map[string]any)["content"]; last != diff {
		t.Fatalf("piped text alone is the prompt: %q", last)
	}
}

// Issue 18 point 7: more than 16 MiB on stdin is refused, naming the
// limit, and nothing is sent.
func TestStdinOverTheLimitIsRefused(t *testing.T) {
	home := t.TempDir()
	p := newScripted(t)
	big := strings.Repeat("a", 16<<20) + "TAIL"
	r := steward(t, home, big, nil, "ask", "--provider", "vllm", "--base-url", p.baseURL(), "-")
	if r.code != 2 || !strings.Contains(r.stderr, "16 MiB") || p.request(0) != nil {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
}

// Point 10: ask --json names the chat; --chat ID and --continue continue it.
func TestAskContinuesAStoredChat(t *testing.T) {
	home := t.TempDir()
	p := newScripted(t, textReply("Canberra."), textReply("Canberra, in French too."), textReply("Oui."))
	r := steward(t, home, "", nil, "ask", "--json", "--provider", "vllm", "--base-url", p.baseURL(), "Capital of Australia?")
	evs := events(t, r.stdout)
	if r.code != 0 || evs[0]["type"] != "chat" {
		t.Fatalf("the first event must name the chat: %v", evs)
	}
	id := evs[0]["chat"].(map[string]any)["id"].(string)
	if id != listFirstChatID(t, home) || evs[0]["chat"].(map[string]any)["stored"] != true {
		t.Fatalf("chat event %v, stored chat %s", evs[0], listFirstChatID(t, home))
	}
	// No provider flags: the chat's own provider (on its own base URL).
	r = steward(t, home, "", nil, "ask", "--chat", id[:8], "And in French?")
	if r.code != 0 || !strings.Contains(r.stdout, "in French too") {
		t.Fatalf("--chat: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if msgs := p.request(1)["messages"].([]any); len(msgs) != 4 || !strings.Contains(fmt.Sprint(msgs[1]), "Capital of Australia?") {
		t.Fatalf("--chat must send the chat's history: %v", msgs)
	}
	r = steward(t, home, "", nil, "ask", "--continue", "Merci?")
	if r.code != 0 || len(p.request(2)["messages"].([]any)) != 6 {
		t.Fatalf("--continue: exit %d stderr %q", r.code, r.stderr)
	}
	if c := lastChat(t, home); len(c["messages"].([]any)) != 6 {
		t.Fatalf("one chat with six messages, got %v", c)
	}
	if r := steward(t, home, "", nil, "ask", "--chat", "nosuch", "x"); r.code != 1 || !strings.Contains(r.stderr, "no stored chat") {
		t.Fatalf("unknown chat: %d %q", r.code, r.stderr)
	}
}

// Point 9: chat --resume without provider flags continues with the chat's
// own provider, or says why it cannot.
func TestChatResumeUsesTheChatsProvider(t *testing.T) {
	home := t.TempDir()
	p := newScripted(t, textReply("First."), textReply("Second."))
	if r := steward(t, home, "", nil, "ask", "--provider", "vllm", "--base-url", p.baseURL(), "one"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	id := listFirstChatID(t, home)
	r := steward(t, home, "two\n", nil, "chat", "--resume", id[:8])
	if r.code != 0 || !strings.Contains(r.stdout, "Second.") {
		t.Fatalf("resume: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	an, _ := counting(t, 400, nil, `{"error":{"message":"no"}}`)
	if r := steward(t, home, "", []string{"ANTHROPIC_API_KEY=sk-ant-test-123"}, "ask", "--provider", "anthropic", "--base-url", an.URL+"/v1/", "three"); r.code != 1 {
		t.Fatalf("the scripted server answers nothing: %d", r.code)
	}
	id = listFirstChatID(t, home)
	r = steward(t, home, "four\n", nil, "chat", "--resume", id[:8])
	if r.code != 1 || !strings.Contains(r.stderr, "this chat was answered by anthropic") || !strings.Contains(r.stderr, "ANTHROPIC_API_KEY") {
		t.Fatalf("resume without the key: exit %d stderr %q", r.code, r.stderr)
	}
}

// Point 11: --version, unknown subcommands, mail remove, and the command
// the sign-in hint names exists.
func TestCommandsUsersExpect(t *testing.T) {
	home := t.TempDir()
	if r := steward(t, home, "", nil, "--version"); r.code != 0 || !strings.HasPrefix(r.stdout, "steward ") {
		t.Fatalf("--version: %d %q %q", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{{"mail", "bogus"}, {"config", "bogus"}, {"mail", "reset-sign-in"}} {
		if r := steward(t, home, "", nil, args...); r.code != 2 || !strings.Contains(r.stderr, "unknown command") || strings.Contains(r.stdout, "Available Commands") {
			t.Errorf("steward %v: exit %d stdout %q stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
	if r := steward(t, home, "pw-secret-1\n", nil, "mail", "add", "--id", "work", "--host", "127.0.0.1", "--username", "me"); r.code != 0 {
		t.Fatalf("mail add: %d %q", r.code, r.stderr)
	}
	// The hint after a refused sign-in names a command; it must exist.
	hint := (&mailbox.SignInRefusedError{MailboxID: "work", At: time.Now()}).Error()
	m := regexp.MustCompile(`steward ((?:[a-z][a-z-]* ?)+)`).FindStringSubmatch(hint)
	if m == nil {
		t.Fatalf("the hint names no command: %q", hint)
	}
	words := append(strings.Fields(m[1]), "--mailbox", "work")
	if r := steward(t, home, "", nil, words...); r.code != 0 || strings.Contains(r.stdout, "Available Commands") {
		t.Fatalf("the hint's command %v: exit %d stdout %q stderr %q", words, r.code, r.stdout, r.stderr)
	}
	if r := steward(t, home, "", nil, "mail", "remove", "nosuch"); r.code != 2 || !strings.Contains(r.stderr, "work") {
		t.Fatalf("remove unknown: %d %q", r.code, r.stderr)
	}
	if r := steward(t, home, "", nil, "mail", "remove", "work"); r.code != 0 {
		t.Fatalf("mail remove: %d %q", r.code, r.stderr)
	}
	settings, _ := os.ReadFile(filepath.Join(home, "config", "settings.json"))
	secrets, _ := os.ReadFile(filepath.Join(home, "config", "secrets.json"))
	if strings.Contains(string(settings), `"work"`) || strings.Contains(string(secrets), "pw-secret-1") {
		t.Fatalf("the mailbox or its secret is still there:\n%s\n%s", settings, secrets)
	}
	if r := steward(t, home, "", nil, "mail", "status"); r.code != 1 || !strings.Contains(r.stderr, "no mailbox is configured") {
		t.Fatalf("status after remove: %d %q", r.code, r.stderr)
	}
}

// Point 16: the mail index is written 0600, like the chat store.
func TestMailIndexIsPrivate(t *testing.T) {
	home := t.TempDir()
	if r := steward(t, home, "pw-secret-1\n", nil, "mail", "add", "--id", "work", "--host", "127.0.0.1", "--username", "me"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := steward(t, home, "", nil, "mail", "status"); r.code != 0 {
		t.Fatalf("status: %d %q", r.code, r.stderr)
	}
	p := newScripted(t, textReply("ok"))
	steward(t, home, "", nil, "ask", "--provider", "vllm", "--base-url", p.baseURL(), "hi")
	for _, name := range []string{"mail.db", "steward.db"} {
		fi, err := os.Stat(filepath.Join(home, "data", name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", name, fi.Mode().Perm())
		}
	}
	entries, _ := os.ReadDir(filepath.Join(home, "data"))
	for _, e := range entries {
		if fi, _ := e.Info(); fi != nil && !e.IsDir() && fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is readable by others: %v", e.Name(), fi.Mode().Perm())
		}
	}
}

// Point 14: a command that reads no secret never asks the OS keyring
// (a D-Bus round trip, which may start a daemon or ask to unlock it); one
// that stores a secret does.
func TestOnlyCommandsWithSecretsAskTheKeyring(t *testing.T) {
	home := t.TempDir()
	sock := filepath.Join(t.TempDir(), "bus")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var dials atomic.Int32
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			dials.Add(1)
			c.Close()
		}
	}()
	bus := []string{"DBUS_SESSION_BUS_ADDRESS=unix:path=" + sock}
	// (ask reads the provider's key, which may be stored in the keyring.)
	for _, args := range [][]string{{"--help"}, {"--version"}, {"chats"}, {"chats", "--json"}} {
		if r := steward(t, home, "", bus, args...); r.code != 0 {
			t.Fatalf("%v: %d %q", args, r.code, r.stderr)
		}
		if n := dials.Load(); n != 0 {
			t.Fatalf("steward %v asked the keyring %d times", args, n)
		}
	}
	if r := steward(t, home, "pw-secret-1\n", bus, "mail", "add", "--id", "work", "--host", "127.0.0.1", "--username", "me"); r.code != 0 {
		t.Fatalf("mail add: %d %q", r.code, r.stderr)
	}
	if dials.Load() == 0 {
		t.Fatal("storing a secret must ask the keyring (the test's bus was never dialled)")
	}
	// Reading the local mail index needs no secret.
	dials.Store(0)
	for _, args := range [][]string{{"mail", "status"}, {"mail", "search", "delivery"}, {"mail", "search", "--json", "delivery"}} {
		if r := steward(t, home, "", bus, args...); r.code != 0 {
			t.Fatalf("%v: %d %q", args, r.code, r.stderr)
		}
		if n := dials.Load(); n != 0 {
			t.Fatalf("steward %v asked the keyring %d times", args, n)
		}
	}
}
