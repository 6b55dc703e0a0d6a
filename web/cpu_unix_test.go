//go:build unix

package web

import (
	"syscall"
	"testing"
	"time"
)

// cpuClock reports the process's CPU time per operation, which stays
// meaningful when other work shares the machine (wall-clock pages/s does
// not). It includes the test server and the garbage collector.
type cpuClock struct{ start time.Duration }

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Skip("no rusage here")
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU(b *testing.B) cpuClock { return cpuClock{processCPU(b)} }

func (c cpuClock) report(b *testing.B) {
	per := float64(processCPU(b)-c.start) / float64(b.N)
	b.ReportMetric(per/1e6, "cpu-ms/page")
}
