package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/chzyer/readline"
)

// errLineInterrupted is returned by ReadLine after Ctrl-C, with what had
// been typed.
var errLineInterrupted = errors.New("interrupted")

// lineReader reads the lines of `steward chat`: with line editing and a
// history on a terminal, plainly from a pipe.
type lineReader interface {
	// ReadLine shows prompt and returns the next line; io.EOF at the end
	// of input (Ctrl-D), errLineInterrupted after Ctrl-C.
	ReadLine(ctx context.Context, prompt string) (string, error)
	Close() error
}

// maxHistory is how many lines the chat history keeps.
const maxHistory = 1000

func newLineReader(e env, historyPath string) (lineReader, error) {
	if !e.stdinTerminal {
		return newPlainReader(e), nil
	}
	return newTerminalReader(e, historyPath)
}

// plainReader reads lines from a pipe. A line is read in the background, so
// that Ctrl-C (a signal here) ends the wait.
type plainReader struct {
	e     env
	lines chan lineOrErr
}

type lineOrErr struct {
	line string
	err  error
}

func newPlainReader(e env) *plainReader {
	r := &plainReader{e: e, lines: make(chan lineOrErr)}
	go func() {
		sc := bufio.NewScanner(e.stdin)
		sc.Buffer(make([]byte, 64*1024), maxStdin)
		for sc.Scan() {
			r.lines <- lineOrErr{line: sc.Text()}
		}
		err := sc.Err()
		if err == nil {
			err = io.EOF
		}
		r.lines <- lineOrErr{err: err}
		close(r.lines)
	}()
	return r
}

func (r *plainReader) ReadLine(ctx context.Context, prompt string) (string, error) {
	fmt.Fprint(r.e.stderr, prompt)
	intr := make(chan struct{}, 1)
	restore := r.e.interrupts.handle(func() { intr <- struct{}{} })
	defer restore()
	select {
	case l, ok := <-r.lines:
		if !ok {
			return "", io.EOF
		}
		return l.line, l.err
	case <-intr:
		return "", errLineInterrupted
	case <-ctx.Done():
		return "", errLineInterrupted
	}
}

func (r *plainReader) Close() error { return nil }

// terminalReader edits lines with github.com/chzyer/readline: Emacs keys,
// the arrow keys through the history, Ctrl-R to search it. The history is
// kept in a file only the user can read (readline's own history file would
// be rewritten with the umask's permissions).
type terminalReader struct {
	e       env
	rl      *readline.Instance
	history *os.File
}

func newTerminalReader(e env, historyPath string) (*terminalReader, error) {
	errw := e.rawStderr
	if errw == nil {
		errw = e.stderr
	}
	rl, err := readline.NewEx(&readline.Config{
		Prompt:                 "> ",
		HistoryLimit:           maxHistory,
		DisableAutoSaveHistory: true,
		HistorySearchFold:      true,
		Stdout:                 errw,
		Stderr:                 errw,
		FuncIsTerminal:         func() bool { return true },
	})
	if err != nil {
		return nil, fmt.Errorf("starting line editing: %w", err)
	}
	r := &terminalReader{e: e, rl: rl}
	if historyPath != "" {
		r.loadHistory(historyPath)
	}
	return r, nil
}

func (r *terminalReader) loadHistory(path string) {
	if b, err := os.ReadFile(path); err == nil {
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		if len(lines) > maxHistory {
			lines = lines[len(lines)-maxHistory:]
		}
		for _, l := range lines {
			if l != "" {
				_ = r.rl.SaveHistory(l)
			}
		}
	}
	if err := createPrivateFile(path); err == nil {
		r.history, _ = os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o600)
	}
}

func (r *terminalReader) ReadLine(ctx context.Context, prompt string) (string, error) {
	r.rl.SetPrompt(prompt)
	// A SIGINT that arrives while the line is read (from kill, say; the key
	// itself reaches readline as a key) ends the wait like Ctrl-C.
	restore := r.e.interrupts.handle(func() { _ = r.rl.Close() })
	defer restore()
	line, err := r.rl.Readline()
	switch {
	case errors.Is(err, readline.ErrInterrupt):
		return line, errLineInterrupted
	case err != nil:
		if ctx.Err() != nil {
			return "", errLineInterrupted
		}
		return line, err
	}
	if strings.TrimSpace(line) != "" {
		_ = r.rl.SaveHistory(line)
		if r.history != nil && !strings.Contains(line, "\n") {
			fmt.Fprintln(r.history, line)
		}
	}
	return line, nil
}

func (r *terminalReader) Close() error {
	if r.history != nil {
		r.history.Close()
	}
	return r.rl.Close()
}

// createPrivateFile creates path readable only by the user, unless it
// exists, and makes it so if it does.
func createPrivateFile(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	f.Close()
	return os.Chmod(path, 0o600)
}
