package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/llmtest"
	"github.com/stewardhq/steward/mailbox"
	"github.com/stewardhq/steward/store/mailindex"
	"github.com/stewardhq/steward/tools/websearch"
)

// reofferAPI scripts one provider API: a first round that calls search_mails,
// a second that answers, and how to read a request's tools and system
// prompt.
type reofferAPI struct {
	name  string
	flags func(base string) ProviderFlags
	path  string
	call  string // the first round's stream
	text  string // the second round's stream
	read  func(t *testing.T, body []byte) (tools []string, system string)
}

func reofferAPIs() []reofferAPI {
	const args = `{"query":"delivery order 4711"}`
	return []reofferAPI{
		{
			name: "chat completions",
			flags: func(base string) ProviderFlags {
				return ProviderFlags{Provider: "openai", BaseURL: base, API: "chat_completions"}
			},
			path: "/v1/chat/completions",
			call: "data: " + fmt.Sprintf(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"search_mails","arguments":%s}}]}}]}`, llmtest.JSONString(args)) + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n",
			text: `data: {"choices":[{"index":0,"delta":{"content":"It ships on 14 December."}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n",
			read: func(t *testing.T, body []byte) ([]string, string) {
				var b struct {
					Tools []struct {
						Function struct{ Name string } `json:"function"`
					} `json:"tools"`
					Messages []struct{ Role, Content string } `json:"messages"`
				}
				if err := json.Unmarshal(body, &b); err != nil {
					t.Fatalf("%v: %s", err, body)
				}
				var names []string
				for _, tl := range b.Tools {
					names = append(names, tl.Function.Name)
				}
				system := ""
				if len(b.Messages) > 0 && b.Messages[0].Role == "system" {
					system = b.Messages[0].Content
				}
				return names, system
			},
		},
		{
			name: "responses",
			flags: func(base string) ProviderFlags {
				return ProviderFlags{Provider: "openai", BaseURL: base, API: "responses"}
			},
			path: "/v1/responses",
			call: llmtest.SSE(`{"type":"response.completed","response":{"id":"resp_1","status":"completed","output":[` +
				`{"type":"function_call","id":"fc_1","call_id":"call_1","name":"search_mails","arguments":` + llmtest.JSONString(args) + `,"status":"completed"}` +
				`],"usage":{"input_tokens":10,"output_tokens":4}}}`),
			text: llmtest.SSE(`{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"It ships on 14 December."}`,
				`{"type":"response.completed","response":{"id":"resp_2","status":"completed","output":[`+
					`{"type":"message","id":"msg_2","role":"assistant","status":"completed","content":[{"type":"output_text","text":"It ships on 14 December.","annotations":[]}]}`+
					`],"usage":{"input_tokens":30,"output_tokens":3}}}`),
			read: func(t *testing.T, body []byte) ([]string, string) {
				var b struct {
					Tools []struct{ Name string } `json:"tools"`
					Input []struct {
						Role    string          `json:"role"`
						Content json.RawMessage `json:"content"`
					} `json:"input"`
				}
				if err := json.Unmarshal(body, &b); err != nil {
					t.Fatalf("%v: %s", err, body)
				}
				var names []string
				for _, tl := range b.Tools {
					names = append(names, tl.Name)
				}
				system := ""
				if len(b.Input) > 0 && (b.Input[0].Role == "system" || b.Input[0].Role == "developer") {
					system = llmtest.ContentText(b.Input[0].Content)
				}
				return names, system
			},
		},
		{
			name:  "anthropic messages",
			flags: func(base string) ProviderFlags { return ProviderFlags{Provider: "anthropic", BaseURL: base} },
			path:  "/v1/messages",
			call: llmtest.SSE(`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"usage":{"input_tokens":25,"output_tokens":1}}}`,
				`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"search_mails","input":{}}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":`+llmtest.JSONString(args)+`}}`,
				`{"type":"content_block_stop","index":0}`,
				`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":30}}`,
				`{"type":"message_stop"}`),
			text: llmtest.SSE(`{"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"usage":{"input_tokens":25,"output_tokens":1}}}`,
				`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"It ships on 14 December."}}`,
				`{"type":"content_block_stop","index":0}`,
				`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}`,
				`{"type":"message_stop"}`),
			read: func(t *testing.T, body []byte) ([]string, string) {
				var b struct {
					Tools  []struct{ Name string } `json:"tools"`
					System string                  `json:"system"`
				}
				if err := json.Unmarshal(body, &b); err != nil {
					t.Fatalf("%v: %s", err, body)
				}
				var names []string
				for _, tl := range b.Tools {
					names = append(names, tl.Name)
				}
				return names, b.System
			},
		},
	}
}

