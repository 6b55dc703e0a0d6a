// Package testenv helps tests find the project's shared material (the
// recorded provider traffic and API specifications beside the repository)
// and keeps network tests on loopback.
package testenv
