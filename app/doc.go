// Package app wires Steward together: it reads the configuration, builds
// the providers, the tool registry, the tools and the stores, and runs one
// answer through the loop. The command line (cmd/steward) and later the HTTP
// server are thin surfaces over it.
//
// app is, with cmd, the only room that knows every other room. It holds no
// global state: everything is built per App and passed on.
package app
