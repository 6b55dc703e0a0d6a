package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// inheritedEnv are the variables of Steward's environment a stdio server
// gets: enough to find programs, a home, a temporary directory and the
// locale. Provider keys, the configuration secret and everything else stay
// with Steward; a server that needs a variable names it in its env.
var inheritedEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ",
	"TMPDIR", "TMP", "TEMP", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR",
	"SYSTEMROOT", "WINDIR", "APPDATA", "LOCALAPPDATA", "PROGRAMDATA", "USERPROFILE", "COMSPEC", "PATHEXT"}

// childEnv builds the environment of a stdio server.
func childEnv(getenv func(string) string, own map[string]string) []string {
	if getenv == nil {
		getenv = os.Getenv
	}
	var env []string
	for _, k := range inheritedEnv {
		if _, mine := own[k]; mine {
			continue
		}
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	for k, v := range own {
		env = append(env, k+"="+v)
	}
	return env
}

// stderrTail keeps the last bytes a server wrote to its standard error,
// for `steward mcp check`; it is never logged.
type stderrTail struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.ToValidUTF8(string(t.buf), "\uFFFD")
}

// process is a running stdio server: Steward's child in a process group of
// its own, so that stopping it also stops what it started (npx starts node).
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr *stderrTail
	done   chan struct{}
	err    error // of Wait, once done is closed
	// stoppedByUs is set before done closes: Steward had begun to stop it.
	stoppedByUs bool

	closeOnce sync.Once
	// stopping is set once Steward began to stop the process, so that its
	// end is not taken for a crash.
	stopping atomic.Bool
}

// startProcess starts command with args and env as a server.
func startProcess(command string, args, env []string, stderr *stderrTail) (*process, error) {
	cmd := exec.Command(command, args...)
	cmd.Env = env
	cmd.Stderr = stderr
	setProcessGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		var ee *exec.Error
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("the command %q cannot be started: %w (is it installed and on PATH?)", command, ee.Err)
		}
		return nil, fmt.Errorf("the command %q cannot be started: %w", command, err)
	}
	p := &process{cmd: cmd, stdin: stdin, stdout: stdout, stderr: stderr, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		p.stoppedByUs = p.stopping.Load()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process ended on its own, and how; a
// process Steward is stopping counts as not exited.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		// A process Steward stopped ends with status 0 or by a signal; one
		// that failed on its own says so with its exit code.
		var ee *exec.ExitError
		if p.stoppedByUs && (p.err == nil || errors.As(p.err, &ee) && ee.ExitCode() == -1) {
			return false, nil
		}
		return true, p.err
	default:
		return false, nil
	}
}

// stop ends the process: stdin is closed (the protocol's way to ask a
// server to exit), then its group gets SIGTERM after a grace period and
// SIGKILL after another. Only this process group is signalled.
func (p *process) stop() {
	p.closeOnce.Do(func() {
		p.stopping.Store(true)
		_ = p.stdin.Close()
		select {
		case <-p.done:
			return
		case <-time.After(2 * time.Second):
		}
		terminate(p.cmd)
		select {
		case <-p.done:
			return
		case <-time.After(2 * time.Second):
		}
		kill(p.cmd)
		<-p.done
	})
}

// procWriter closes the whole process when the connection closes.
type procWriter struct{ p *process }

func (w procWriter) Write(b []byte) (int, error) { return w.p.stdin.Write(b) }
func (w procWriter) Close() error                { w.p.stop(); return nil }

// procTransport connects to a started process over newline-delimited JSON
// on its stdin and stdout, with a bound on the size of one message.
type procTransport struct{ p *process }

func (t procTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	it := &mcp.IOTransport{Reader: t.p.stdout, Writer: procWriter(t), MaxLineLength: MaxFrameBytes}
	return it.Connect(ctx)
}

// exitedWithin waits up to d for the process to end, as it does right
// after its stream closed, and then reports as exited does.
func (p *process) exitedWithin(d time.Duration) (bool, error) {
	select {
	case <-p.done:
	case <-time.After(d):
	}
	return p.exited()
}
