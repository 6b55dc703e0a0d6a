package config

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/capped"
)

// SandboxEnv is the environment variable that makes a program started by
// ChildProcess run one plugin instead of its usual work (see ServeChild).
const SandboxEnv = "STEWARD_PLUGIN_SANDBOX"

// maxChildOutput caps what a plugin's child process may send back: the
// globals of a configuration plugin are a few kilobytes.
const maxChildOutput = 16 << 20

// ChildProcess runs each plugin in a child process, which can be stopped at
// any instruction: the parent kills it when the time limit passes or the
// context ends (Ctrl-C), and the kernel refuses the child memory beyond
// its limit, so no plugin can hang or crash the parent, not even with a
// single operation that runs or allocates without end.
type ChildProcess struct {
	// Executable is the program to start, usually os.Executable(). Its
	// main must call ServeChild first thing when IsChild reports true.
	Executable string
	// started, when set, is told each child's process ID (benchmarks
	// sample its memory).
	started func(pid int)
}

// IsChild reports whether this process was started by ChildProcess to run
// a plugin.
func IsChild() bool { return os.Getenv(SandboxEnv) == "1" }

type childRequest struct {
	Paths  []string
	Limits Limits
}

type childReply struct {
	// Ready is the child's first reply: it started and runs the plugins
	// now, so the time limit of the first one starts here.
	Ready   bool
	Index   int
	Globals map[string]wireValue
	Err     string
	// Kind is "time", "memory" or "" for a Lua error.
	Kind string
}

// wireValue carries one converted Lua value (see toGo) between the
// processes without gob's registry of interface types.
type wireValue struct {
	Kind byte // 's', 'n', 'b', 'l' (list) or 'm' (map)
	S    string
	N    float64
	B    bool
	List []wireValue
	Map  map[string]wireValue
}

func toWire(v any) wireValue {
	switch x := v.(type) {
	case string:
		return wireValue{Kind: 's', S: x}
	case float64:
		return wireValue{Kind: 'n', N: x}
	case bool:
		return wireValue{Kind: 'b', B: x}
	case []any:
		w := wireValue{Kind: 'l', List: make([]wireValue, len(x))}
		for i, e := range x {
			w.List[i] = toWire(e)
		}
		return w
	case map[string]any:
		w := wireValue{Kind: 'm', Map: make(map[string]wireValue, len(x))}
		for k, e := range x {
			w.Map[k] = toWire(e)
		}
		return w
	}
	return wireValue{}
}

func fromWire(w wireValue) any {
	switch w.Kind {
	case 's':
		return w.S
	case 'n':
		return w.N
	case 'b':
		return w.B
	case 'l':
		out := make([]any, len(w.List))
		for i, e := range w.List {
			out[i] = fromWire(e)
		}
		return out
	case 'm':
		out := make(map[string]any, len(w.Map))
		for k, e := range w.Map {
			out[k] = fromWire(e)
		}
		return out
	}
	return nil
}

// ServeChild reads one request from stdin, runs its plugins one after the
// other in this process under their limits and writes each result to
// stdout as soon as it has it. It returns the exit code for the process.
func ServeChild(stdin io.Reader, stdout io.Writer) int {
	var req childRequest
	if err := gob.NewDecoder(io.LimitReader(stdin, 1<<20)).Decode(&req); err != nil {
		fmt.Fprintf(os.Stderr, "plugin sandbox: reading the request: %v\n", err)
		return 2
	}
	lim := req.Limits.withDefaults()
	limitAddressSpace(lim.Memory)
	enc := gob.NewEncoder(stdout)
	if err := enc.Encode(childReply{Ready: true}); err != nil {
		return 2
	}
	for i, path := range req.Paths {
		globals, err := runLua(context.Background(), path, lim)
		rep := childReply{Index: i, Globals: map[string]wireValue{}}
		for k, v := range globals {
			rep.Globals[k] = toWire(v)
		}
		switch {
		case errors.Is(err, ErrTimeLimit):
			rep.Kind = "time"
		case errors.Is(err, ErrMemoryLimit):
			rep.Kind = "memory"
		case err != nil:
			rep.Err = err.Error()
		}
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(os.Stderr, "plugin sandbox: writing the result: %v\n", err)
			return 2
		}
	}
	return 0
}

