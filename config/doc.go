// Package config reads what governs Steward: organization and local
// configuration plugins in the Lua format of the reference implementation,
// the user's settings file, and secrets (keyring or a user-only file).
//
// Plugins run in a sandbox: only the base, table, string and math libraries,
// a require that loads only files from the plugin's own folder, a time limit
// and a memory limit that hold inside the library functions too (pattern
// matching, rep, gsub, format, table.concat, unpack are Steward's own,
// bounded versions). ChildProcess runs plugins in a child process that can
// be stopped at any instruction. A failing plugin is reported with its file
// and line and never stops Steward.
//
// Organization plugins always rank above local ones; within a rank PRIORITY
// decides and the later plugin wins, except that what an organization
// plugin defines or manages (providers, embedding providers, data sources,
// mailboxes, MCP servers, settings) a local plugin can never replace. A
// security setting that cannot be read counts as its strictest value.
//
// The package only reads and merges configuration; deciding with it is the
// registry's and the settings resolver's job. It must not open network
// connections or log secrets.
package config
