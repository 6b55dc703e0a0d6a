package config

import (
	"bufio"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
)

// limitAddressSpace caps the address space of this (child) process at what
// it uses now plus the memory limit and some room for the runtime, so that
// an allocation beyond it fails in the kernel even where the watchdog
// cannot see it coming.
func limitAddressSpace(limit uint64) {
	now := vmSize()
	if now == 0 {
		return
	}
	// The collector keeps the heap near the limit; the rest is room for
	// the runtime's own structures and the collector's work.
	debug.SetMemoryLimit(int64(limit))
	max := now + limit + limit/2 + 64<<20
	_ = syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: max, Max: max})
}

// vmSize reads this process's virtual memory size from /proc.
func vmSize() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmSize:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
