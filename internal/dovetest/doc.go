// Package dovetest starts a private Dovecot IMAP server on a free loopback
// port for integration tests, with a fresh configuration, users and Maildir
// in a temporary directory, and stops it again by its process ID.
//
// It never touches a system-wide Dovecot: everything lives under its own
// scratch directory. A test is skipped when the dovecot binary is missing,
// unless the environment variable CI is "true", in which case it fails.
package dovetest
