package chat_test

import (
	"encoding/json"
	"fmt"

	"github.com/stewardhq/steward/chat"
	"github.com/stewardhq/steward/policy"
)

// ExampleThread_IsWebAddressGiven shows what counts as given to the model:
// the last system prompt, user messages and tool results, but not the
// model's own words, and not an address a tool only echoed from its
// arguments.
func ExampleThread_IsWebAddressGiven() {
	var th chat.Thread
	th.SetLastSystemPrompt("Our handbook: https://handbook.example/start")
	th.AddMessage(chat.Message{Role: chat.RoleUser, Text: "Summarize https://news.example/today, please."})
	th.AddMessage(chat.Message{Role: chat.RoleAssistant, Text: "I could also read https://made-up.example/"})

	// A search result lists a hit and echoes the query.
	args := json.RawMessage(`{"query":"https://invented.example/?secret=1"}`)
	content := `Results for https://invented.example/?secret=1: https://hit.example/a`
	th.AddToolAddresses(chat.ReturnedAddresses(content, args)...)

	for _, u := range []string{
		"HTTPS://HANDBOOK.EXAMPLE:443/start#intro",
		"https://news.example/today",
		"https://hit.example/a",
		"https://made-up.example/",
		"https://invented.example/?secret=1",
	} {
		fmt.Println(th.IsWebAddressGiven(u), u)
	}
	// Output:
	// true HTTPS://HANDBOOK.EXAMPLE:443/start#intro
	// true https://news.example/today
	// true https://hit.example/a
	// false https://made-up.example/
	// false https://invented.example/?secret=1
}

// ExampleThread_RequireOutbound shows that requirements only tighten: a
// looser level later changes nothing, and the mailbox which demanded the
// strictest level stays named.
func ExampleThread_RequireOutbound() {
	var th chat.Thread
	th.RequireOutbound(policy.OutboundRequirement{Set: true, Restriction: policy.OnlyLinksFromChat, MailboxID: "mb-1", MailboxName: "Support"})
	th.RequireOutbound(policy.OutboundRequirement{Set: true, Restriction: policy.Unrestricted, MailboxID: "mb-2", MailboxName: "News"})
	th.RequireConfidence(policy.High)
	th.RequireConfidence(policy.Low)
	r := th.OutboundRequirement()
	fmt.Println(r.Effective(), r.MailboxName, th.RequiredConfidence())
	// Output:
	// ONLY_LINKS_FROM_CHAT Support HIGH
}

// ExampleRequestKey shows when two addresses ask the server for the same.
func ExampleRequestKey() {
	for _, u := range []string{"HTTPS://Bücher.Example/Path?q=1#frag", "http://example.com"} {
		k, _ := chat.RequestKey(u)
		fmt.Println(k)
	}
	// Output:
	// https://xn--bcher-kva.example:443/Path?q=1
	// http://example.com:80/
}
