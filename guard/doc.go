// Package guard is the prompt-injection filter for everything Steward fetches
// from outside: web pages, mails, files, retrieval passages and data source
// descriptions.
//
// A Filter reads each text the way a model would (JSON and JavaScript escapes
// and XML/HTML character references decoded, invisible characters dropped),
// looks for invisible carriers, role and delimiter spoofing, known
// instruction phrases in several languages, encoded carriers, spaced-out and
// shuffled letters, and neutralizes what it finds: a suspicious span is
// replaced by a marker, an invisible carrier is removed silently, and the
// rest of the text stays. Findings are reported to the user once per action
// through a Reporter.
//
// The filter never rejects content and never fails a request: when the
// optional external classifier cannot be reached or answers garbage, the
// heuristic result is used and a warning is reported (fail open). Nothing may
// depend on the filter having run; it is a signal, not a security boundary.
// The package opens no connection except to the configured classifier and
// never logs the content it filters.
package guard
