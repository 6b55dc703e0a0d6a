// Package settings resolves what a tool is configured with and the
// organization's tool policy: the value of each setting field by the usual
// precedence (a locked organization value, then the user's saved value,
// then an organization default), secrets from a keyring, whether a tool is
// configured, whether tools and single tools or collections are switched
// off, the minimum provider confidence of a tool or collection, and which
// preview features are on.
//
// It is fed with plain data which the config package reads from the
// organization's plugins and the user's settings file; it reads no file and
// decrypts nothing itself. Secrets never appear in its errors or in the
// String output of its types, and it never logs.
package settings
