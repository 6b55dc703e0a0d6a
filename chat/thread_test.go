package chat

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/tool"
)

// "AI Studio persists the highest requirement reached by the chat."
func TestRequireConfidenceOnlyRaises(t *testing.T) {
	tests := []struct {
		name string
		seq  []policy.Confidence
		want policy.Confidence
	}{
		{"nothing demanded", nil, policy.None},
		{"raised", []policy.Confidence{policy.Low, policy.High}, policy.High},
		{"a lower level changes nothing", []policy.Confidence{policy.High, policy.Low, policy.None}, policy.High},
		{"between levels counts as the next higher", []policy.Confidence{policy.Confidence(95)}, policy.Low},
		{"above every level counts as HIGH", []policy.Confidence{policy.Confidence(1000)}, policy.High},
		{"below NONE changes nothing", []policy.Confidence{policy.Medium, policy.Confidence(-5)}, policy.Medium},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var th Thread
			for _, c := range tc.seq {
				th.RequireConfidence(c)
			}
			if got := th.RequiredConfidence(); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// "SELF_HOSTED sticks; else ALLOW_ANY is taken; NOT_SPECIFIED changes
// nothing."
func TestRequireDataSecurity(t *testing.T) {
	tests := []struct {
		name string
		seq  []policy.DataSecurity
		want policy.DataSecurity
	}{
		{"nothing demanded", nil, policy.NotSpecified},
		{"allow any is taken", []policy.DataSecurity{policy.AllowAny}, policy.AllowAny},
		{"not specified changes nothing", []policy.DataSecurity{policy.AllowAny, policy.NotSpecified}, policy.AllowAny},
		{"self hosted sticks", []policy.DataSecurity{policy.SelfHosted, policy.AllowAny, policy.NotSpecified}, policy.SelfHosted},
		{"self hosted after allow any", []policy.DataSecurity{policy.AllowAny, policy.SelfHosted}, policy.SelfHosted},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var th Thread
			for _, d := range tc.seq {
				th.RequireDataSecurity(d)
			}
			if got := th.DataSecurity(); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func req(r policy.Restriction, id string) policy.OutboundRequirement {
	return policy.OutboundRequirement{Set: true, Restriction: r, MailboxID: id, MailboxName: "Mailbox " + id}
}

// "The chat keeps the strictest level reached, together with the mailbox
// which demanded it"; "on a tie the first mailbox stays"; "NONE changes
// nothing".
func TestRequireOutbound(t *testing.T) {
	tests := []struct {
		name string
		seq  []policy.OutboundRequirement
		want policy.OutboundRequirement
	}{
		{"nothing demanded", nil, policy.OutboundRequirement{}},
		{"unset changes nothing", []policy.OutboundRequirement{req(policy.OnlyLinksFromChat, "a"), {}}, req(policy.OnlyLinksFromChat, "a")},
		{"stricter replaces with its mailbox", []policy.OutboundRequirement{req(policy.OnlyLinksFromChat, "a"), req(policy.OnlyConfiguredServices, "b")}, req(policy.OnlyConfiguredServices, "b")},
		{"looser changes nothing", []policy.OutboundRequirement{req(policy.OnlyConfiguredServices, "a"), req(policy.OnlyLinksFromChat, "b"), req(policy.Unrestricted, "c")}, req(policy.OnlyConfiguredServices, "a")},
		{"tie keeps the first mailbox", []policy.OutboundRequirement{req(policy.OnlyLinksFromChat, "a"), req(policy.OnlyLinksFromChat, "b")}, req(policy.OnlyLinksFromChat, "a")},
		{"unreadable counts as strictest", []policy.OutboundRequirement{req(policy.OnlyLinksFromChat, "a"), req(policy.Restriction(9), "b")}, req(policy.OnlyConfiguredServices, "b")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var th Thread
			for _, r := range tc.seq {
				th.RequireOutbound(r)
			}
			if got := th.OutboundRequirement(); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// Given means that the address stands in the system prompt the last request
// was sent with, in a user message or a document attached to it, or in the
// result of a tool. What the model wrote itself never counts.
func TestIsWebAddressGiven(t *testing.T) {
	th := &Thread{SystemPrompt: "Stored prompt https://stored-prompt.example/"}
	th.SetLastSystemPrompt("You help. Docs: https://prompt.example/docs.")
	th.AddMessage(Message{Role: RoleUser, Text: "Please read https://user.example/a?x=1#part"})
	th.AddMessage(Message{Role: RoleUser, Hidden: true, Text: "hidden https://hidden.example/"})
	th.AddMessage(Message{Role: RoleUser, Text: "see attachment", Documents: []Document{{Name: "notes.txt", Text: "link: <https://doc.example/file.pdf>"}}})
	th.AddMessage(Message{Role: RoleAssistant, Text: "I will read https://model.example/made-up"})
	th.AddToolAddresses(ReturnedAddresses("Hit: https://tool.example/hit", json.RawMessage(`{"query":"go"}`))...)
	th.AddToolAddresses("HTTPS://Raw.Example/page#x", "not an address")

	tests := []struct {
		url  string
		want bool
	}{
		{"https://prompt.example/docs", true},
		{"https://user.example/a?x=1", true},
		{"HTTPS://USER.EXAMPLE:443/a?x=1#other", true},
		{"https://user.example/A?x=1", false},
		{"https://user.example/a?x=2", false},
		{"https://user.example/a", false},
		{"https://hidden.example", true},
		{"https://doc.example/file.pdf", true},
		{"https://tool.example/hit", true},
		{"https://raw.example/page", true},
		// The model's own words never count.
		{"https://model.example/made-up", false},
		// Only the system prompt of the last request counts.
		{"https://stored-prompt.example/", false},
		{"http://prompt.example/docs", false},
		{"not a url", false},
		{"ftp://user.example/a?x=1", false},
	}
	for _, tc := range tests {
		if got := th.IsWebAddressGiven(tc.url); got != tc.want {
			t.Errorf("IsWebAddressGiven(%q) = %v, want %v", tc.url, got, tc.want)
		}
	}

	// The next request's system prompt replaces the last one.
	th.SetLastSystemPrompt("no links")
	if th.IsWebAddressGiven("https://prompt.example/docs") {
		t.Error("an address of an earlier system prompt still counts")
	}
}

// An address a tool result only echoes from the call's arguments does not
// become given.
func TestEchoedAddressIsNotGiven(t *testing.T) {
	var th Thread
	args := json.RawMessage(`{"query":"what is at https://invented.example/?leak=secret"}`)
	th.AddToolAddresses(ReturnedAddresses("You asked about https://invented.example/?leak=secret", args)...)
	if th.IsWebAddressGiven("https://invented.example/?leak=secret") {
		t.Error("an echoed address counts as given")
	}
}

// "The tool results are kept for the session only, like the results
// themselves, so after a restart a chat knows fewer addresses, never more."
func TestJSONKeepsRequirementsButNotTheLedger(t *testing.T) {
	created := time.Date(2026, 9, 1, 14, 30, 0, 0, time.UTC)
	th := &Thread{ID: "c1", Title: "Größe & <Maße>", SystemPrompt: "Be brief.", Created: created}
	th.RequireConfidence(policy.Moderate)
	th.RequireDataSecurity(policy.SelfHosted)
	th.RequireOutbound(req(policy.OnlyLinksFromChat, "mb-1"))
	th.SetLastSystemPrompt("prompt https://prompt-only.example/")
	th.AddToolAddresses("https://ledger-only.example/x")
	th.AddMessage(Message{Role: RoleUser, Text: "read https://user.example/", Time: created.Add(time.Minute), Documents: []Document{{Name: "a.txt", Text: "t"}}})
	th.AddMessage(Message{Role: RoleAssistant, Text: "done", Time: created.Add(2 * time.Minute),
		Traces:  []Trace{{Order: 1, ToolID: "read_web_page", ToolName: "read_web_page", CallID: "call_1", Status: "SUCCESS", Executed: true, Arguments: `{"url":"https://user.example/"}`}},
		Sources: []tool.Source{{Title: "User", URL: "https://user.example/"}}})

	data, err := json.Marshal(th)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"ledger-only", "prompt-only"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("stored thread holds session-only %s: %s", secret, data)
		}
	}
	for _, want := range []string{`"required_confidence":"MODERATE"`, `"data_security":"SELF_HOSTED"`, `"restriction":"ONLY_LINKS_FROM_CHAT"`, `"mailbox_id":"mb-1"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("stored thread lacks %s: %s", want, data)
		}
	}

	var back Thread
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.RequiredConfidence() != policy.Moderate || back.DataSecurity() != policy.SelfHosted || back.OutboundRequirement() != req(policy.OnlyLinksFromChat, "mb-1") {
		t.Errorf("requirements changed: %v %v %+v", back.RequiredConfidence(), back.DataSecurity(), back.OutboundRequirement())
	}
	if back.ID != "c1" || back.Title != th.Title || back.SystemPrompt != "Be brief." || !back.Created.Equal(created) || !back.Updated.Equal(created.Add(2*time.Minute)) {
		t.Errorf("fields changed: %+v", back.ID)
	}
	if len(back.Messages) != 2 || back.Messages[1].Traces[0].CallID != "call_1" || back.Messages[1].Sources[0].URL != "https://user.example/" || back.Messages[0].Documents[0].Name != "a.txt" {
		t.Errorf("messages changed: %+v", back.Messages)
	}
	if !back.IsWebAddressGiven("https://user.example/") {
		t.Error("a user message's address is lost")
	}
	if back.IsWebAddressGiven("https://ledger-only.example/x") || back.IsWebAddressGiven("https://prompt-only.example/") {
		t.Error("a restarted chat knows more addresses than it stored")
	}
}

func TestUnmarshalRequirements(t *testing.T) {
	tests := []struct {
		name string
		json string
		conf policy.Confidence
		ds   policy.DataSecurity
		out  policy.OutboundRequirement
	}{
		{"old chat without requirements", `{"id":"x","messages":[]}`, policy.None, policy.NotSpecified, policy.OutboundRequirement{}},
		{"unreadable levels count as strictest", `{"required_confidence":"SUPER","data_security":"?","outbound":{"restriction":"SOMETIMES","mailbox_id":"m"}}`,
			policy.High, policy.SelfHosted, policy.OutboundRequirement{Set: true, Restriction: policy.OnlyConfiguredServices, MailboxID: "m"}},
		{"names are read without case", `{"required_confidence":"very_low","data_security":"allow_any","outbound":{"restriction":"unrestricted"}}`,
			policy.VeryLow, policy.AllowAny, policy.OutboundRequirement{Set: true, Restriction: policy.Unrestricted}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var th Thread
			if err := json.Unmarshal([]byte(tc.json), &th); err != nil {
				t.Fatal(err)
			}
			if th.RequiredConfidence() != tc.conf || th.DataSecurity() != tc.ds || th.OutboundRequirement() != tc.out {
				t.Errorf("got %v %v %+v", th.RequiredConfidence(), th.DataSecurity(), th.OutboundRequirement())
			}
		})
	}
	var th Thread
	if err := json.Unmarshal([]byte(`{"id":`), &th); err == nil {
		t.Error("broken JSON was read")
	}
	// Reading into a thread never loosens it.
	strict := &Thread{}
	strict.RequireConfidence(policy.High)
	strict.RequireOutbound(req(policy.OnlyConfiguredServices, "a"))
	if err := json.Unmarshal([]byte(`{"required_confidence":"LOW","outbound":{"restriction":"UNRESTRICTED"}}`), strict); err != nil {
		t.Fatal(err)
	}
	if strict.RequiredConfidence() != policy.High || strict.OutboundRequirement() != req(policy.OnlyConfiguredServices, "a") {
		t.Errorf("reading loosened the thread: %v %+v", strict.RequiredConfidence(), strict.OutboundRequirement())
	}
}

// rank orders data security by strictness.
func rank(d policy.DataSecurity) int {
	switch d {
	case policy.SelfHosted:
		return 2
	case policy.AllowAny:
		return 1
	}
	return 0
}

// TestRequirementsNeverLoosen: under any sequence of results, no
// requirement ever becomes looser, and the stored form reads back exactly.
func TestRequirementsNeverLoosen(t *testing.T) {
	levels := append(policy.Levels(), policy.Confidence(-3), policy.Confidence(42), policy.Confidence(999))
	rapid.Check(t, func(t *rapid.T) {
		var th Thread
		steps := rapid.IntRange(0, 30).Draw(t, "steps")
		for i := 0; i < steps; i++ {
			prevC, prevD, prevO := th.RequiredConfidence(), th.DataSecurity(), th.OutboundRequirement()
			res := tool.Result{
				RequiredConfidence:   rapid.SampledFrom(levels).Draw(t, "confidence"),
				RequiredDataSecurity: policy.DataSecurity(rapid.IntRange(-1, 3).Draw(t, "security")),
			}
			if rapid.Bool().Draw(t, "outbound set") {
				res.RequiredOutbound = policy.OutboundRequirement{
					Set:         true,
					Restriction: policy.Restriction(rapid.IntRange(-1, 3).Draw(t, "restriction")),
					MailboxID:   rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "mailbox"),
				}
			}
			th.RequireConfidence(res.RequiredConfidence)
			th.RequireDataSecurity(res.RequiredDataSecurity)
			th.RequireOutbound(res.RequiredOutbound)

			c, d, o := th.RequiredConfidence(), th.DataSecurity(), th.OutboundRequirement()
			if c < prevC || !c.Valid() {
				t.Fatalf("confidence went from %v to %v", prevC, c)
			}
			if c < res.RequiredConfidence && res.RequiredConfidence <= policy.High {
				t.Fatalf("confidence %v does not meet the demanded %v", c, res.RequiredConfidence)
			}
			if rank(d) < rank(prevD) {
				t.Fatalf("data security went from %v to %v", prevD, d)
			}
			if o.Effective() > prevO.Effective() || (prevO.Set && !o.Set) {
				t.Fatalf("outbound went from %+v to %+v", prevO, o)
			}
			if prevO.Set && o.Effective() == prevO.Effective() && o.MailboxID != prevO.MailboxID {
				t.Fatalf("a tie replaced mailbox %q with %q", prevO.MailboxID, o.MailboxID)
			}
			if res.RequiredOutbound.Set && o.Effective() > res.RequiredOutbound.Restriction.Normalize() {
				t.Fatalf("outbound %+v is looser than the demanded %+v", o, res.RequiredOutbound)
			}

			data, err := json.Marshal(&th)
			if err != nil {
				t.Fatal(err)
			}
			var back Thread
			if err := json.Unmarshal(data, &back); err != nil {
				t.Fatal(err)
			}
			if back.RequiredConfidence() != c || back.DataSecurity() != d || back.OutboundRequirement() != o {
				t.Fatalf("stored form changed the requirements: %s", data)
			}
		}
	})
}

// TestConcurrentUse exercises the thread from several goroutines; the race
// detector checks the locking.
func TestConcurrentUse(t *testing.T) {
	var th Thread
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				u := fmt.Sprintf("https://g%d.example/%d", g, i)
				th.AddToolAddresses(u)
				th.AddMessage(Message{Role: RoleUser, Text: u})
				th.RequireConfidence(policy.Levels()[i%8])
				th.RequireDataSecurity(policy.DataSecurity(i % 3))
				th.RequireOutbound(req(policy.Restriction(i%3), "m"))
				th.SetLastSystemPrompt(u)
				if !th.IsWebAddressGiven(u) {
					t.Errorf("%s not given", u)
				}
				_ = th.History()
				if _, err := json.Marshal(&th); err != nil {
					t.Error(err)
				}
			}
		}(g)
	}
	wg.Wait()
	if len(th.History()) != 200 || th.RequiredConfidence() != policy.High || th.DataSecurity() != policy.SelfHosted {
		t.Errorf("lost updates: %d messages, %v, %v", len(th.History()), th.RequiredConfidence(), th.DataSecurity())
	}
}
