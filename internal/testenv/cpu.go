package testenv

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// ProcessCPU is the CPU time this process's threads have run so far. On
// Linux it sums each thread's time on a CPU from /proc/self/task/*/schedstat
// (nanoseconds, unlike the tick-counted user and system times); elsewhere
// it is getrusage's user and system time. Benchmarks report it beside wall
// times: on a machine shared with other work, a wall time mostly tells how
// long the code waited for a CPU.
func ProcessCPU() time.Duration {
	if ents, err := os.ReadDir("/proc/self/task"); err == nil {
		var ns int64
		ok := false
		for _, e := range ents {
			b, err := os.ReadFile("/proc/self/task/" + e.Name() + "/schedstat")
			if err != nil {
				continue
			}
			f := bytes.Fields(b)
			if len(f) == 0 {
				continue
			}
			if v, err := strconv.ParseInt(string(f[0]), 10, 64); err == nil {
				ns += v
				ok = true
			}
		}
		if ok {
			return time.Duration(ns)
		}
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
