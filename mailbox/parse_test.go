package mailbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stewardhq/steward/store/mailindex"
)

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "mails", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseMail(t *testing.T) {
	tests := []struct {
		file        string
		subject     string
		from        string
		encryption  string
		importance  string
		bodyHas     []string
		bodyHasNot  []string
		attachments []mailindex.Attachment // Number, Name, Type, State
		inReplyTo   string
	}{
		{file: "alternative.eml", subject: "Liefertermin für Auftrag 4711", from: "sales@supplier.example", importance: "high",
			bodyHas: []string{"delivery date for order 4711", "Grüße"}, bodyHasNot: []string{"<b>"}},
		{file: "html-only.eml", subject: "Spring sale", from: "news@shop.example", importance: "normal",
			bodyHas: []string{"Garden chairs & tables are 30 % off.", "- Chairs"}, bodyHasNot: []string{"scripttext", "ignored title", "color:red"}},
		{file: "attachments.eml", subject: "Contract draft with attachments", from: "legal@example.org", importance: "normal",
			bodyHas: []string{"review the attached contract notes"},
			attachments: []mailindex.Attachment{
				{Number: 1, Name: "notes.txt", Type: "text/plain", State: mailindex.AttachmentExtracted, Text: "Clause 7: penalty of 2 % per week of delay.\n"},
				{Number: 2, Name: "contract.pdf", Type: "application/pdf", State: mailindex.AttachmentUnsupportedType},
				{Number: 3, Name: "Preisliste März.csv", Type: "text/csv", State: mailindex.AttachmentExtracted, Text: "item;price\r\nchair;49"},
			}},
		{file: "latin1.eml", subject: "Verzögerung der Lieferung", from: "juergen@lieferant.example", importance: "normal",
			bodyHas: []string{"Stühle verzögert", "Grüßen"}},
		{file: "sjis.eml", subject: "会議の議事録", from: "tanaka@example.jp", importance: "normal", bodyHas: []string{"明日の会議の議事録を送ります"}},
		{file: "smime.eml", subject: "Encrypted statement", from: "secure@bank.example", encryption: mailindex.EncryptionSMIME, importance: "normal"},
		{file: "pgpmime.eml", subject: "Encrypted plans", from: "pgp@example.net", encryption: mailindex.EncryptionPGP, importance: "normal"},
		{file: "inline-pgp.eml", subject: "inline secret", from: "old@example.net", encryption: mailindex.EncryptionPGP, importance: "normal"},
		{file: "irm.eml", subject: "Protected: quarterly forecast", from: "finance@corp.example", encryption: mailindex.EncryptionIRM, importance: "normal",
			bodyHasNot: []string{"Rights Management", "protected content"}},
		{file: "signed.eml", subject: "Signed minutes", from: "signer@example.org", importance: "normal", bodyHas: []string{"budget meeting are approved"},
			attachments: []mailindex.Attachment{{Number: 1, Name: "smime.p7s", Type: "application/pkcs7-signature", State: mailindex.AttachmentUnsupportedType}}},
		{file: "thread-2.eml", subject: "Re: Budget 2027", from: "me@example.org", importance: "normal", bodyHas: []string{"budget figures follow"}, inReplyTo: "thread-1@example.org"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			raw := readFixture(t, tc.file)
			recv := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
			p, err := ParseMail(raw, recv, ParseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			m := p.Mail
			if m.Subject != tc.subject {
				t.Errorf("subject %q, want %q", m.Subject, tc.subject)
			}
			if len(m.Addresses.From) != 1 || m.Addresses.From[0].Addr != tc.from {
				t.Errorf("from %+v, want %s", m.Addresses.From, tc.from)
			}
			if m.Encryption != tc.encryption {
				t.Errorf("encryption %q, want %q", m.Encryption, tc.encryption)
			}
			if m.Importance != tc.importance {
				t.Errorf("importance %q, want %q", m.Importance, tc.importance)
			}
			if !m.Received.Equal(recv) || m.Sent.IsZero() {
				t.Errorf("received %v sent %v", m.Received, m.Sent)
			}
			if m.InReplyTo != tc.inReplyTo {
				t.Errorf("in-reply-to %q, want %q", m.InReplyTo, tc.inReplyTo)
			}
			if m.ContentKey != ContentKey(raw) || m.Headers == "" || !strings.Contains(strings.ToLower(m.Headers), "message-id: <") {
				t.Errorf("key or header block missing: %q", m.Headers)
			}
			for _, s := range tc.bodyHas {
				if !strings.Contains(m.Body, s) {
					t.Errorf("body lacks %q:\n%s", s, m.Body)
				}
			}
			for _, s := range tc.bodyHasNot {
				if strings.Contains(m.Body, s) {
					t.Errorf("body has %q:\n%s", s, m.Body)
				}
			}
			if tc.encryption != "" {
				if m.Body != "" || len(m.Attachments) != 0 {
					t.Errorf("encrypted mail kept content: body %q, %d attachments", m.Body, len(m.Attachments))
				}
				for _, c := range p.Chunks {
					if strings.Contains(c, "secret") && !strings.Contains(c, "Subject: inline secret") {
						t.Errorf("encrypted payload reached a chunk: %q", c)
					}
				}
			}
			if len(m.Attachments) != len(tc.attachments) {
				t.Fatalf("attachments %+v, want %d", m.Attachments, len(tc.attachments))
			}
			for i, want := range tc.attachments {
				got := m.Attachments[i]
				if got.Number != want.Number || got.Name != want.Name || got.Type != want.Type || got.State != want.State ||
					(want.Text != "" && got.Text != want.Text) || got.Size <= 0 {
					t.Errorf("attachment %d: %+v, want %+v", i+1, got, want)
				}
			}
			if m.HasAttachments != (len(tc.attachments) > 0) {
				t.Errorf("has attachments %v", m.HasAttachments)
			}
			if len(p.Chunks) == 0 || !strings.Contains(p.Chunks[0], tc.subject) {
				t.Errorf("chunks %q lack the subject", p.Chunks)
			}
		})
	}
}

