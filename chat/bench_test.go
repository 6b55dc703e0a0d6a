package chat

import (
	"fmt"
	"strings"
	"testing"
)

// benchThread is a chat of 40 messages of about 2,000 characters with a few
// links each, one with a 50,000-character document, and a system prompt.
func benchThread() *Thread {
	th := &Thread{}
	th.SetLastSystemPrompt("You help. " + strings.Repeat("Policy text without links. ", 100) + "See https://intranet.example/policy.")
	filler := strings.Repeat("Some words about the matter at hand, nothing more. ", 40)
	for i := 0; i < 40; i++ {
		role := RoleUser
		if i%2 == 1 {
			role = RoleAssistant
		}
		m := Message{Role: role, Text: fmt.Sprintf("%s (see https://site%d.example/page?id=%d) %s", filler, i, i, filler)}
		if i == 10 {
			m.Documents = []Document{{Name: "report.txt", Text: strings.Repeat("Report line with https://doc.example/ref and more. ", 1000)}}
		}
		th.AddMessage(m)
	}
	th.AddToolAddresses("https://tool.example/hit")
	return th
}

func BenchmarkIsWebAddressGiven(b *testing.B) {
	th := benchThread()
	b.ReportAllocs()
	for b.Loop() {
		// Given nowhere: every text is searched.
		if th.IsWebAddressGiven("https://unknown.example/x") {
			b.Fatal("unknown address given")
		}
	}
}

func BenchmarkFindWebAddresses(b *testing.B) {
	text := strings.Repeat("Read https://example.com/a/b?c=1&amp;d=2 (or [this](https://x.example/y)). ", 100)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		FindWebAddresses(text)
	}
}

// BenchmarkReturnedAddresses: a 100,000-character search result with 200
// links, and arguments holding a query with an address, as web_search
// returns them.
func BenchmarkReturnedAddresses(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 100_000; i++ {
		fmt.Fprintf(&sb, "Result %d: https://site%d.example/article/%d?ref=search%%20page %s\n", i, i%200, i, strings.Repeat("text ", 80))
	}
	content := sb.String()
	args := []byte(`{"query":"compare https://site7.example/article/7 with the news","page":1}`)
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	for b.Loop() {
		ReturnedAddresses(content, args)
	}
}
