package mailindex

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func tokens(text string, query bool) []string {
	var out []string
	_ = tokenize(text, query, func(tok string, start, end int, colocated bool) error {
		mark := ""
		if colocated {
			mark = "+"
		}
		out = append(out, mark+tok+fmt.Sprintf("@%d", start))
		return nil
	})
	return out
}

func TestTokenize(t *testing.T) {
	for _, tc := range []struct {
		text  string
		query bool
		want  []string
	}{
		{"Crème BRÛLÉE, naïve-café 42", false, []string{"creme@0", "brulee@7", "naive@17", "cafe@24", "42@30"}},
		{"東京都に", false, []string{"東@0", "+東京@0", "京@3", "+京都@3", "都@6", "+都に@6", "に@9"}},
		{"東京都に", true, []string{"東京@0", "京都@3", "都に@6"}},
		{"会", true, []string{"会@0"}},
		{"会", false, []string{"会@0"}},
		{"Tokyo東京2026", false, []string{"tokyo@0", "東@5", "+東京@5", "京@8", "2026@11"}},
		{"서울에서 회의", true, []string{"서울@0", "울에@3", "에서@6", "회의@13"}},
		{"コーヒー", true, []string{"コー@0", "ーヒ@3", "ヒー@6"}},
	} {
		if got := tokens(tc.text, tc.query); !slices.Equal(got, tc.want) {
			t.Errorf("tokenize(%q, query=%v) = %q, want %q", tc.text, tc.query, got, tc.want)
		}
	}
}

func TestSearchCJKWords(t *testing.T) {
	x := openTest(t)
	ctx := context.Background()
	if err := x.SaveFolder(ctx, Folder{MailboxID: "mb", Path: "INBOX", ServerMessages: -1, ServerUnseen: -1}); err != nil {
		t.Fatal(err)
	}
	bodies := map[string]string{
		"ja":  "来週の会議は東京都庁で行います。資料を準備してください。",
		"zh":  "我们明天下午三点开会，请准时参加。",
		"ko":  "서울에서 다음 주에 회의가 있습니다.",
		"en":  "The café on the corner serves coffee.",
		"ja2": "大阪の支社からコーヒー豆が届きました。",
	}
	var items []Incoming
	keys := []string{"ja", "zh", "ko", "en", "ja2"}
	for i, k := range keys {
		items = append(items, incoming(uint32(i+1), k, "S", "a", "b", bodies[k], day.Add(time.Duration(i)*time.Hour), Flags{}))
	}
	if err := x.AddBatch(ctx, "mb", "INBOX", items); err != nil {
		t.Fatal(err)
	}
	keyOf := func(mail string) string {
		var k string
		if err := x.db.QueryRow(`SELECT content_key FROM mails WHERE id = ?`, mail).Scan(&k); err != nil {
			t.Fatal(err)
		}
		return k
	}
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"会議", []string{"ja"}},
		{"東京", []string{"ja"}},
		{"都庁", []string{"ja"}},
		{"東京都庁", []string{"ja"}},
		{"京", []string{"ja"}},
		{"开会", []string{"zh"}},
		{"회의", []string{"ko"}},
		{"서울", []string{"ko"}},
		{"コーヒー", []string{"ja2"}},
		{"cafe", []string{"en"}},
		{"京都", []string{"ja"}}, // inside 東京都: pairs find it, as in any bigram index
		{"都庁舎", nil},
		{"名古屋", nil},
	} {
		hits, err := x.SearchWords(ctx, "mb", Filter{}, tc.q, 10)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, keyOf(h.MailID))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("search %q: %v, want %v", tc.q, got, tc.want)
		}
	}
	// The Go scorer agrees with FTS5's bm25 on CJK text too.
	scorerEqualsFTS5(t, x, "会議", "회의", "cafe")
	var def string
	if err := x.db.QueryRow(`SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'`).Scan(&def); err != nil || !strings.Contains(def, tokenizerName) {
		t.Fatalf("chunks_fts is %q (%v), want the %s tokenizer", def, err, tokenizerName)
	}
}
