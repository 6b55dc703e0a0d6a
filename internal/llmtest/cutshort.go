package llmtest

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stewardhq/steward/llm"
)

// CutsBefore returns the offsets just after each event of stream (its
// blank lines) that lie before the first of markers: every place where a
// connection could close after whole events and before the stream's end
// marker. A stream holding none of markers gives none.
func CutsBefore(stream []byte, markers ...string) []int {
	end := -1
	for _, m := range markers {
		if i := bytes.Index(stream, []byte(m)); i >= 0 && (end < 0 || i < end) {
			end = i
		}
	}
	if end < 0 {
		return nil
	}
	// The marker's own event starts after the last blank line before it.
	var cuts []int
	for i := 0; i+1 < end; i++ {
		if stream[i] == '\n' && stream[i+1] == '\n' {
			cuts = append(cuts, i+2)
		}
	}
	return cuts
}

// NewAdapter builds an adapter for a provider at baseURL (ending in "/")
// that sends through tr.
type NewAdapter func(baseURL string, tr *llm.Transport) llm.Adapter

// CheckCutShort replays stream cut after n bytes, then the whole stream,
// and checks what the rule for early ends demands: a round whose stream
// ended before its end marker is an error wrapping llm.ErrIncomplete when
// text had already been shown (and is not asked again); when nothing had
// been shown it is asked once more, with one retry notice, and the round
// then shows exactly what the whole stream shows. It returns whether the
// cut round was retried.
func CheckCutShort(t *testing.T, stream []byte, n int, newAdapter NewAdapter) (retried bool) {
	t.Helper()
	whole := NewReplayServer(t, []Exchange{{Status: 200, ContentType: "text/event-stream", Body: stream}})
	var wantText strings.Builder
	if _, err := newAdapter(whole.URL+"/", LoopbackTransport(t)).Round(context.Background(), llm.RoundOptions{IncludeTools: true}, func(s string) { wantText.WriteString(s) }); err != nil {
		t.Fatalf("the whole stream fails: %v", err)
	}

	srv := NewReplayServer(t, []Exchange{
		{Status: 200, ContentType: "text/event-stream", Body: stream[:n]},
		{Status: 200, ContentType: "text/event-stream", Body: stream},
	})
	tr := LoopbackTransport(t)
	tr.MaxAttempts = 4
	var notices []llm.RetryNotice
	tr.OnRetry = func(n llm.RetryNotice) { notices = append(notices, n) }
	var shown strings.Builder
	_, err := newAdapter(srv.URL+"/", tr).Round(context.Background(), llm.RoundOptions{IncludeTools: true}, func(s string) { shown.WriteString(s) })
	sent := len(srv.Bodies())
	if err != nil {
		if !errors.Is(err, llm.ErrIncomplete) {
			t.Fatalf("cut at %d: err = %v, want one wrapping llm.ErrIncomplete", n, err)
		}
		if shown.Len() == 0 {
			t.Fatalf("cut at %d: nothing was shown, yet the round was not asked again: %v", n, err)
		}
		if sent != 1 || len(notices) != 0 {
			t.Fatalf("cut at %d after text was shown: %d requests and %d retry notices, want 1 and 0", n, sent, len(notices))
		}
		return false
	}
	if sent != 2 || len(notices) != 1 || notices[0].Attempt != 2 || notices[0].Of != 4 || !errors.Is(notices[0].Reason, llm.ErrIncomplete) {
		t.Fatalf("cut at %d: the round succeeded after %d requests with notices %v; want 2 requests and one notice (2/4) naming the early end", n, sent, notices)
	}
	if shown.String() != wantText.String() {
		t.Fatalf("cut at %d, asked again: shown %q, want what the whole stream shows, %q", n, shown.String(), wantText.String())
	}
	return true
}

// FewCuts keeps the first, the middle and the last of cuts.
func FewCuts(cuts []int) []int {
	if len(cuts) <= 3 {
		return cuts
	}
	return []int{cuts[0], cuts[len(cuts)/2], cuts[len(cuts)-1]}
}