func TestParseNoAttachmentText(t *testing.T) {
	p, err := ParseMail(readFixture(t, "attachments.eml"), time.Time{}, ParseOptions{NoAttachmentText: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range p.Mail.Attachments {
		if a.State != mailindex.AttachmentDisabled || a.Text != "" {
			t.Errorf("%+v", a)
		}
	}
	if p.Mail.Received.IsZero() || !p.Mail.Received.Equal(p.Mail.Sent) {
		t.Errorf("received falls back to the Date header: %v / %v", p.Mail.Received, p.Mail.Sent)
	}
}

func TestChunk(t *testing.T) {
	long := strings.Repeat("word ", 1000)
	tests := []struct {
		name string
		text string
		size int
		n    int
	}{
		{"empty", "  ", 10, 0},
		{"short", "hello", 10, 1},
		{"words", long, 1500, 4},
		{"no spaces", strings.Repeat("ü", 3100), 1500, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := Chunk(tc.text, tc.size)
			if len(cs) != tc.n {
				t.Fatalf("%d chunks, want %d", len(cs), tc.n)
			}
			total := 0
			for _, c := range cs {
				if utf8.RuneCountInString(c) > tc.size {
					t.Errorf("chunk of %d runes", utf8.RuneCountInString(c))
				}
				total += utf8.RuneCountInString(strings.ReplaceAll(c, " ", ""))
			}
			if want := utf8.RuneCountInString(strings.ReplaceAll(tc.text, " ", "")); total != want {
				t.Errorf("lost text: %d of %d runes", total, want)
			}
		})
	}
}

func TestHTMLToText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"<p>a</p><p>b</p>", "a\nb"},
		{"x<br>y", "x\ny"},
		{"<script>evil()</script>ok", "ok"},
		{"a &lt;b&gt; &amp; c", "a <b> & c"},
		{"<table><tr><td>1</td><td>2</td></tr></table>", "1 2"},
		{"<p>unclosed", "unclosed"},
	}
	for _, tc := range tests {
		if got := HTMLToText(tc.in); got != tc.want {
			t.Errorf("HTMLToText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzParseMail(f *testing.F) {
	for _, n := range []string{"alternative.eml", "attachments.eml", "sjis.eml", "pgpmime.eml"} {
		f.Add(readFixture(f, n))
	}
	f.Add([]byte("Subject: x\r\n\r\n"))
	f.Add([]byte("Content-Type: multipart/mixed; boundary=\"\"\r\n\r\n--\r\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := ParseMail(raw, time.Time{}, ParseOptions{})
		if err != nil {
			return
		}
		if !utf8.ValidString(p.Mail.Body) {
			t.Errorf("body is not UTF-8")
		}
		for _, c := range p.Chunks {
			if utf8.RuneCountInString(c) > ChunkSize {
				t.Errorf("chunk too long")
			}
		}
	})
}
