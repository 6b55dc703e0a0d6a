// Package dovetest starts a private Dovecot IMAP server on a free loopback
// port for integration tests, with a fresh configuration, users and Maildir
// in a temporary directory, and stops it again by its process ID.
//
// On request (Options) the server also speaks TLS, with a certificate for
// 127.0.0.1 signed by a CA made for the test (STARTTLS on the IMAP port and
// implicit TLS on a second port), and checks OAuth2 bearer tokens (XOAUTH2,
// OAUTHBEARER) against an introspection URL the test serves on loopback.
//
// It never touches a system-wide Dovecot: everything lives under its own
// scratch directory, and the server is only reached on 127.0.0.1. A test is
// skipped when the dovecot binary is missing, unless the environment
// variable CI is "true", in which case it fails.
package dovetest