// seedMailbox stores one indexed mail in the mail index at path, as a
// finished sync would.
func seedMailbox(t *testing.T, path, mailboxID string) {
	t.Helper()
	ctx := context.Background()
	x, err := mailindex.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	received := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	if err := x.SaveFolder(ctx, mailindex.Folder{MailboxID: mailboxID, Path: "INBOX", UIDValidity: 1, ServerMessages: 1, LastCompleteSync: received}); err != nil {
		t.Fatal(err)
	}
	raw := "From: Supplier <sales@supplier.example>\r\nTo: me@example.org\r\nSubject: Delivery date for order 4711\r\n" +
		"Date: Mon, 30 Nov 2026 09:00:00 +0000\r\nMessage-ID: <d1@supplier.example>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" +
		"Hello, your order 4711 ships on 14 December.\r\n"
	p, err := mailbox.ParseMail([]byte(raw), received, mailbox.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.AddBatch(ctx, mailboxID, "INBOX", []mailindex.Incoming{{UID: 1, Mail: p.Mail, Chunks: p.Chunks}}); err != nil {
		t.Fatal(err)
	}
}

// TestToolsOfferedAgainAfterMailTightensTheChat: once search_mails brought
// mail from a mailbox that restricts the chat into the answer, the next
// round of the same answer offers only what may still run, with only their
// instructions, on every wire API (issue 15, point 1). web_search sends
// queries to a third party and never runs below UNRESTRICTED; read_web_page
// offers nothing at ONLY_CONFIGURED_SERVICES without a wiki, and words what
// is left at ONLY_LINKS_FROM_CHAT. The organization's minimum tightens a
// mailbox whose own level is less strict.
func TestToolsOfferedAgainAfterMailTightensTheChat(t *testing.T) {
	levels := []struct {
		name, mailbox, org string
		wantRound2         []string
		// instruction that must stand in the second system prompt
		wantText string
	}{
		{"only configured services", "ONLY_CONFIGURED_SERVICES", "", []string{"count_mails", "read_mail", "search_mails"}, ""},
		{"only links from the chat", "ONLY_LINKS_FROM_CHAT", "", []string{"count_mails", "read_mail", "read_web_page", "search_mails"},
			`This chat read mails from the mailbox "Office", so read_web_page can now read only addresses given in the conversation.`},
		{"tightened by the organization", "UNRESTRICTED", "ONLY_CONFIGURED_SERVICES", []string{"count_mails", "read_mail", "search_mails"}, ""},
	}
	// One mail index for every case (SQLite is slow under the race
	// detector); each level writes its configuration and opens the App
	// once for the three wire APIs.
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	os.MkdirAll(data, 0o700)
	seedMailbox(t, filepath.Join(data, "mail.db"), "office")
	for li, lv := range levels {
		t.Run(lv.name, func(t *testing.T) {
			cfg := filepath.Join(dir, fmt.Sprint("config", li))
			os.MkdirAll(cfg, 0o700)
			settings := fmt.Sprintf(`{"version":2,"enabled_preview_features":["PRE_RAG_2024","PRE_MAILBOXES_2026"],
"mailboxes":[{"id":"office","name":"Office","host":"imap.example.org","port":993,"security":"tls","auth":"password","username":"u",
"required_provider_confidence":"LOW","outbound_data_restriction":%q}],
"tools":{"web_search":{"searxng.baseUrl":"http://127.0.0.1:9/","defaultLanguage":"en"}}}`, lv.mailbox)
			if err := os.WriteFile(filepath.Join(cfg, "settings.json"), []byte(settings), 0o600); err != nil {
				t.Fatal(err)
			}
			if lv.org != "" {
				pdir := filepath.Join(cfg, "plugins", "org", "mail")
				os.MkdirAll(pdir, 0o755)
				plugin := `ID = "mail"
NAME = "Mail rules"
VERSION = "1"
TYPE = "CONFIGURATION"
CONFIG = {}
CONFIG["SETTINGS"] = {}
CONFIG["SETTINGS"]["DataMailboxes.MinimumOutboundDataRestriction"] = "` + lv.org + `"
`
				if err := os.WriteFile(filepath.Join(pdir, "plugin.lua"), []byte(plugin), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test", "STEWARD_NO_OLLAMA_PROBE": "1"}
			a, err := Open(context.Background(), Options{ConfigDir: cfg, DataDir: data, Getenv: func(k string) string { return env[k] }})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			if len(a.Org.Problems) > 0 {
				t.Fatalf("plugin problems: %v", a.Org.Problems)
			}
			for _, api := range reofferAPIs() {
				t.Run(api.name, func(t *testing.T) {
					srv := llmtest.NewReplayServer(t, []llmtest.Exchange{{Status: 200, Body: []byte(api.call)}, {Status: 200, Body: []byte(api.text)}})
					p, err := a.ResolveProvider(context.Background(), api.flags(srv.URL+"/v1/"))
					if err != nil {
						t.Fatal(err)
					}
					th := NewThread()
					res, err := a.Answer(context.Background(), th, p, Turn{Text: "When does order 4711 ship?", Selected: []string{"mailboxes", "web_search", "read_web_page"}}, nil)
					if err != nil {
						t.Fatal(err)
					}
					if len(res.Traces) != 1 || res.Traces[0].Status != "SUCCESS" {
						t.Fatalf("traces %+v", res.Traces)
					}
					if srv.Path(0) != api.path {
						t.Fatalf("the adapter posted to %s", srv.Path(0))
					}
					first, system1 := api.read(t, srv.Body(0))
					second, system2 := api.read(t, srv.Body(1))
					slices.Sort(first)
					slices.Sort(second)
					if !slices.Equal(first, []string{"count_mails", "read_mail", "read_web_page", "search_mails", "web_search"}) {
						t.Fatalf("round 1 offered %v", first)
					}
					if !strings.Contains(system1, websearch.Instructions) || !strings.Contains(system1, "read_web_page: Read only web addresses") {
						t.Fatalf("round 1 lacks the instructions of web_search and read_web_page:\n%s", system1)
					}
					if !slices.Equal(second, lv.wantRound2) {
						t.Errorf("round 2 offered %v, want %v", second, lv.wantRound2)
					}
					if strings.Contains(system2, websearch.Instructions) {
						t.Errorf("round 2 still carries web_search's instructions:\n%s", system2)
					}
					if !slices.Contains(lv.wantRound2, "read_web_page") && strings.Contains(system2, "read_web_page:") {
						t.Errorf("round 2 still carries read_web_page's instructions:\n%s", system2)
					}
					if lv.wantText != "" && !strings.Contains(system2, lv.wantText) {
						t.Errorf("round 2's instructions do not say what is left (%q):\n%s", lv.wantText, system2)
					}
					if !strings.Contains(system2, "Mail tools read a local index") {
						t.Errorf("round 2 lost the mail tools' instructions:\n%s", system2)
					}
				})
			}
		})
	}
}
