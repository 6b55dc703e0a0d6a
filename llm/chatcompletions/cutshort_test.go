package chatcompletions

import (
	"bytes"
	"testing"

	"github.com/stewardhq/steward/internal/llmtest"
	"github.com/stewardhq/steward/llm"
)

// TestCutShortRecordings closes every recorded stream after each of its
// events before the first finish_reason and [DONE]: the round is an error
// wrapping llm.ErrIncomplete when text had been shown, and is asked again
// (one retry notice) when nothing had.
func TestCutShortRecordings(t *testing.T) {
	newAdapter := func(base string, tr *llm.Transport) llm.Adapter {
		p := llm.KindOpenAI.Provider("gpt-4o", base, "k")
		return New(p, llm.Request{Model: "gpt-4o", Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}, tr)
	}
	var errs, retried int
	for _, rec := range loadRecordings(t) {
		for _, in := range rec.Interactions {
			if !bytes.HasPrefix(bytes.TrimSpace(in.Body), []byte("data:")) && !bytes.HasPrefix(bytes.TrimSpace(in.Body), []byte("event:")) {
				continue // a whole JSON answer
			}
			if bytes.Contains(in.Body, []byte("event: error")) {
				continue // the whole stream is an error too
			}
			for _, n := range llmtest.FewCuts(llmtest.CutsBefore(in.Body, `"finish_reason":"`, "[DONE]")) {
				t.Run(rec.Path, func(t *testing.T) {
					if llmtest.CheckCutShort(t, in.Body, n, newAdapter) {
						retried++
					} else {
						errs++
					}
				})
			}
		}
	}
	if errs == 0 || retried == 0 {
		t.Fatalf("cut-short streams: %d errors after text, %d retried; want both kinds", errs, retried)
	}
	t.Logf("cut-short streams: %d ended in an error after text was shown, %d were asked again", errs, retried)
}
