package guard

import (
	"bytes"
	_ "embed"
	"sync"

	"github.com/stewardhq/steward/guard/internal/textmodel"
)

//go:generate go run ./internal/textmodel/cmd/trainmodel -threshold 1.255740 testdata/train testdata/trainreal localmodel.bin

// localModelBytes is the local classifier, trained from testdata/train
// (hand-written) and testdata/trainreal (real benign text) by go generate,
// at the operating point chosen on real benign pages (pageThreshold in
// localmodel_test.go); TestLocalModelReproducible checks that training reproduces
// it byte for byte.
//
//go:embed localmodel.bin
var localModelBytes []byte

// localModel decodes the embedded model on the first use (512 KB of
// weights), once per process.
var localModel = sync.OnceValue(func() *textmodel.Model {
	m, err := textmodel.Decode(localModelBytes)
	if err != nil {
		panic("guard: the embedded classifier model is broken: " + err.Error())
	}
	return m
})

// LocalClassifierDefaultThreshold returns the threshold the embedded local
// classifier was trained with, for choosing Options.LocalClassifierThreshold
// relative to it.
func LocalClassifierDefaultThreshold() float64 { return localModel().Threshold }

// localRule is the rule name of the local classifier's findings.
const localRule = "classifier.local"

// addLocal scores the sentence windows of the readable view with the local
// classifier. A window over the threshold is neutralized and becomes a
// finding, unless it overlaps what a rule already found: the rule's span
// is the more precise one, so the classifier neither hides that finding
// nor widens what is removed around it.
func (sc *scan) addLocal(m *textmodel.Model, threshold float64) {
	v := sc.view
	if len(v.raw) == 0 {
		return
	}
	if threshold == 0 {
		threshold = m.Threshold
	}
	ruleMatches := len(sc.found)
	for _, w := range m.FlaggedAt(v.raw, threshold) {
		s := v.rawSpan(w.Start, w.End)
		overlaps := false
		for _, f := range sc.found[:ruleMatches] {
			if f.match.start < s.end && s.start < f.match.end {
				overlaps = true
				break
			}
		}
		if !overlaps {
			sc.redact = append(sc.redact, s)
			sc.found = append(sc.found, found{rule: localRule, category: localCategory(v.raw[w.Start:w.End]), match: s})
		}
	}
}

// exfilCues are words that mark a flagged window as a request to move data
// out, in the filter's languages; the model itself only tells injection
// from ordinary text.
var exfilCues = []string{"send", "forward", "mail", "@", "upload", "post ", "http", "link", "url", "password",
	"schick", "sende", "weiterleit", "envoie", "envoy", "transf", "envía", "envia", "reenv", "invia", "inoltr",
	"stuur", "doorsturen", "отправ", "перешл", "发送", "发给", "转发", "送信", "送って", "転送", "보내", "전송"}

// roleCues mark a window that hands the reader a new identity.
var roleCues = []string{"you are now", "act as", "pretend", "persona", "from now on you", "du bist jetzt", "tu es désormais",
	"ahora eres", "ora sei", "agora você é", "je bent nu", "теперь ты", "你现在是", "あなたは今から", "당신은 이제"}

// localCategory guesses the category of a flagged window from a few cue
// words; a window without cues is an override.
func localCategory(raw []byte) Category {
	low := bytes.ToLower(raw)
	for _, c := range roleCues {
		if bytes.Contains(low, []byte(c)) {
			return RoleOverride
		}
	}
	for _, c := range exfilCues {
		if bytes.Contains(low, []byte(c)) {
			return Exfiltration
		}
	}
	return Override
}
