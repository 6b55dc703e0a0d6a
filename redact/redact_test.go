package redact

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/quick"
)

func TestStringAndError(t *testing.T) {
	var s Set
	s.Add("sk-live-abcdef123456")
	s.Add("pw")          // too short: ordinary text is left alone
	s.Add(`pa"ss\word1`) // also caught in its JSON form
	got := s.String(`HTTP 401: Incorrect API key provided: sk-live-abcdef123456. {"key":"pa\"ss\\word1"} pw`)
	want := `HTTP 401: Incorrect API key provided: [REDACTED]. {"key":"[REDACTED]"} pw`
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	base := errors.New("inner")
	err := s.Error(fmt.Errorf("provider answered: key sk-live-abcdef123456 is wrong: %w", base))
	if strings.Contains(err.Error(), "abcdef") || !errors.Is(err, base) {
		t.Fatalf("error %q keeps the secret or loses its chain", err)
	}
	var nilSet *Set
	if nilSet.String("sk-live-abcdef123456") != "sk-live-abcdef123456" || nilSet.Error(nil) != nil {
		t.Fatal("a nil set must change nothing")
	}
}

// A secret split over any two writes never reaches the writer's output.
func TestWriterCatchesSplitSecrets(t *testing.T) {
	secret := "tok-0123456789abcdef"
	var s Set
	s.Add(secret)
	text := "before " + secret + " middle " + secret + secret + " after"
	for cut1 := 0; cut1 <= len(text); cut1++ {
		for _, cut2 := range []int{cut1, (cut1 + len(text)) / 2, len(text)} {
			var out strings.Builder
			w := NewWriter(&s, &out)
			io.WriteString(w, text[:cut1])
			io.WriteString(w, text[cut1:cut2])
			io.WriteString(w, text[cut2:])
			w.Flush()
			if strings.Contains(out.String(), "0123456789") {
				t.Fatalf("cuts %d, %d: the secret got through: %q", cut1, cut2, out.String())
			}
			if want := strings.ReplaceAll(text, secret, Mask); out.String() != want {
				t.Fatalf("cuts %d, %d: %q, want %q", cut1, cut2, out.String(), want)
			}
		}
	}
}

// Text without secrets passes unchanged, however it is split.
func TestWriterPassesOtherText(t *testing.T) {
	var s Set
	s.Add("tok-0123456789abcdef")
	f := func(a, b string) bool {
		var out strings.Builder
		w := NewWriter(&s, &out)
		io.WriteString(w, a)
		io.WriteString(w, b)
		w.Flush()
		return out.String() == s.String(a+b)
	}
	if err := quick.Check(f, nil); err != nil {
		t.Fatal(err)
	}
}
