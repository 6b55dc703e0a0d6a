package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/app"
	"github.com/stewardhq/steward/llm"
	"github.com/stewardhq/steward/loop"
)

func openApp(cmd *cobra.Command, e env) (*app.App, error) {
	cfgDir, _ := cmd.Flags().GetString("config-dir")
	dataDir, _ := cmd.Flags().GetString("data-dir")
	debug, _ := cmd.Flags().GetBool("debug")
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if debug || e.getenv("STEWARD_DEBUG") != "" {
		logger = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	opts := app.Options{ConfigDir: cfgDir, DataDir: dataDir, Getenv: e.getenv, Logger: logger, Secrets: e.secrets, PluginIsolation: e.plugins, SkipMCPServers: !offersTools(cmd), OneShot: oneShot(cmd),
		OnRetry: func(n llm.RetryNotice) { fmt.Fprintf(e.stderr, "steward: %s\n", n) }}
	if e.tweak != nil {
		e.tweak(&opts)
	}
	a, err := app.Open(cmd.Context(), opts)
	if err != nil {
		return nil, err
	}
	// Every command says which plugins it skipped and which security
	// settings it counts as strictest; `config check` lists them itself.
	if cmd.CommandPath() != "steward config check" {
		for _, n := range a.Notices() {
			fmt.Fprintf(e.stderr, "steward: configuration: %s\n", n)
		}
	}
	if !opts.SkipMCPServers {
		e.started.add(a)
		reportMCP(e, a)
	}
	return a, nil
}

// oneShot reports whether cmd answers one query from the local indexes
// and exits, so that a small page cache serves it better than a large one.
func oneShot(cmd *cobra.Command) bool {
	switch cmd.CommandPath() {
	case "steward mail search", "steward mail count", "steward mail status", "steward sources search":
		return true
	}
	return false
}

func addProviderFlags(cmd *cobra.Command) {
	cmd.Flags().StringP("provider", "p", "", "provider kind (openai, anthropic, ollama, …) or the ID of a configured provider")
	cmd.Flags().StringP("model", "m", "", "model name (default: $STEWARD_MODEL or the provider's default)")
	cmd.Flags().String("base-url", "", "base URL of the provider's API, e.g. http://127.0.0.1:8080/v1/")
	cmd.Flags().String("api", "", "wire API for OpenAI: chat_completions or responses")
}

func providerFlags(cmd *cobra.Command) app.ProviderFlags {
	var f app.ProviderFlags
	f.Provider, _ = cmd.Flags().GetString("provider")
	f.Model, _ = cmd.Flags().GetString("model")
	f.BaseURL, _ = cmd.Flags().GetString("base-url")
	f.API, _ = cmd.Flags().GetString("api")
	return f
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// textSink streams the answer to stdout and tool activity to stderr. An
// error is not written here: the command prints it once when it ends.
type textSink struct {
	out, errw io.Writer
	// flush, when not nil, writes out what the output filters held back,
	// at the end of an answer.
	flush func()
}

func (s textSink) Emit(ev loop.Event) {
	switch ev.Type {
	case loop.EventText:
		fmt.Fprint(s.out, ev.Text)
	case loop.EventToolCall:
		fmt.Fprintf(s.errw, "\n[tool] %s …\n", ev.Call.Name)
	case loop.EventTrace:
		t := ev.Trace
		if t.Status == loop.StatusSuccess {
			fmt.Fprintf(s.errw, "[tool] %s: done\n", t.Name)
		} else {
			fmt.Fprintf(s.errw, "[tool] %s: %s — %s\n", t.Name, t.Status, t.StatusMessage)
		}
	case loop.EventSources:
		if text := loop.RenderSources(ev.Sources); text != "" {
			fmt.Fprintln(s.out)
			fmt.Fprintln(s.errw, strings.TrimLeft(text, "\n"))
		}
	case loop.EventFilter:
		for _, src := range ev.Filter.Sources {
			var cats []string
			for _, f := range src.Findings {
				cats = append(cats, f.Category)
			}
			fmt.Fprintf(s.errw, "[filter] removed %d suspicious passage(s) from %s (%s)\n", len(src.Findings), src.Label, strings.Join(uniq(cats), ", "))
		}
		if ev.Filter.Warning != "" {
			fmt.Fprintf(s.errw, "[filter] %s\n", ev.Filter.Warning)
		}
	case loop.EventDone:
		fmt.Fprintln(s.out)
		if s.flush != nil {
			s.flush()
		}
	}
}

// jsonSink writes one JSON event per line.
type jsonSink struct {
	enc   *json.Encoder
	flush func()
	done  *bool
}

func newJSONSink(w io.Writer, flush func()) jsonSink {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return jsonSink{enc: enc, flush: flush, done: new(bool)}
}

func (s jsonSink) Emit(ev loop.Event) {
	_ = s.enc.Encode(ev)
	if ev.Type == loop.EventDone {
		*s.done = true
		if s.flush != nil {
			s.flush()
		}
	}
}

// close ends the event stream of a run that failed before the loop began
// (a provider the chat may not use, say): error, then done, so that done is
// always the last line.
func (s jsonSink) close(err error) {
	if *s.done || err == nil {
		return
	}
	stop := loop.StopError
	if errors.Is(err, context.Canceled) {
		stop = loop.StopCancelled
	}
	s.Emit(loop.Event{Type: loop.EventError, Error: err.Error()})
	s.Emit(loop.Event{Type: loop.EventDone, Stop: stop})
}

// writeJSON writes v indented.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// rawErr is the terminal behind stderr, for output that draws with control
// characters of its own (the progress bar).
func rawErr(e env) io.Writer {
	if e.rawStderr != nil {
		return e.rawStderr
	}
	return e.stderr
}
