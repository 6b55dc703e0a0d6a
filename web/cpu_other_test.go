//go:build !unix

package web

import "testing"

// cpuClock reports nothing where getrusage is missing.
type cpuClock struct{}

func startCPU(*testing.B) cpuClock { return cpuClock{} }

func (cpuClock) report(*testing.B) {}
