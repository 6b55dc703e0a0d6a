// Package mailbox keeps Steward's local index of a user's mailboxes and reads
// it for the mail tools: the mailbox configuration and the organization's
// policy over it, the read-only IMAP indexer, the embedding clients, and the
// retrieval service the tools and the CLI query.
//
// The indexer is the only code that talks to a mail server. It changes
// nothing there (EXAMINE and BODY.PEEK only), signs in at most once per run,
// and after a refused sign-in waits for the user. Nothing in this package
// logs a mail's subject, sender, recipients, folder or attachment names, or a
// secret; the SQL lives in store/mailindex.
//
// Encrypted mail. A mail whose content is encrypted (S/MIME enveloped or
// opaque-signed, PGP/MIME, inline PGP, or Microsoft IRM, whose content
// travels in a message.rpmsg attachment) is indexed by its header block
// only and marked with its kind; a signed mail that is readable is not.
//
// Scope. A mailbox with MaxAgeDays N > 0 indexes, in each folder, the mails
// the server finds with UID SEARCH OR SINCE <day> OR FLAGGED DRAFT, and
// every mail of the drafts folder; without a max age every mail. <day> is
// the date N days before today, both taken in UTC: IMAP offers no way to
// learn the server's time zone, but the server compares SINCE with the
// INTERNALDATE by its own calendar days, so the window's edge falls on a
// server-side midnight. The search runs on every sync, so a changed setting
// takes effect on the next one: a wider window fetches the older mails, a
// narrower one removes them, and a mail that ages out or loses its flag
// leaves the index like a mail deleted on the server (its content goes
// with the last location). A folder's applied window is kept after its
// sync completes, and the coverage reports indexes_all_mails or
// indexed_since: the later of the applied window and the configured one.
//
// Flag changes. When the server offers CONDSTORE (RFC 7162), folders are
// examined with it and their HIGHESTMODSEQ is kept with the UIDVALIDITY it
// belongs to; the next sync reads only the flags changed since then
// (FETCH 1:* (FLAGS) (CHANGEDSINCE m)), and nothing when HIGHESTMODSEQ has
// not moved. Without CONDSTORE, or when the kept value is missing, belongs
// to another UIDVALIDITY or lies above the server's, every flag is read.
// Which mails were deleted is always learnt from the scope search.
package mailbox
