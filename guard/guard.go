package guard

import (
	"context"
	"log/slog"
	"strings"
	"sync"

	"github.com/stewardhq/steward/credhttp"
)

// Marker replaces every suspicious span the filter neutralizes.
const Marker = "[Steward removed suspicious content here]"

// MaxFindings is the most findings reported for one text. Every suspicious
// span is neutralized even when more are found.
const MaxFindings = 8

// MaxSnippet is the longest snippet of a finding, in characters.
const MaxSnippet = 240

// SourceKind says where a filtered text came from.
type SourceKind int

// The kinds of sources whose texts are filtered.
const (
	WebContent SourceKind = iota + 1
	MailContent
	FileContent
	RetrievalContext
	DataSourceDescription
	ChatAttachment
	// MCPContent is what an MCP server returns or says about its tools.
	MCPContent
)

// String returns the kind's wire name, e.g. "WEB_CONTENT".
func (k SourceKind) String() string {
	switch k {
	case WebContent:
		return "WEB_CONTENT"
	case MailContent:
		return "MAIL_CONTENT"
	case FileContent:
		return "FILE_CONTENT"
	case RetrievalContext:
		return "RETRIEVAL_CONTEXT"
	case DataSourceDescription:
		return "DATA_SOURCE_DESCRIPTION"
	case ChatAttachment:
		return "CHAT_ATTACHMENT"
	case MCPContent:
		return "MCP_CONTENT"
	}
	return "UNKNOWN"
}

// Source names what a text belongs to. All fields of one page share the
// page's Source (Kind WebContent, Label its address), so the user hears about
// the page and not about its fields.
type Source struct {
	Kind  SourceKind
	Label string
}

// Text is one text to filter: a field of a source.
type Text struct {
	Source Source
	// Field names the part of the source, e.g. "title" or "body". It is
	// informational only.
	Field string
	Text  string
}

// Category is the kind of manipulation a finding stands for. Its value is the
// snake_case wire name.
type Category string

// The categories of findings.
const (
	Override          Category = "override"
	RoleOverride      Category = "role_override"
	Exfiltration      Category = "exfiltration"
	Jailbreak         Category = "jailbreak"
	AgentManipulation Category = "agent_manipulation"
	DelimiterEvasion  Category = "delimiter_evasion"
	MarkupEvasion     Category = "markup_evasion"
	EncodingEvasion   Category = "encoding_evasion"
	Persistence       Category = "persistence"
	Evasion           Category = "evasion"
)

// Categories lists every category in a fixed order.
var Categories = []Category{Override, RoleOverride, Exfiltration, Jailbreak, AgentManipulation,
	DelimiterEvasion, MarkupEvasion, EncodingEvasion, Persistence, Evasion}

// Finding is one suspicious piece of a text.
type Finding struct {
	// Rule identifies the detector rule, e.g. "phrase.override" or
	// "invisible.unicode_tags".
	Rule     string
	Category Category
	// Snippet is the sentence the finding stands in, at most MaxSnippet
	// characters, with invisible characters shown escaped (e.g. <U+200B>).
	// For hidden carriers it shows what they decode to.
	Snippet string
	// Start and End are the byte offsets in the original text of what the
	// rule matched. The neutralized span starts there and may reach to the
	// end of the sentence.
	Start, End int
}

// Outcome is the filtered text and what was found in it.
type Outcome struct {
	// Text is the text as the model may see it.
	Text string
	// Findings holds at most MaxFindings findings, deduplicated by rule and
	// snippet, in the order of their position.
	Findings []Finding
	// Redacted counts the distinct (rule, snippet) pairs found, which may
	// exceed len(Findings).
	Redacted int
	// ClassifierFailed is true when a classifier is configured but could not
	// check this text; the heuristic result stands.
	ClassifierFailed bool
	// ClassifierError says why, when the cause is one the configuration can
	// fix (such as a redirect to another origin that was not followed).
	ClassifierError string
}

