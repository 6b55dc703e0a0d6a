package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// holding is a Chat Completions server whose first answer streams a few
// words and then stays open until the client goes; later answers are
// scripted. It keeps the last user message of every request.
type holding struct {
	srv     *httptest.Server
	mu      sync.Mutex
	n       int
	prompts []string
	replies []string
}

func newHolding(t *testing.T, replies ...string) *holding {
	h := &holding{replies: replies}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &req)
		h.mu.Lock()
		n := h.n
		h.n++
		if len(req.Messages) > 0 {
			h.prompts = append(h.prompts, req.Messages[len(req.Messages)-1].Content)
		}
		h.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if n == 0 {
			io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"Starting a long answer"}}]}`+"\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		if n-1 < len(h.replies) {
			io.WriteString(w, h.replies[n-1])
			return
		}
		http.Error(w, `{"error":{"message":"no more replies"}}`, http.StatusTeapot)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *holding) prompt(i int) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if i >= len(h.prompts) {
		return ""
	}
	return h.prompts[i]
}

// Issue 15 point 9 on a terminal: Ctrl-C stops the answer and keeps the
// chat; lines can be edited and recalled; /exit prints the resume hint;
// the partial answer is stored marked incomplete.
func TestChatOnATerminal(t *testing.T) {
	home := t.TempDir()
	h := newHolding(t, textReply("Second answer."), textReply("Third answer."))
	tm := startOnTerminal(t, home, "chat", "--provider", "vllm", "--base-url", h.srv.URL+"/v1/")
	at := tm.waitFor("> ", 0)
	tm.send("first question\r")
	at = tm.waitFor("Starting a long answer", at)
	tm.send("\x03") // Ctrl-C while the answer streams
	at = tm.waitFor("[stopped", at)
	at = tm.waitFor("> ", at)
	// Line editing: "helo", cursor left, "l" makes "hello".
	tm.send("helo\x1b[Dl\r")
	at = tm.waitFor("Second answer.", at)
	at = tm.waitFor("> ", at)
	// History: the up arrow brings "hello" back.
	tm.send("\x1b[A\r")
	at = tm.waitFor("Third answer.", at)
	at = tm.waitFor("> ", at)
	tm.send("/exit\r")
	tm.waitFor("continue with: steward chat --resume", at)
	if code := tm.wait(); code != 0 {
		t.Fatalf("/exit: exit %d, want 0; terminal:\n%s", code, tm.output())
	}
	if h.prompt(1) != "hello" || h.prompt(2) != "hello" {
		t.Fatalf("edited and recalled lines: %q, %q", h.prompt(1), h.prompt(2))
	}
	c := lastChat(t, home)
	msgs := c["messages"].([]any)
	if len(msgs) != 6 {
		t.Fatalf("want 6 stored messages, got %d: %v", len(msgs), msgs)
	}
	first := msgs[1].(map[string]any)
	if first["text"] != "Starting a long answer" || first["incomplete"] != true {
		t.Fatalf("the stopped answer must be kept, marked incomplete: %v", first)
	}
}

// Ctrl-C at an empty prompt leaves the chat with exit 130 and the hint;
// Ctrl-D leaves with 0 and the hint.
func TestChatLeavesOnCtrlCAtThePromptAndCtrlD(t *testing.T) {
	for _, tc := range []struct {
		key  string
		code int
	}{{"\x03", 130}, {"\x04", 0}} {
		home := t.TempDir()
		h := newHolding(t)
		h.n = 1 // no holding answer
		h.replies = []string{textReply("Hi there.")}
		tm := startOnTerminal(t, home, "chat", "--provider", "vllm", "--base-url", h.srv.URL+"/v1/")
		at := tm.waitFor("> ", 0)
		tm.send("hi\r")
		at = tm.waitFor("Hi there.", at)
		at = tm.waitFor("> ", at)
		tm.send(tc.key)
		tm.waitFor("continue with: steward chat --resume", at)
		if code := tm.wait(); code != tc.code {
			t.Errorf("key %q: exit %d, want %d; terminal:\n%s", tc.key, code, tc.code, tm.output())
		}
		if strings.Count(tm.output(), "continue with:") != 1 {
			t.Errorf("key %q: the hint must be printed once:\n%s", tc.key, tm.output())
		}
	}
}

// Issue 17 point 4 in an interactive chat: a model answer's escape
// sequences reach the terminal as visible text (readline's own cursor
// sequences aside).
func TestChatOnATerminalShowsAnswersInert(t *testing.T) {
	home := t.TempDir()
	hostile := "Done.\x1b]52;c;ZXZpbA==\x07\x1b]0;pwned\x07\x1b[2J\u009b31m end"
	h := newHolding(t, textReply(hostile))
	tm := startOnTerminal(t, home, "chat", "--provider", "vllm", "--base-url", h.srv.URL+"/v1/")
	at := tm.waitFor("> ", 0)
	tm.send("first question\r")
	// The holding server's first answer is the long one; stop it.
	at = tm.waitFor("Starting a long answer", at)
	tm.send("\x03")
	at = tm.waitFor("> ", at)
	tm.send("again\r")
	at = tm.waitFor(`\u001b[2J`, at)
	at = tm.waitFor("> ", at)
	tm.send("/exit\r")
	tm.waitFor("continue with", at)
	tm.wait()
	out := tm.output()
	for _, raw := range []string{"\x1b]52;", "\x1b]0;pwned", "\x1b[2J", "\u009b31m"} {
		if strings.Contains(out, raw) {
			t.Errorf("the terminal received %q raw:\n%q", raw, out)
		}
	}
	if !strings.Contains(out, `\u001b]52;c;ZXZpbA==\u0007`) {
		t.Errorf("the clipboard sequence must be shown escaped:\n%q", out)
	}
}
