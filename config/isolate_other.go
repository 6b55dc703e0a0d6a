//go:build !linux

package config

// limitAddressSpace is a no-op where no address-space limit is set; the
// watchdog and the parent's time limit still apply.
func limitAddressSpace(uint64) {}