// cappedBuffer keeps at most max bytes.
type cappedBuffer struct {
	bytes.Buffer
	max int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); len(p) > room {
		if room > 0 {
			c.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return c.Buffer.Write(p)
}

// runResult is what running one plugin left: its globals or why not.
type runResult struct {
	globals map[string]any
	err     error
}

// childStartTimeout bounds how long a child may take to start before its
// first plugin's time begins.
const childStartTimeout = 10 * time.Second

// runAll runs the plugins in one child process, one after the other, each
// within the time limit. When a plugin has to be stopped (time, memory,
// a crash), the child is killed and a new one runs the plugins after it.
// When no child can be started at all, the plugins run in this process.
func (c *ChildProcess) runAll(ctx context.Context, paths []string, lim Limits) []runResult {
	lim = lim.withDefaults()
	out := make([]runResult, len(paths))
	for next := 0; next < len(paths); {
		if err := ctx.Err(); err != nil {
			for ; next < len(paths); next++ {
				out[next] = runResult{err: err}
			}
			break
		}
		n, err := c.runBatch(ctx, paths[next:], lim, out[next:])
		next += n
		if next < len(paths) {
			out[next] = runResult{err: err}
			next++
		}
	}
	return out
}

// runBatch starts one child for paths and fills out with its results. It
// returns how many it filled; the plugin after those, if any, failed with
// the error returned.
func (c *ChildProcess) runBatch(ctx context.Context, paths []string, lim Limits, out []runResult) (int, error) {
	var req bytes.Buffer
	if err := gob.NewEncoder(&req).Encode(childRequest{Paths: paths, Limits: lim}); err != nil {
		return 0, err
	}
	cmd := exec.Command(c.Executable)
	// Only the marker: a plugin needs nothing from the environment, and
	// the child never sees a secret of the parent's.
	cmd.Env = []string{SandboxEnv + "=1"}
	cmd.Stdin = &req
	errOut := &cappedBuffer{max: 16 << 10}
	cmd.Stderr = errOut
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		// No child (the executable is gone or not allowed to run): the
		// limits still hold inside the library functions in process.
		for i, p := range paths {
			g, err := runLua(ctx, p, lim)
			out[i] = runResult{globals: g, err: err}
		}
		return len(paths), nil
	}
	if c.started != nil {
		c.started(cmd.Process.Pid)
	}
	exited := false
	wait := func() {
		if !exited {
			exited = true
			cmd.Wait()
		}
	}
	kill := func() {
		cmd.Process.Kill()
		wait()
	}
	// One channel for the replies and the end, so that the end is seen
	// only after every reply before it.
	type message struct {
		reply childReply
		err   error
	}
	messages := make(chan message, len(paths)+2)
	go func() {
		// io.LimitReader would answer io.EOF, indistinguishable from the
		// child's end.
		dec := gob.NewDecoder(&capped.Reader{R: stdout, N: maxChildOutput, Err: errTooLarge})
		for {
			var r childReply
			if err := dec.Decode(&r); err != nil {
				messages <- message{err: err}
				return
			}
			messages <- message{reply: r}
		}
	}()
	timer := time.NewTimer(childStartTimeout)
	defer timer.Stop()
	filled, ready := 0, false
	for filled < len(paths) {
		var m message
		select {
		case m = <-messages:
		case <-timer.C:
			kill()
			if !ready {
				return filled, fmt.Errorf("the plugin sandbox process did not start within %v", childStartTimeout)
			}
			return filled, ErrTimeLimit
		case <-ctx.Done():
			kill()
			return filled, ctx.Err()
		}
		if m.err == nil {
			timer.Reset(lim.Time)
			if m.reply.Ready {
				ready = true
			} else {
				out[filled] = m.reply.result()
				filled++
			}
			continue
		}
		if errors.Is(m.err, errTooLarge) {
			kill()
			return filled, fmt.Errorf("the plugin's configuration is larger than the %d bytes a plugin may hand over", maxChildOutput)
		}
		// The child ended before it answered for this plugin: the kernel
		// refused it memory, or it crashed.
		wait()
		msg := errOut.String()
		for _, oom := range []string{"out of memory", "cannot allocate memory", "failed to allocate"} {
			if strings.Contains(msg, oom) {
				// The Go runtime (or the race detector's) was refused
				// memory beyond the address-space limit.
				return filled, ErrMemoryLimit
			}
		}
		first, _, _ := strings.Cut(strings.TrimSpace(msg), "\n")
		return filled, fmt.Errorf("the plugin's sandbox process ended without an answer (%v, %v): %s", cmd.ProcessState, m.err, first)
	}
	wait()
	return filled, nil
}

var errTooLarge = errors.New("too much output")

func (r childReply) result() runResult {
	switch r.Kind {
	case "time":
		return runResult{err: ErrTimeLimit}
	case "memory":
		return runResult{err: ErrMemoryLimit}
	}
	if r.Err != "" {
		return runResult{err: errors.New(r.Err)}
	}
	globals := make(map[string]any, len(r.Globals))
	for k, w := range r.Globals {
		if v := fromWire(w); v != nil {
			globals[k] = v
		}
	}
	return runResult{globals: globals}
}
