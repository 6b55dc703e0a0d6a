package mailindex

import (
	"context"
	"github.com/stewardhq/steward/store/searchindex"
	"slices"
	"strings"
	"testing"
	"time"
)

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
	if err := x.db.QueryRow(`SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'`).Scan(&def); err != nil || !strings.Contains(def, searchindex.TokenizerName) {
		t.Fatalf("chunks_fts is %q (%v), want the %s tokenizer", def, err, searchindex.TokenizerName)
	}
}
