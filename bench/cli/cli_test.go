package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// buildSteward builds the command from the working tree once.
func buildSteward(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "steward")
	// Built in the product's own module, with its own dependencies.
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/steward")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building steward: %v\n%s", err, out)
	}
	return bin
}

func stewardEnv(c *corpus) []string {
	return []string{
		"HOME=" + c.home,
		"PATH=" + os.Getenv("PATH"),
		"STEWARD_CONFIG_DIR=" + filepath.Join(c.home, "config"),
		"STEWARD_DATA_DIR=" + filepath.Join(c.home, "data"),
		"STEWARD_NO_OLLAMA_PROBE=1",
		"DBUS_SESSION_BUS_ADDRESS=disabled:",
	}
}

// run runs steward with stdin and returns stdout; a failure stops the
// benchmark.
func run(b *testing.B, c *corpus, steward, stdin string, args ...string) string {
	b.Helper()
	cmd := exec.Command(steward, args...)
	cmd.Env = stewardEnv(c)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		b.Fatalf("steward %v: %v\n%s", args, err, errb.String())
	}
	return out.String()
}

func notmuch(b *testing.B, c *corpus, args ...string) string {
	b.Helper()
	cmd := exec.Command("notmuch", args...)
	cmd.Env = []string{"NOTMUCH_CONFIG=" + filepath.Join(c.dir, "notmuch-config"), "HOME=" + c.home, "PATH=" + os.Getenv("PATH")}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		b.Fatalf("notmuch %v: %v\n%s", args, err, errb.String())
	}
	return out.String()
}

// BenchmarkCLI runs, per iteration, one process per query over the
// corpus: steward mail search (text, --json, and --tool-json, the model's
// filtered view), notmuch search (its default summary, and --format=json),
// and steward --help. The sub-benchmarks run
// interleaved within one process; ms/query is the median wall time of one
// process, which is what a user waits for.
//
//	cd bench && go test -run '^$' -bench CLI -benchtime 5x -count 3 ./cli/
func BenchmarkCLI(b *testing.B) {
	if _, err := exec.LookPath("notmuch"); err != nil {
		if os.Getenv("CI") != "" {
			b.Fatal("notmuch is not installed (apt-get install notmuch)")
		}
		b.Skip("notmuch is not installed (apt-get install notmuch)")
	}
	steward := buildSteward(b)
	c := buildCorpus(b, steward)
	// Each side's answer is checked once: both must find mails.
	for _, q := range c.queries {
		s := run(b, c, steward, "", "mail", "search", "--limit", "20", q)
		nm := notmuch(b, c, "search", "--limit=20", q)
		if strings.TrimSpace(s) == "" || strings.TrimSpace(nm) == "" {
			b.Fatalf("query %q: steward found %d bytes, notmuch %d", q, len(s), len(nm))
		}
	}
	sides := []struct {
		name string
		cmd  func(q string) *exec.Cmd
	}{
		{"tool=steward/format=text", func(q string) *exec.Cmd { return stewardCmd(steward, c, "mail", "search", "--limit", "20", q) }},
		{"tool=notmuch/format=text", func(q string) *exec.Cmd { return notmuchCmd(c, "search", "--limit=20", q) }},
		{"tool=steward/format=json", func(q string) *exec.Cmd {
			return stewardCmd(steward, c, "mail", "search", "--limit", "20", "--json", q)
		}},
		{"tool=notmuch/format=json", func(q string) *exec.Cmd { return notmuchCmd(c, "search", "--limit=20", "--format=json", q) }},
		// What a model gets from search_mails: filtered for prompt injections.
		{"tool=steward/format=tool-json", func(q string) *exec.Cmd {
			return stewardCmd(steward, c, "mail", "search", "--limit", "20", "--tool-json", q)
		}},
		{"tool=steward/help", func(string) *exec.Cmd { return stewardCmd(steward, c, "--help") }},
	}
	for _, s := range sides {
		b.Run(s.name, func(b *testing.B) {
			var times []time.Duration
			for b.Loop() {
				for _, q := range c.queries {
					cmd := s.cmd(q)
					t0 := time.Now()
					if out, err := cmd.CombinedOutput(); err != nil {
						b.Fatalf("%v: %v\n%s", cmd.Args, err, out)
					}
					times = append(times, time.Since(t0))
				}
			}
			sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms/query")
			b.ReportMetric(float64(times[len(times)*9/10].Microseconds())/1000, "p90-ms/query")
			b.ReportMetric(0, "ns/op")
		})
	}
}

func stewardCmd(bin string, c *corpus, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Env = stewardEnv(c)
	return cmd
}

func notmuchCmd(c *corpus, args ...string) *exec.Cmd {
	cmd := exec.Command("notmuch", args...)
	cmd.Env = []string{"NOTMUCH_CONFIG=" + filepath.Join(c.dir, "notmuch-config"), "HOME=" + c.home, "PATH=" + os.Getenv("PATH")}
	return cmd
}
