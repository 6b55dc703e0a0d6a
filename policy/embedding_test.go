package policy

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckEmbedding: an embedding provider receives a source's content
// and queries only when it meets the source's level, as a chat provider
// must; a closed level admits none. Every combination of levels is tried.
func TestCheckEmbedding(t *testing.T) {
	for _, required := range Levels() {
		for _, emb := range Levels() {
			err := CheckEmbedding(required, emb)
			want := OpenLevel(required) && emb >= required
			if (err == nil) != want {
				t.Errorf("required %s, embedding %s: err %v, want allowed %v", required, emb, err, want)
			}
			var refused *EmbeddingRefusedError
			if err != nil && (!errors.As(err, &refused) || !strings.Contains(err.Error(), required.String())) {
				t.Errorf("required %s, embedding %s: %v does not name the level", required, emb, err)
			}
			if err != nil && OpenLevel(required) && !strings.Contains(err.Error(), emb.String()) {
				t.Errorf("required %s, embedding %s: %v does not name the provider's level", required, emb, err)
			}
		}
	}
	if CheckEmbedding(High, Confidence(250)) == nil {
		t.Error("an undefined level below HIGH passed")
	}
}
