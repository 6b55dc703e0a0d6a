package policy

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckEmbedding: an embedding provider receives a source's content
// and queries only when it meets the source's level, as a chat provider
// must; a level that closes the source admits none. Every combination of
// levels is tried under both rules.
func TestCheckEmbedding(t *testing.T) {
	for _, rule := range []LevelRule{OpenLevelsOnly, MinimumLevel} {
		for _, required := range Levels() {
			for _, emb := range Levels() {
				err := CheckEmbedding(rule, required, emb)
				want := Allows(emb, required) && (rule == MinimumLevel || OpenLevel(required))
				if (err == nil) != want {
					t.Errorf("rule %d, required %s, embedding %s: err %v, want allowed %v", rule, required, emb, err, want)
				}
				var refused *EmbeddingRefusedError
				if err != nil && (!errors.As(err, &refused) || !strings.Contains(err.Error(), required.String())) {
					t.Errorf("rule %d, required %s, embedding %s: %v does not name the level", rule, required, emb, err)
				}
				if err != nil && !refused.Closed && !strings.Contains(err.Error(), emb.String()) {
					t.Errorf("rule %d, required %s, embedding %s: %v does not name the provider's level", rule, required, emb, err)
				}
				if err != nil && refused.Closed != (rule == OpenLevelsOnly && !OpenLevel(required)) {
					t.Errorf("rule %d, required %s: closed %v", rule, required, refused.Closed)
				}
			}
		}
	}
	// A data source's NONE lets every provider through, a mailbox's closes it.
	if CheckEmbedding(MinimumLevel, None, Untrusted) != nil || CheckEmbedding(OpenLevelsOnly, None, High) == nil {
		t.Error("NONE")
	}
	for _, rule := range []LevelRule{OpenLevelsOnly, MinimumLevel} {
		if CheckEmbedding(rule, High, Confidence(250)) == nil {
			t.Error("an undefined level below HIGH passed")
		}
		if CheckEmbedding(rule, Confidence(250), High) == nil {
			t.Error("an undefined required level passed")
		}
	}
}
