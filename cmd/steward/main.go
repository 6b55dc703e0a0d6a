package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/app"
	"github.com/stewardhq/steward/config"
	"github.com/stewardhq/steward/redact"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// usageError marks a mistake in how the command was called.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// exitInterrupted is the exit code after Ctrl-C, as shells report it.
const exitInterrupted = 130

// env is what a command reads and writes; tests give their own.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// rawStderr is the terminal itself, for the progress bar of mail sync,
	// which draws with control characters; nil means stderr.
	rawStderr io.Writer
	getenv    func(string) string
	// tweak adjusts the app's options; only in-process tests set it, to
	// inject a resolver and dialer that keep traffic on loopback.
	tweak func(*app.Options)
	// secrets are redacted from everything written to stdout and stderr
	// and from what is stored; the app adds each secret it reads.
	secrets *redact.Set
	// flush writes out what the output filters hold back (part of what
	// could be a secret, half a character); nil does nothing.
	flush func()
	// stdinPiped is true when stdin is a pipe or a file, whose text joins
	// the prompt of `ask`.
	stdinPiped bool
	// stdinTerminal is true when stdin is a terminal: `chat` then edits
	// lines and keeps a history.
	stdinTerminal bool
	// interrupts, when not nil, routes Ctrl-C: while handle is set it calls
	// it instead of ending the command (chat stops the answer only).
	interrupts *interrupts
	// plugins runs configuration plugins in a child process; nil runs them
	// in this process (in-process tests).
	plugins *config.ChildProcess
	// started holds the apps that started MCP servers, stopped when the
	// command ends; run sets it.
	started *startedApps
}

// interrupts routes SIGINT to the current handler, or ends the command.
type interrupts struct {
	mu      sync.Mutex
	handler func()
}

// handle makes f receive Ctrl-C until the returned function is called.
func (i *interrupts) handle(f func()) (restore func()) {
	if i == nil {
		return func() {}
	}
	i.mu.Lock()
	i.handler = f
	i.mu.Unlock()
	return func() {
		i.mu.Lock()
		i.handler = nil
		i.mu.Unlock()
	}
}

// take runs the current handler and reports whether there was one.
func (i *interrupts) take() bool {
	i.mu.Lock()
	f := i.handler
	i.mu.Unlock()
	if f == nil {
		return false
	}
	f()
	return true
}

func main() {
	if config.IsChild() {
		// Started by ourselves to run one configuration plugin.
		os.Exit(config.ServeChild(os.Stdin, os.Stdout))
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	intr := &interrupts{}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		for sig := range sigs {
			if sig == os.Interrupt && intr.take() {
				continue
			}
			if ctx.Err() != nil {
				// A second Ctrl-C while Steward winds down ends it at once.
				os.Exit(exitInterrupted)
			}
			cancel(errInterrupted)
		}
	}()
	secrets := &redact.Set{}
	var out, errw io.Writer = os.Stdout, os.Stderr
	var flushers []interface{ Flush() error }
	// Redaction first, on the text as it is; then, on a terminal, control
	// characters are made visible.
	if isTerminal(os.Stdout) {
		tw := &termWriter{w: os.Stdout}
		out, flushers = tw, append(flushers, tw)
	}
	if isTerminal(os.Stderr) {
		tw := &termWriter{w: os.Stderr}
		errw, flushers = tw, append(flushers, tw)
	}
	rout, rerr := redact.NewWriter(secrets, out), redact.NewWriter(secrets, errw)
	flushers = append([]interface{ Flush() error }{rout, rerr}, flushers...)
	flush := func() {
		for _, f := range flushers {
			_ = f.Flush()
		}
	}
	e := env{stdin: os.Stdin, stdout: rout, stderr: rerr, rawStderr: os.Stderr, getenv: os.Getenv, secrets: secrets, flush: flush,
		stdinPiped: isPipe(os.Stdin), stdinTerminal: isTerminal(os.Stdin), interrupts: intr, tweak: testNetwork(os.Getenv)}
	if exe, err := os.Executable(); err == nil {
		e.plugins = &config.ChildProcess{Executable: exe}
	}
	code := run(ctx, os.Args[1:], e)
	flush()
	signal.Stop(sigs)
	os.Exit(code)
}

// errInterrupted is the cause of a context ended by Ctrl-C or SIGTERM.
var errInterrupted = errors.New("interrupted")

