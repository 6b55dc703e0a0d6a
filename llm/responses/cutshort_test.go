package responses

import (
	"bytes"
	"testing"

	"github.com/stewardhq/steward/internal/llmtest"
	"github.com/stewardhq/steward/llm"
)

// TestCutShortRecordings closes every recorded stream after each of its
// events before response.completed: the round is an error wrapping
// llm.ErrIncomplete when text had been shown, and is asked again (one
// retry notice) when nothing had.
func TestCutShortRecordings(t *testing.T) {
	newAdapter := func(base string, tr *llm.Transport) llm.Adapter {
		p := llm.Provider{Kind: "openai", BaseURL: base, Model: "gpt-4o", Caps: llm.Capabilities{API: llm.Responses, ToolCalling: true}}
		return New(p, llm.Request{Model: "gpt-4o", Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}, tr)
	}
	var errs, retried int
	for _, stream := range recordedStreams(t) {
		if bytes.Contains(stream, []byte(`"type":"error"`)) || bytes.Contains(stream, []byte(`"type":"response.failed"`)) {
			continue // the whole stream is an error too
		}
		for _, n := range llmtest.FewCuts(llmtest.CutsBefore(stream, `"type":"response.completed"`, `"type":"response.incomplete"`)) {
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
