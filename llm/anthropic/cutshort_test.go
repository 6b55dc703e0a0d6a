package anthropic

import (
	"bytes"
	"testing"

	"github.com/stewardhq/steward/internal/llmtest"
	"github.com/stewardhq/steward/llm"
)

// TestCutShortRecordings closes every recorded stream after each of its
// events before message_stop: the round is an error wrapping
// llm.ErrIncomplete when text had been shown, and is asked again (one
// retry notice) when nothing had.
func TestCutShortRecordings(t *testing.T) {
	newAdapter := func(base string, tr *llm.Transport) llm.Adapter {
		p := llm.Provider{Kind: "anthropic", BaseURL: base, Model: "claude-sonnet-4-5", Caps: llm.Capabilities{API: llm.Messages, ToolCalling: true}}
		return New(p, llm.Request{Model: "claude-sonnet-4-5", MaxTokens: 1024, Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}, tr)
	}
	var errs, retried int
	for _, stream := range recordedStreams(t) {
		if bytes.Contains(stream, []byte(`"type":"error"`)) {
			continue // the whole stream is an error too
		}
		for _, n := range llmtest.FewCuts(llmtest.CutsBefore(stream, `"type":"message_stop"`)) {
			t.Run("", func(t *testing.T) {
				if llmtest.CheckCutShort(t, stream, n, newAdapter) {
					retried++
				} else {
					errs++
				}
			})
		}
	}
	if errs == 0 || retried == 0 {
		t.Fatalf("cut-short streams: %d errors after text, %d retried; want both kinds", errs, retried)
	}
	t.Logf("cut-short streams: %d ended in an error after text was shown, %d were asked again", errs, retried)
}
