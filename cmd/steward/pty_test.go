package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ptyTerm is the binary running on a pseudo-terminal: stdin, stdout and
// stderr are the terminal, as when a person runs it.
type ptyTerm struct {
	t    *testing.T
	cmd  *exec.Cmd
	tty  *os.File
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
	code int
}

func startOnTerminal(t *testing.T, home string, args ...string) *ptyTerm {
	t.Helper()
	cmd := stewardCmd(home, args...)
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 200})
	if err != nil {
		t.Fatalf("starting steward on a pseudo-terminal: %v", err)
	}
	tm := &ptyTerm{t: t, cmd: cmd, tty: tty, done: make(chan struct{})}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			tm.mu.Lock()
			tm.out.Write(buf[:n])
			tm.mu.Unlock()
			if err != nil {
				break
			}
		}
	}()
	go func() {
		err := cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			tm.code = ee.ExitCode()
		}
		close(tm.done)
	}()
	t.Cleanup(func() {
		select {
		case <-tm.done:
		default:
			_ = cmd.Process.Kill()
			<-tm.done
		}
		tty.Close()
	})
	return tm
}

// output is everything the terminal showed so far.
func (tm *ptyTerm) output() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.out.String()
}

// waitFor waits until the terminal shows s after the first from bytes.
func (tm *ptyTerm) waitFor(s string, from int) int {
	tm.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		out := tm.output()
		if from <= len(out) {
			if i := strings.Index(out[from:], s); i >= 0 {
				return from + i + len(s)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	tm.t.Fatalf("the terminal never showed %q; it shows:\n%q", s, tm.output())
	return 0
}

func (tm *ptyTerm) send(s string) {
	tm.t.Helper()
	if _, err := io.WriteString(tm.tty, s); err != nil {
		tm.t.Fatal(err)
	}
}

// wait waits for the process to exit and returns its exit code.
func (tm *ptyTerm) wait() int {
	tm.t.Helper()
	select {
	case <-tm.done:
	case <-time.After(30 * time.Second):
		tm.t.Fatalf("steward did not exit; the terminal shows:\n%q", tm.output())
	}
	// Let the reader take the last bytes.
	time.Sleep(50 * time.Millisecond)
	return tm.code
}

// onTerminal runs one command on a pseudo-terminal to its end.
func onTerminal(t *testing.T, home string, args ...string) (string, int) {
	t.Helper()
	tm := startOnTerminal(t, home, args...)
	code := tm.wait()
	return tm.output(), code
}

func compileSchema(t *testing.T, path string) func(string) error {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("event.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("event.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return func(line string) error {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
		if err != nil {
			return err
		}
		return s.Validate(v)
	}
}
