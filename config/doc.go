// Package config reads what governs Steward: organization and local
// configuration plugins in the Lua format of the reference implementation,
// the user's settings file, and secrets (keyring or a user-only file).
//
// Plugins run in a sandbox: only the base, table, string and math libraries,
// a require that loads only files from the plugin's own folder, a time limit
// and a memory limit. A failing plugin is reported with its file and line
// and never stops Steward. Organization plugins always rank above local
// ones; within a rank PRIORITY decides and the later plugin wins.
//
// The package only reads and merges configuration; deciding with it is the
// registry's and the settings resolver's job.
package config
