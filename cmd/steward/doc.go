// Command steward lets a language model use local tools safely: ask a
// question once, chat, inspect the tool catalogue and the providers, manage
// tool settings and check the organization's configuration.
//
// The command only turns flags into calls of package app and writes what
// comes back; it has no logic of its own.
package main
