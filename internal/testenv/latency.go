package testenv

import (
	"runtime"
	"slices"
	"testing"
	"time"
)

// PercentileMs is the p-quantile of ds (nearest rank below, p in [0, 1])
// in milliseconds; ds is not changed.
func PercentileMs(ds []time.Duration, p float64) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[int(p*float64(len(s)-1))].Microseconds()) / 1000
}

// ReportQueryLatency runs every query of qs once per benchmark loop and
// reports the wall time (p50-ms, p95-ms) and the process's CPU time
// (cpu-p50-ms, cpu-p95-ms) of one query: on a shared machine the wall time
// mostly tells how long a query waited for a CPU. A query's error ends the
// benchmark.
func ReportQueryLatency[Q any](b *testing.B, qs []Q, run func(Q) error) {
	b.Helper()
	var ds, cpus []time.Duration
	for b.Loop() {
		for _, q := range qs {
			cpu, start := ProcessCPU(), time.Now()
			if err := run(q); err != nil {
				b.Fatal(err)
			}
			ds = append(ds, time.Since(start))
			cpus = append(cpus, ProcessCPU()-cpu)
		}
	}
	b.ReportMetric(PercentileMs(ds, 0.5), "p50-ms")
	b.ReportMetric(PercentileMs(ds, 0.95), "p95-ms")
	b.ReportMetric(PercentileMs(cpus, 0.5), "cpu-p50-ms")
	b.ReportMetric(PercentileMs(cpus, 0.95), "cpu-p95-ms")
}

// SampleHeapInUse samples the Go heap in use every interval until the
// returned stop is called, which returns the peak seen (in bytes).
func SampleHeapInUse(interval time.Duration) (stop func() uint64) {
	var peak uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-done:
				return
			case <-time.After(interval):
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		return peak
	}
}