// isPipe reports whether f is a pipe or a regular file (not a terminal and
// not /dev/null), i.e. whether something was piped or redirected into it.
func isPipe(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	m := fi.Mode()
	return m&os.ModeNamedPipe != 0 || m.IsRegular()
}

func run(ctx context.Context, args []string, e env) int {
	if e.secrets == nil {
		e.secrets = &redact.Set{}
	}
	if e.started == nil {
		e.started = &startedApps{}
	}
	defer e.started.stop()
	root := newRoot(e)
	root.SetArgs(args)
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	err := root.ExecuteContext(ctx)
	if e.flush != nil {
		defer e.flush()
	}
	if err == nil {
		return exitOK
	}
	// Every error is printed here, once, without any secret in it.
	err = e.secrets.Error(err)
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		fmt.Fprintf(e.stderr, "steward: %v\nRun 'steward --help' for usage.\n", err)
		return exitUsage
	}
	var pe printedError
	if errors.As(err, &pe) {
		return pe.code
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(e.stderr, "steward: interrupted")
		return exitInterrupted
	}
	fmt.Fprintf(e.stderr, "steward: %v\n", err)
	return exitFailure
}

// printedError ends a command whose error was already shown to the user
// (chat says why it ends); run only exits with code.
type printedError struct{ code int }

func (p printedError) Error() string { return fmt.Sprintf("exit %d", p.code) }

func newRoot(e env) *cobra.Command {
	root := &cobra.Command{
		Use:   "steward",
		Short: "Let a language model use local tools safely",
		Long: `Steward lets a language model use local tools — web search, reading web pages,
your mail — through one tool-calling loop for every provider API, under rules
that keep each piece of data where your organization allows it.`,
		Example: `  steward ask "What is new in Go 1.26?" --tools web_search,read_web_page
  echo "Summarize this" | steward ask -
  steward chat
  steward tools --provider ollama`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.PersistentFlags().String("config-dir", "", "configuration directory (default $STEWARD_CONFIG_DIR or $XDG_CONFIG_HOME/steward)")
	root.PersistentFlags().String("data-dir", "", "data directory for chats and the mail index (default $STEWARD_DATA_DIR or $XDG_DATA_HOME/steward)")
	root.PersistentFlags().Bool("debug", false, "write diagnostics to stderr")
	root.Version = version()
	root.SetVersionTemplate("steward {{.Version}}\n")
	root.AddCommand(newAskCmd(e), newChatCmd(e), newChatsCmd(e), newToolsCmd(e), newProvidersCmd(e), newSettingsCmd(e), newConfigCmd(e))
	for _, c := range extraCommands(e) {
		root.AddCommand(c)
	}
	addConfigCommands(root, e)
	refuseUnknownSubcommands(root)
	return root
}

// refuseUnknownSubcommands makes every command that only groups others
// (mail, config…) refuse an argument that names none of them, as a usage
// error, instead of printing its help with exit 0.
func refuseUnknownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		refuseUnknownSubcommands(sub)
	}
	if !c.HasSubCommands() || c.Runnable() || c.Args != nil || c == c.Root() {
		return
	}
	c.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		var names []string
		for _, s := range cmd.Commands() {
			if s.IsAvailableCommand() {
				names = append(names, s.Name())
			}
		}
		return usagef("unknown command %q for %q: use one of %s", args[0], cmd.CommandPath(), strings.Join(names, ", "))
	}
	c.RunE = func(cmd *cobra.Command, args []string) error { return cmd.Help() }
}

// buildVersion is set at link time (-ldflags "-X main.buildVersion=v1.2.3");
// otherwise the module version or the VCS revision is used.
var buildVersion string

// version says which build this is.
func version() string {
	if buildVersion != "" {
		return buildVersion
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown version)"
	}
	v := info.Main.Version
	var rev, modified, when string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+dirty"
			}
		case "vcs.time":
			when = s.Value
		}
	}
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	if rev != "" && !strings.Contains(v, rev[:min(12, len(rev))]) {
		v += " (" + rev[:min(12, len(rev))] + modified
		if when != "" {
			v += ", " + when
		}
		v += ")"
	}
	return v + " " + info.GoVersion
}

// isCobraUsage recognizes cobra's own argument errors.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "requires at least", "requires at most", "invalid argument", "flag needs an argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