// Options configure a Filter. The zero value gives the heuristic filter with
// no reporter and no classifier.
type Options struct {
	// Reporter is told what was filtered, once per action. Nil discards
	// reports.
	Reporter Reporter
	// Classifier optionally adds an external classifier over HTTP.
	Classifier *ClassifierOptions
	// Logger receives warnings without any filtered content. Nil uses
	// slog.Default().
	Logger *slog.Logger
	// LocalClassifier turns on the built-in local classifier after the
	// rules. It is off by default: on real news and blog pages it flagged
	// ordinary sentences on 11.6% of the pages (see testdata/README.md),
	// far above the 1% a detector may cost to be on by default.
	LocalClassifier bool
	// LocalClassifierThreshold replaces the threshold the local classifier
	// was trained with (LocalClassifierDefaultThreshold) when it is not
	// zero. A higher threshold flags fewer windows: fewer false positives,
	// fewer attacks caught.
	LocalClassifierThreshold float64
}

// Filter is the prompt-injection filter. It is safe for concurrent use.
type Filter struct {
	reporter   Reporter
	classifier *classifier
	noLocal    bool
	localTh    float64 // 0: the model's own threshold
	log        *slog.Logger
	// det returns the compiled rules, built on the first use and shared by
	// every filter of the process.
	det func() *detectors

	mu      sync.Mutex
	depth   int
	pending pendingReport
}

// New returns a filter. It is cheap: the rules are built when the first
// text is filtered, once per process.
func New(opts Options) *Filter {
	f := &Filter{reporter: opts.Reporter, log: opts.Logger, det: compiledDetectors, noLocal: !opts.LocalClassifier,
		localTh: opts.LocalClassifierThreshold}
	if f.log == nil {
		f.log = slog.Default()
	}
	if opts.Classifier != nil && opts.Classifier.URL != "" {
		f.classifier = newClassifier(*opts.Classifier)
	}
	return f
}

// FilterText filters a single text of a source. It is FilterBatch for one
// text.
func (f *Filter) FilterText(ctx context.Context, src Source, text string) Outcome {
	return f.FilterBatch(ctx, []Text{{Source: src, Text: text}})[0]
}

// FilterBatch filters texts in one call and returns their outcomes in the
// same order. Findings are reported grouped by source: immediately, or at the
// end of the outermost action when one is open (see BeginAction). Filtering
// never fails: a classifier that cannot be reached leaves the heuristic
// result and reports a warning.
func (f *Filter) FilterBatch(ctx context.Context, texts []Text) []Outcome {
	out := make([]Outcome, len(texts))
	scans := make([]*scan, len(texts))
	var det *detectors
	for i, t := range texts {
		if strings.TrimSpace(t.Text) == "" {
			out[i] = Outcome{Text: t.Text}
			continue
		}
		if det == nil {
			det = f.det()
		}
		scans[i] = det.scan(t.Text, t.Source.Kind)
		if !f.noLocal {
			scans[i].addLocal(localModel(), f.localTh)
		}
	}
	var failed []bool
	var why string
	if f.classifier != nil {
		failed, why = f.classify(ctx, texts, scans)
	}
	for i, t := range texts {
		if scans[i] == nil {
			continue
		}
		out[i] = scans[i].outcome(t.Text)
		if failed != nil && failed[i] {
			out[i].ClassifierFailed = true
			out[i].ClassifierError = why
		}
	}
	if c := collectorFrom(ctx); c != nil {
		if c.add(texts, out) {
			f.log.Warn("prompt-injection filter removed suspicious content", "texts", len(texts))
		}
		return out
	}
	f.record(texts, out)
	return out
}

// classify runs the external classifier over the non-blank texts and merges
// its spans. It returns which texts it could not check, and why when the
// configuration can fix the cause.
func (f *Filter) classify(ctx context.Context, texts []Text, scans []*scan) ([]bool, string) {
	failed := make([]bool, len(texts))
	var idx []int
	var batch []string
	for i, t := range texts {
		if scans[i] != nil {
			idx = append(idx, i)
			batch = append(batch, t.Text)
		}
	}
	if len(batch) == 0 {
		return failed, ""
	}
	results, err := f.classifier.classify(ctx, batch)
	if err != nil {
		f.log.Warn("prompt-injection classifier failed; using the built-in checks only", "error", err, "texts", len(batch))
		for _, i := range idx {
			failed[i] = true
		}
		why := ""
		if rerr, ok := credhttp.AsRedirectError(err); ok {
			why = rerr.Error()
		}
		return failed, why
	}
	for k, i := range idx {
		scans[i].addClassifier(texts[i].Text, results[k], f.classifier.threshold)
	}
	return failed, ""
}
