package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHTMLEncodingOrder checks each step of htmlEncoding's order on bytes
// alone.
func TestHTMLEncodingOrder(t *testing.T) {
	pad := "<!-- " + strings.Repeat("padding ", 200) + "-->"
	utf8Body := "<p>Caf\u00e9 \u2014 it\u2019s here</p>"
	cases := []struct {
		name, contentType, body, want string
	}{
		{"header wins over meta", "text/html; charset=ISO-8859-2", `<meta charset="utf-8">` + utf8Body, "header:iso-8859-2"},
		{"unknown header label falls through", "text/html; charset=no-such-thing", `<meta charset="windows-1251">`, "meta:windows-1251"},
		{"utf-8 bom", "text/html", "\xef\xbb\xbf<meta charset=windows-1252>" + utf8Body, "bom:utf-8"},
		{"utf-16le bom", "", "\xff\xfe<\x00p\x00>\x00", "bom:utf-16le"},
		{"meta in the first 1024 bytes", "text/html", `<head><meta charset="shift_jis"></head>`, "meta:shift_jis"},
		{"meta past 1024 bytes", "text/html", "<head><title>t</title>" + pad + `<meta charset="windows-1252"></head>` + utf8Body, "meta:windows-1252"},
		{"http-equiv past 1024 bytes", "", "<head>" + pad + `<meta http-equiv="Content-Type" content="text/html; charset='euc-jp'">`, "meta:euc-jp"},
		{"meta after the head is not read", "", "<head></head><body>" + pad + `<meta charset="windows-1251">` + utf8Body, "sniff:utf-8"},
		{"meta utf-16 means utf-8", "", `<meta charset="utf-16">`, "meta:utf-8"},
		{"no declaration, valid utf-8", "text/html", "<head>" + pad + "</head>" + utf8Body, "sniff:utf-8"},
		{"no declaration, utf-8 cut at the end", "", utf8Body + "\xe2\x80", "sniff:utf-8"},
		{"no declaration, legacy bytes", "", "<p>Cr\xe8me br\xfbl\xe9e \x96 a dessert</p>", "default:windows-1252"},
		{"no declaration, ascii", "", "<p>plain</p>", "sniff:utf-8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, got := htmlEncoding([]byte(c.body), c.contentType); got != c.want {
				t.Errorf("htmlEncoding = %q, want %q", got, c.want)
			}
		})
	}
}

// TestLooksUTF8Tolerance accepts a UTF-8 page with one stray legacy byte
// among many multi-byte characters, and refuses legacy text.
func TestLooksUTF8Tolerance(t *testing.T) {
	if !looksUTF8([]byte(strings.Repeat("caf\u00e9 ", 40) + "\x92")) {
		t.Error("40 multi-byte characters and one stray byte: want UTF-8")
	}
	if looksUTF8([]byte("caf\u00e9 " + strings.Repeat("caf\xe9 ", 3))) {
		t.Error("one multi-byte character and three legacy bytes: want not UTF-8")
	}
}

// TestRetrieveCharsets serves each case from a loopback server and checks
// the text that comes out.
func TestRetrieveCharsets(t *testing.T) {
	article := func(head, text string) string {
		return "<!DOCTYPE html><html><head>" + head + "<title>Charset test</title></head><body><article><h1>Charset test</h1><p>" +
			strings.Repeat(text+" ", 12) + "</p></article></body></html>"
	}
	// Over 1,024 bytes of scripts and styles before the meta tag, as on
	// many real pages.
	bulky := "<script>" + strings.Repeat("var x = 1; ", 150) + "</script><style>" + strings.Repeat("p{margin:0}", 60) + "</style>"
	utf8Text := "The year\u2019s best \u2014 \u201cquoted\u201d caf\u00e9s in Z\u00fcrich."
	cp1252Text := "The year\x92s best \x97 \x93quoted\x94 caf\xe9s in Z\xfcrich."
	cases := []struct {
		name, contentType, body, want string
	}{
		{"utf-8 without any declaration", "text/html", article("", utf8Text), utf8Text},
		{"utf-8 with meta past 1024 bytes", "text/html", article(bulky+`<meta charset="utf-8">`, utf8Text), utf8Text},
		{"utf-8 without content type", "", article(bulky, utf8Text), utf8Text},
		{"utf-8 with bom, no declaration", "text/html", "\xef\xbb\xbf" + article(bulky, utf8Text), utf8Text},
		{"windows-1252 in meta past 1024 bytes", "text/html", article(bulky+`<meta http-equiv="content-type" content="text/html; charset=windows-1252">`, cp1252Text), utf8Text},
		{"windows-1252 without declaration", "text/html", article(bulky, cp1252Text), utf8Text},
		{"header charset wins over meta", "text/html; charset=utf-8", article(`<meta charset="iso-8859-1">`, utf8Text), utf8Text},
		{"header charset windows-1252 wins over utf-8 sniffing", "text/html; charset=windows-1252", article("", cp1252Text), utf8Text},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if c.contentType == "" {
					w.Header()["Content-Type"] = nil
				} else {
					w.Header().Set("Content-Type", c.contentType)
				}
				w.Write([]byte(c.body))
			}))
			defer srv.Close()
			page, err := NewService(ServiceOptions{}).Retrieve(context.Background(), srv.URL+"/a", Options{Policy: UserChosen})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(page.Markdown, c.want) {
				t.Errorf("Markdown lacks %q:\n%s", c.want, page.Markdown)
			}
			for _, bad := range []string{"\u00e2\u20ac", "\u00c3", "\uFFFD"} {
				if strings.Contains(page.Markdown, bad) {
					t.Errorf("Markdown holds mojibake %q:\n%s", bad, page.Markdown)
				}
			}
		})
	}
}

// TestRetrieveShiftJISMetaLate moves the real Shift_JIS page's meta tag past
// the first 1,024 bytes: it must still decode as Shift_JIS, and not be
// sniffed as UTF-8 or read as Windows-1252.
func TestRetrieveShiftJISMetaLate(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "pages", "real-sjis-dtiserv.html"))
	if err != nil {
		t.Fatal(err)
	}
	meta := []byte(`<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">`)
	i := strings.Index(string(raw), string(meta))
	if i < 0 {
		t.Fatal("fixture lost its meta tag")
	}
	moved := append([]byte{}, raw[:i]...)
	moved = append(moved, []byte("<style>"+strings.Repeat("/* padding */ ", 100)+"</style>")...)
	moved = append(moved, raw[i:]...)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write(moved)
	}))
	defer srv.Close()
	page, err := NewService(ServiceOptions{}).Retrieve(context.Background(), srv.URL+"/", Options{Policy: UserChosen})
	if err != nil {
		t.Fatal(err)
	}
	if want := "当社のテクニカルは、常時24時間体制で対応しておりますので"; !strings.Contains(page.Markdown, want) {
		t.Errorf("Markdown lacks %q:\n%s", want, page.Markdown)
	}
}

// TestDecodeHTML is the exported decoding: the same choice as Retrieve.
func TestDecodeHTML(t *testing.T) {
	if got := DecodeHTML([]byte("<p>Caf\xe9 \x96 bar</p>"), "text/html"); got != "<p>Café – bar</p>" {
		t.Errorf("legacy bytes: %q", got)
	}
	if got := DecodeHTML([]byte("<p>Caf\u00e9 \u2014 bar</p>"), ""); got != "<p>Café — bar</p>" {
		t.Errorf("UTF-8 bytes: %q", got)
	}
}
