package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
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
	// started holds the apps that started MCP servers, stopped when the
	// command ends; run sets it.
	started *startedApps
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, tweak: testNetwork(os.Getenv)})
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, e env) int {
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
	root.AddCommand(newAskCmd(e), newChatCmd(e), newChatsCmd(e), newToolsCmd(e), newProvidersCmd(e), newSettingsCmd(e), newConfigCmd(e))
	for _, c := range extraCommands(e) {
		root.AddCommand(c)
	}
	return root
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
