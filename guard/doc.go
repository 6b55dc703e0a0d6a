// Package guard is the prompt-injection filter for everything Steward fetches
// from outside: web pages, mails, files, retrieval passages and data source
// descriptions.
//
// A Filter reads each text the way a model would: one left-to-right pass
// decodes JSON and JavaScript escapes and XML/HTML character references and
// drops invisible characters, keeping for every byte the unit of the
// original it came from, so a match is neutralized together with the whole
// escape sequences it was written in. On that readable view it looks for
//
//   - invisible carriers: Unicode tag characters (decoded for the report,
//     then stripped; emoji flag subdivisions stay), zero-width and format
//     characters (ZWJ and ZWNJ stay inside emoji and joining scripts), bidi
//     controls (overrides are reported), variation-selector runs;
//   - terminal control sequences (ESC and C1 introduced: OSC 52 that writes
//     the clipboard, window titles, screen erasing; see terminal.go), removed
//     and reported as rule "terminal.control_sequence"; lone control
//     characters other than whitespace are removed silently;
//   - fake turns and delimiters (<|im_start|>, [INST], "Human:" at a line
//     start, "System: you are …" after a sentence break, a tag or a quote,
//     closing tags of wrappers such as </untrusted>);
//   - known instruction phrases in English, German, French, Spanish,
//     Italian, Portuguese, Dutch, Russian, Chinese, Japanese and Korean, with
//     an Aho-Corasick matcher on a lowercased, accent- and width-folded,
//     whitespace-collapsed view, plus structural rules run around trigger
//     words;
//   - base64, hex and ROT13 carriers that decode to such instructions;
//   - spaced-out and spelled-out letters ("i g n o r e", "I-G-N-O-R-E",
//     "i.g.n.o.r.e"), shuffled inner letters and digits for letters.
//
// A phrase quoted inside a sentence that goes on (an article citing
// "ignore previous instructions") and a turn word inside a list of labels
// ("Assistant: referee" under "Computer: 9 wins") are not findings.
//
// New is cheap: the rules (tens of thousands of phrase forms in one
// automaton, about 10 MB) are built when the first text is filtered, once
// per process, and shared by every Filter.
//
// What it finds is neutralized: an instruction is replaced by Marker from
// the start of its sentence (with the words that address the model) to the
// end of its block (a line of Markdown, or wrapped lines of one
// paragraph), an encoded carrier whole, an invisible carrier is removed
// silently, and the rest of the text stays. The filter never rejects
// content. Findings are reported to the user once per action through a
// Reporter (see Filter.BeginAction).
//
// A local classifier can run after the rules (Options.LocalClassifier; it
// is off by default, because on 181 real news and blog pages it removed
// ordinary sentences from 21, and no detector may be on by default above
// 1% of real pages; Options.LocalClassifierThreshold trades its recall for
// fewer false positives): a linear model over hashed word and character
// n-grams of the readable view (internal/textmodel), embedded in the
// binary and trained by go generate from hand-written passages in
// testdata/train that are disjoint from the evaluation set and real benign
// text in testdata/trainreal (the React documentation in ten languages),
// at a threshold chosen on other real pages of that documentation. It scores
// every sentence and every two adjacent sentences; a window over the
// threshold is neutralized like a rule's match and reported as rule
// "classifier.local". It only adds findings, never hides one of the
// rules, and slows filtering to about two thirds of the speed of the rules
// alone.
//
// An optional external classifier (ClassifierOptions) adds its spans. When
// it cannot be reached or answers outside its protocol, the heuristic result
// stands and a warning is reported: the filter fails open, and nothing may
// depend on it having run.
//
// The filter is a signal for the user and the log, not a security
// boundary. On real pages (TestRealPages*, figures in the README) the
// rules remove nothing from 276 ordinary pages (two public sets) and stop
// 97% of the instructions planted into them through ten carriers (93% of
// a held-out block, but only 68% of a second held-out block written to
// be varied), and 81% of BIPIA's held-out attacks, many of which are bare
// tasks that nothing marks as addressed to a model.
//
// The package opens no connection except to the configured classifier and
// never logs the content it filters. It does not strip private-use or
// unassigned characters, does not apply full NFKC (it folds case, accents,
// full-width forms and common Cyrillic and Greek look-alikes itself), and
// does not scan files as a stream.
package guard
