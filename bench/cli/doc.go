// Package cli measures the steward command line side by side with notmuch:
// one process per query over the same 100,000 generated mails, `steward
// mail search` (text and --json) against `notmuch search`, `steward
// --help`, and `steward read` of a small page from a loopback server, with
// each side's peak resident set. It is a benchmark only, part of the bench module.
package cli
