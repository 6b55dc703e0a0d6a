package capped

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReaderFailsPastItsLimit(t *testing.T) {
	tooLarge := errors.New("too large")
	b, err := io.ReadAll(&Reader{R: strings.NewReader("0123456789"), N: 4, Err: tooLarge})
	if string(b) != "0123" || !errors.Is(err, tooLarge) {
		t.Fatalf("%q %v", b, err)
	}
	b, err = io.ReadAll(&Reader{R: strings.NewReader("0123"), N: 10, Err: tooLarge})
	if string(b) != "0123" || err != nil {
		t.Fatalf("a stream within the limit: %q %v", b, err)
	}
}
