// Package kerberos is the operating-system sign-in of the web package on
// Linux and other Unix systems: it signs a request in with the user's
// Kerberos ticket through SPNEGO (the HTTP "Negotiate" scheme), for the
// service principal HTTP/<host> of the server the request goes to.
//
// It reads the Kerberos configuration (KRB5_CONFIG, else /etc/krb5.conf) and
// the user's ticket cache (KRB5CCNAME, else the configuration's
// default_ccache_name, else FILE:/tmp/krb5cc_<uid>) on every sign-in, so a
// fresh kinit takes effect at once. Only FILE ticket
// caches can be read; KCM, KEYRING, DIR and other cache types are reported
// as such.
//
// This package must not decide whether a request may be signed in (the web
// package does that, hop by hop), must not obtain a ticket-granting ticket
// itself or ask for a password, and must never put a ticket, a key or a
// token into an error or a log.
package kerberos
