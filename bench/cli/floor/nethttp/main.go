// Command nethttp links net/http (as every Steward command does: it talks
// to providers) and prints its usage: what a Go process with an HTTP
// client costs before it does anything.
package main

import (
	"net/http"
	"os"
)

func main() {
	_ = http.DefaultClient
	_, _ = os.Stdout.WriteString("Usage: nethttp\n")
}
