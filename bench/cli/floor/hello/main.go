// Command hello prints its usage and exits: the least a Go process costs
// on this machine, the floor under `steward --help`.
package main

import "os"

func main() { _, _ = os.Stdout.WriteString("Usage: hello\n") }
