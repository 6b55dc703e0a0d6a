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
	"syscall"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/app"
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

// env is what a command reads and writes; tests give their own.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	// tweak adjusts the app's options; only in-process tests set it, to
	// inject a resolver and dialer that keep traffic on loopback.
	tweak func(*app.Options)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv})
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, e env) int {
	root := newRoot(e)
	root.SetArgs(args)
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		fmt.Fprintf(e.stderr, "steward: %v\nRun 'steward --help' for usage.\n", err)
		return exitUsage
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(e.stderr, "steward: cancelled")
		return exitFailure
	}
	fmt.Fprintf(e.stderr, "steward: %v\n", err)
	return exitFailure
}

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
