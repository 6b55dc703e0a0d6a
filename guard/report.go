package guard

import (
	"fmt"
	"sync"
)

// Reporter is told what the filter did, once per action (see
// Filter.BeginAction) or once per FilterBatch call outside an action.
// Implementations show it to the user; they must not block for long.
type Reporter interface {
	Report(r Report)
}

// ReporterFunc adapts a function to a Reporter.
type ReporterFunc func(Report)

// Report implements Reporter.
func (f ReporterFunc) Report(r Report) { f(r) }

// Report tells the user what was filtered during one action.
type Report struct {
	// Message is the one-line notice for the user when something was
	// removed, e.g. "removed suspicious instructions from 'https://…'" or
	// "removed suspicious instructions from 3 sources"; empty otherwise.
	Message string
	// Sources lists the sources with findings, in the order they were first
	// filtered, each with its findings.
	Sources []SourceFindings
	// Warning is the notice for the user when the classifier could not check
	// some sources; empty otherwise.
	Warning string
	// Unchecked lists the sources the classifier could not check. Their texts
	// passed with the built-in checks only.
	Unchecked []Source
}

// SourceFindings are the findings of one source, over all its fields.
type SourceFindings struct {
	Source Source
	// Fields names the fields that had findings, in order, without
	// duplicates.
	Fields   []string
	Findings []Finding
}

type pendingReport struct {
	sources   []SourceFindings
	unchecked []Source
	why       string
}

func (p *pendingReport) empty() bool { return len(p.sources) == 0 && len(p.unchecked) == 0 }

func (p *pendingReport) add(t Text, o Outcome) {
	if len(o.Findings) > 0 {
		i := p.sourceIndex(t.Source)
		sf := &p.sources[i]
		if !contains(sf.Fields, t.Field) {
			sf.Fields = append(sf.Fields, t.Field)
		}
		sf.Findings = append(sf.Findings, o.Findings...)
	}
	if o.ClassifierFailed && !containsSource(p.unchecked, t.Source) {
		p.unchecked = append(p.unchecked, t.Source)
	}
	if p.why == "" {
		p.why = o.ClassifierError
	}
}

func (p *pendingReport) sourceIndex(s Source) int {
	for i := range p.sources {
		if p.sources[i].Source == s {
			return i
		}
	}
	p.sources = append(p.sources, SourceFindings{Source: s})
	return len(p.sources) - 1
}

func (p *pendingReport) report() Report {
	r := Report{Sources: p.sources, Unchecked: p.unchecked}
	switch len(p.sources) {
	case 0:
	case 1:
		r.Message = fmt.Sprintf("removed suspicious instructions from '%s'", p.sources[0].Source.Label)
	default:
		r.Message = fmt.Sprintf("removed suspicious instructions from %d sources", len(p.sources))
	}
	switch len(p.unchecked) {
	case 0:
	case 1:
		r.Warning = fmt.Sprintf("the prompt-injection classifier could not check '%s'; it was used with the built-in checks only", p.unchecked[0].Label)
	default:
		r.Warning = fmt.Sprintf("the prompt-injection classifier could not check %d sources; they were used with the built-in checks only", len(p.unchecked))
	}
	if r.Warning != "" && p.why != "" {
		r.Warning += ": " + p.why
	}
	return r
}

// BeginAction opens a reporting scope: what is filtered until the returned
// end function is called is reported once, when the outermost open scope
// ends. Scopes nest; calling end more than once has no further effect.
func (f *Filter) BeginAction() (end func()) {
	f.mu.Lock()
	f.depth++
	f.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			f.depth--
			var r Report
			flush := f.depth == 0 && !f.pending.empty()
			if flush {
				r = f.pending.report()
				f.pending = pendingReport{}
			}
			f.mu.Unlock()
			if flush {
				f.deliver(r)
			}
		})
	}
}

// record adds the outcomes of one batch to the open action, or reports them
// at once when no action is open.
func (f *Filter) record(texts []Text, out []Outcome) {
	var now pendingReport
	f.mu.Lock()
	target := &f.pending
	if f.depth == 0 {
		target = &now
	}
	for i, t := range texts {
		target.add(t, out[i])
	}
	f.mu.Unlock()
	if !now.empty() {
		f.deliver(now.report())
	}
}

func (f *Filter) deliver(r Report) {
	if r.Message != "" {
		// Labels are addresses or names of sources, never content.
		f.log.Warn("prompt-injection filter removed suspicious content", "sources", len(r.Sources))
	}
	if f.reporter != nil {
		f.reporter.Report(r)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func containsSource(list []Source, s Source) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
