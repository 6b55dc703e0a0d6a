package config

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stewardhq/steward/policy"
)

// TestMain lets the test binary serve as the plugin sandbox's child
// process, the way cmd/steward does.
func TestMain(m *testing.M) {
	if IsChild() {
		os.Exit(ServeChild(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

// hostile is a plugin that tries to hang or crash Steward.
type hostile struct {
	name, body string
	// want is part of the problem the plugin must be skipped with.
	want string
	// childOnly marks a plugin whose single instruction allocates beyond
	// any limit: only a child process can bound it, in process it would
	// take the test binary with it.
	childOnly bool
}

func concatChain(n int) string {
	var b strings.Builder
	b.WriteString("x = 'a'")
	for i := 0; i < n; i++ {
		b.WriteString("..'a'")
	}
	return b.String() + "\n"
}

func repeatedOperand(v string, n int) string {
	return strings.TrimSuffix(strings.Repeat(v+"..", n), "..")
}

var hostilePlugins = []hostile{
	{"backtracking", `x = string.find(string.rep("a", 60), string.rep("a?", 60) .. string.rep("a", 60))` + "\n", "time limit", false},
	{"backtrackingInPcallLoop", `while true do pcall(string.find, string.rep("a", 60), string.rep("a?", 60) .. string.rep("a", 60)) end` + "\n", "time limit", false},
	{"gmatchBacktracking", `for w in string.gmatch(string.rep("a", 60), string.rep("a?", 60) .. string.rep("a", 60)) do end` + "\n", "time limit", false},
	{"deepPattern", `x = string.find(string.rep("a", 1e5), string.rep("(", 31) .. string.rep("a?", 300) .. "b" .. string.rep(")", 31))` + "\n", "pattern too complex", false},
	{"repOverflow", `x = ("abcd"):rep(2^62)` + "\n", "string.rep would build", false},
	{"repHuge", `x = string.rep("x", 2^31)` + "\n", "string.rep would build", false},
	{"gsubBomb", `local s = string.rep("a", 2^20) x = s:gsub(".", s)` + "\n", "string.gsub would build", false},
	{"gsubManyMatches", `local s = string.rep("a", 2^20) for i = 1, 1e6 do s = s:gsub("a", "a") end` + "\n", "time limit", false},
	{"tableConcatBomb", `local s = string.rep("x", 2^20) local t = {} for i = 1, 1e3 do t[i] = s end x = table.concat(t)` + "\n", "table.concat would build", false},
	{"concatLoop", "local s = 'xxxxxxxxxxxxxxxx'\nwhile true do s = s .. s end\n", "limit", false},
	{"unpack", `x = unpack({}, 1, 1e8)` + "\n", "too many results to unpack", false},
	{"stringByte", `x = string.byte(string.rep("a", 2^20), 1, -1)` + "\n", "string.byte would return", false},
	{"formatWidth", `x = string.format("%099999999d", 1)` + "\n", "invalid format", false},
	{"tailCall", "local function f(n) return f(n + 1) end\nf(1)\n", "time limit", false},
	{"tailCallInPcall", "local function f(n) return f(n + 1) end\nwhile true do pcall(f, 1) end\n", "time limit", false},
	{"tailCallXpcallFailingHandler", "local function f(n) return f(n + 1) end\nwhile true do xpcall(function() return f(1) end, function() error('no') end) end\n", "time limit", false},
	{"compileConcat", concatChain(200000), "nested more than 200 levels|more memory than its limit|time limit", false},
	{"sortEndlessComparator", "local t = {} for i = 1, 100 do t[i] = i end\ntable.sort(t, function(a, b) while true do end end)\n", "time limit", false},
	{"sortInconsistentComparator", "local t = {} for i = 1, 1e5 do t[i] = i end\nlocal n = 0\nwhile true do table.sort(t, function(a, b) n = n + 1 return n % 3 == 0 end) end\n", "time limit", false},
	{"sortRecursiveComparator", "local t = {3, 2, 1}\nlocal function cmp(a, b) table.sort(t, cmp) return a < b end\ntable.sort(t, cmp)\n", "stack overflow", false},
	{"sortGrowingComparator", "local t = {} for i = 1, 1000 do t[i] = i end\ntable.sort(t, function(a, b) t[#t + 1] = string.rep('x', 1000) return a > b end)\nwhile true do end\n", "limit", false},
	{"concatAmplified", "local s = string.rep('x', 2^20)\nlocal t = " + repeatedOperand("s", 150) + "\nlocal u = " + repeatedOperand("t", 150) + "\nx = #u\n", "more memory than its limit|time limit", true},
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func writeHostile(t *testing.T, root, group string, h hostile) string {
	return writePlugin(t, root, group, h.name, h.body)
}

// TestHostilePluginsAreStopped runs every hostile plugin through the
// loader, in this process and in a child process, and checks that each is
// skipped with a clear problem, well within a bound, while a good plugin
// beside it still applies.
func TestHostilePluginsAreStopped(t *testing.T) {
	child := &ChildProcess{Executable: os.Args[0]}
	for _, mode := range []struct {
		name      string
		isolation *ChildProcess
	}{{"inProcess", nil}, {"childProcess", child}} {
		for _, h := range hostilePlugins {
			if h.childOnly && mode.isolation == nil {
				continue
			}
			t.Run(mode.name+"/"+h.name, func(t *testing.T) {
				root := t.TempDir()
				writePlugin(t, root, "org", "good", `CONFIG["SETTINGS"]["DataConfidence.ConfidenceScheme"] = "TRUST_EUROPE"`+"\n")
				file := writeHostile(t, root, "org", h)
				start := time.Now()
				eff, err := Load(context.Background(), root, Options{Limits: Limits{Time: time.Second}, Isolation: mode.isolation})
				took := time.Since(start)
				if err != nil {
					t.Fatal(err)
				}
				// The bound is generous for a loaded CI machine; before the
				// sandbox bounded library functions, these ran for minutes,
				// forever, or crashed the process.
				if took > 15*time.Second {
					t.Errorf("stopped only after %v", took)
				}
				if eff.Scheme().Scheme != policy.TrustEurope {
					t.Errorf("the good plugin must still apply; problems: %v", eff.Problems)
				}
				probs := problemsFor(eff, file)
				if len(probs) != 1 || !containsAny(probs[0].Message, strings.Split(h.want, "|")) || !strings.Contains(probs[0].Message, "not loaded") {
					t.Fatalf("want one problem mentioning %q, got %v", h.want, probs)
				}
				if len(probs[0].Message) > 400 {
					t.Errorf("the problem is one short line, not %d characters", len(probs[0].Message))
				}
				t.Logf("%s: stopped after %v: %s", h.name, took.Round(time.Millisecond), probs[0].Message)
			})
		}
	}
}

// TestCancelStopsARunningPlugin is Ctrl-C while a plugin runs: the
// context ends and Load returns at once, in both modes.
func TestCancelStopsARunningPlugin(t *testing.T) {
	for _, iso := range []*ChildProcess{nil, {Executable: os.Args[0]}} {
		root := t.TempDir()
		writeHostile(t, root, "org", hostilePlugins[0])
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(200*time.Millisecond, cancel)
		start := time.Now()
		_, err := Load(ctx, root, Options{Limits: Limits{Time: time.Minute}, Isolation: iso})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("isolation %v: want context.Canceled, got %v", iso != nil, err)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Fatalf("isolation %v: cancelling took %v", iso != nil, took)
		}
	}
}

// TestChildProcessReturnsTheSameConfiguration loads a regular plugin both
// ways.
func TestChildProcessReturnsTheSameConfiguration(t *testing.T) {
	root := t.TempDir()
	writePlugin(t, root, "org", "it", `PRIORITY = 3
CONFIG["SETTINGS"]["DataConfidence.ConfidenceScheme"] = "TRUST_EUROPE"
CONFIG["SETTINGS"]["DataTools.DisabledToolIds"] = { "web_search", "read_web_page" }
CONFIG["SETTINGS"]["DataConfidence.CustomConfidenceScheme"] = { ["OPEN_AI"] = "LOW" }
CONFIG["SETTINGS"]["DataTools.EnableTools"] = true
CONFIG["SETTINGS"]["web_search.maxResults"] = "7"
NOTANUMBER = 0/0
`)
	a, err := Load(context.Background(), root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load(context.Background(), root, Options{Isolation: &ChildProcess{Executable: os.Args[0]}})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(a.Settings) != fmt.Sprint(b.Settings) || fmt.Sprint(a.Problems) != fmt.Sprint(b.Problems) || a.Plugins[0].Priority != b.Plugins[0].Priority {
		t.Fatalf("in process:\n%v %v\nchild:\n%v %v", a.Settings, a.Problems, b.Settings, b.Problems)
	}
}

// BenchmarkHostilePlugins measures how long each hostile plugin runs before
// it is stopped under the documented limits (2 s, 256 MiB), and the peak
// growth of this process's heap while it runs (in process) or the
// child's peak resident memory (child process).
func BenchmarkHostilePlugins(b *testing.B) {
	for _, mode := range []string{"inProcess", "childProcess"} {
		for _, h := range hostilePlugins {
			if h.childOnly && mode == "inProcess" {
				continue
			}
			b.Run(mode+"/"+h.name, func(b *testing.B) {
				root := b.TempDir()
				dir := filepath.Join(root, "plugins", "org", h.name)
				os.MkdirAll(dir, 0o755)
				os.WriteFile(filepath.Join(dir, "plugin.lua"), []byte(strings.Replace(strings.Replace(header, "%s", h.name, 1), "%s", h.name, 1)+h.body), 0o644)
				opts := Options{}
				var childRSS atomic.Int64
				if mode == "childProcess" {
					opts.Isolation = &ChildProcess{Executable: os.Args[0], started: func(pid int) {
						// Sample the child's resident memory until it ends.
						go func() {
							for {
								b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
								if err != nil {
									return
								}
								for _, line := range strings.Split(string(b), "\n") {
									if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
										var kb int64
										fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb)
										if kb<<10 > childRSS.Load() {
											childRSS.Store(kb << 10)
										}
									}
								}
								time.Sleep(time.Millisecond)
							}
						}()
					}}
				}
				var peak uint64
				for i := 0; i < b.N; i++ {
					runtime.GC()
					var base runtime.MemStats
					runtime.ReadMemStats(&base)
					done := make(chan struct{})
					maxHeap := base.HeapAlloc
					go func() {
						tk := time.NewTicker(time.Millisecond)
						defer tk.Stop()
						for {
							select {
							case <-done:
								return
							case <-tk.C:
								var ms runtime.MemStats
								runtime.ReadMemStats(&ms)
								maxHeap = max(maxHeap, ms.HeapAlloc)
							}
						}
					}()
					if _, err := Load(context.Background(), root, opts); err != nil {
						b.Fatal(err)
					}
					close(done)
					peak = max(peak, maxHeap-base.HeapAlloc)
				}
				if mode == "childProcess" {
					b.ReportMetric(float64(childRSS.Load())/(1<<20), "childPeakRSSMiB")
				} else {
					b.ReportMetric(float64(peak)/(1<<20), "peakHeapGrowthMiB")
				}
			})
		}
	}
}

// BenchmarkLoadThreePlugins is what running plugins costs a command: three
// small organization plugins, in process and in one child process.
func BenchmarkLoadThreePlugins(b *testing.B) {
	root := b.TempDir()
	for _, id := range []string{"a", "b", "c"} {
		dir := filepath.Join(root, "plugins", "org", id)
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "plugin.lua"), []byte(strings.Replace(strings.Replace(header, "%s", id, 1), "%s", id, 1)+
			`CONFIG["SETTINGS"]["DataConfidence.ConfidenceScheme"] = "TRUST_EUROPE"`+"\n"+`CONFIG["SETTINGS"]["web_search.maxResults"] = "7"`+"\n"), 0o644)
	}
	for _, mode := range []string{"inProcess", "childProcess"} {
		b.Run(mode, func(b *testing.B) {
			opts := Options{}
			if mode == "childProcess" {
				opts.Isolation = &ChildProcess{Executable: os.Args[0]}
			}
			for i := 0; i < b.N; i++ {
				eff, err := Load(context.Background(), root, opts)
				if err != nil || len(eff.Plugins) != 3 {
					b.Fatal(err, eff.Problems)
				}
			}
		})
	}
}
