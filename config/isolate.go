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
	// exited, when set, sees each child's state after it ended (tests
	// read its peak memory from it).
	exited func(*os.ProcessState)
}

// IsChild reports whether this process was started by ChildProcess to run
// a plugin.
func IsChild() bool { return os.Getenv(SandboxEnv) == "1" }

type childRequest struct {
	Path   string
	Limits Limits
}

type childReply struct {
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

// ServeChild reads one request from stdin, runs the plugin in this process
// under its limits and writes the result to stdout. It returns the exit
// code for the process.
func ServeChild(stdin io.Reader, stdout io.Writer) int {
	var req childRequest
	if err := gob.NewDecoder(io.LimitReader(stdin, 1<<16)).Decode(&req); err != nil {
		fmt.Fprintf(os.Stderr, "plugin sandbox: reading the request: %v\n", err)
		return 2
	}
	lim := req.Limits.withDefaults()
	limitAddressSpace(lim.Memory)
	globals, err := runLua(context.Background(), req.Path, lim)
	rep := childReply{Globals: map[string]wireValue{}}
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
	if err := gob.NewEncoder(stdout).Encode(rep); err != nil {
		fmt.Fprintf(os.Stderr, "plugin sandbox: writing the result: %v\n", err)
		return 2
	}
	return 0
}

// cappedBuffer keeps at most max bytes and remembers that more came.
type cappedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); len(p) > room {
		c.over = true
		if room > 0 {
			c.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return c.Buffer.Write(p)
}

// run starts the child for one plugin and waits for it, for at most the
// time limit.
func (c *ChildProcess) run(ctx context.Context, path string, lim Limits) (map[string]any, error) {
	lim = lim.withDefaults()
	var req bytes.Buffer
	if err := gob.NewEncoder(&req).Encode(childRequest{Path: path, Limits: lim}); err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithTimeout(ctx, lim.Time)
	defer cancel()
	cmd := exec.CommandContext(runCtx, c.Executable)
	// Only the marker: a plugin needs nothing from the environment, and
	// the child never sees a secret of the parent's.
	cmd.Env = []string{SandboxEnv + "=1"}
	cmd.Stdin = &req
	out := &cappedBuffer{max: maxChildOutput}
	errOut := &cappedBuffer{max: 16 << 10}
	cmd.Stdout, cmd.Stderr = out, errOut
	cmd.WaitDelay = 500 * time.Millisecond
	err := cmd.Run()
	if c.exited != nil && cmd.ProcessState != nil {
		c.exited(cmd.ProcessState)
	}
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case runCtx.Err() != nil:
		return nil, ErrTimeLimit
	case err != nil:
		if strings.Contains(errOut.String(), "out of memory") || strings.Contains(errOut.String(), "cannot allocate memory") {
			return nil, ErrMemoryLimit
		}
		first, _, _ := strings.Cut(strings.TrimSpace(errOut.String()), "\n")
		return nil, fmt.Errorf("the plugin's sandbox process failed (%v): %s", err, first)
	case out.over:
		return nil, fmt.Errorf("the plugin's configuration is larger than %d bytes", maxChildOutput)
	}
	var rep childReply
	if err := gob.NewDecoder(&out.Buffer).Decode(&rep); err != nil {
		return nil, fmt.Errorf("reading the result of the plugin's sandbox process: %w", err)
	}
	switch rep.Kind {
	case "time":
		return nil, ErrTimeLimit
	case "memory":
		return nil, ErrMemoryLimit
	}
	if rep.Err != "" {
		return nil, errors.New(rep.Err)
	}
	globals := make(map[string]any, len(rep.Globals))
	for k, w := range rep.Globals {
		if v := fromWire(w); v != nil {
			globals[k] = v
		}
	}
	return globals, nil
}
