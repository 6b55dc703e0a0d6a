package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/app"
)

func newSettingsCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "settings get|set|unset TOOL.FIELD [VALUE]",
		Short: "Read and change your tool settings",
		Long: `Read and change your own tool settings, addressed as TOOL.FIELD (the same
"<toolId>.<field>" names organization plugins use). A field your organization
locked cannot be changed; the message names the plugin that locked it. Secret
fields go to the OS keyring where one exists, otherwise to a file only you can
read, and are never printed.`,
		Example: `  steward settings get web_search.searxng.baseUrl
  steward settings set web_search.searxng.baseUrl https://search.example.org
  steward settings set web_search.tavily.apiKey -      # reads the secret from stdin
  steward settings unset read_web_page.freeAddressChoice`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usagef("settings needs a verb (get, set, unset) and TOOL.FIELD")
			}
			switch args[0] {
			case "get", "unset":
				if len(args) != 2 {
					return usagef("settings %s takes exactly TOOL.FIELD", args[0])
				}
			case "set":
				if len(args) != 3 {
					return usagef("settings set takes TOOL.FIELD and a VALUE (or - to read it from stdin)")
				}
			default:
				return usagef("unknown settings verb %q: use get, set or unset", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openApp(cmd, e)
			if err != nil {
				return err
			}
			toolID, field, ok := strings.Cut(args[1], ".")
			if !ok || toolID == "" || field == "" {
				return usagef("%q is not TOOL.FIELD, e.g. web_search.maxResults", args[1])
			}
			def, ok := a.Definition(toolID)
			if !ok {
				return usagef("there is no tool %q: see `steward tools`", toolID)
			}
			f, ok := def.Settings.Field(field)
			if !ok {
				var names []string
				for _, x := range def.Settings.Fields {
					names = append(names, x.Name)
				}
				return usagef("tool %s has no setting %q; its settings are: %s", toolID, field, strings.Join(names, ", "))
			}
			resolved, _ := a.Resolver.Resolve(context.WithoutCancel(cmd.Context()), def)
			rf, _ := resolved.Field(field)
			switch args[0] {
			case "get":
				val := rf.Value
				if f.Secret {
					val = "(secret " + map[bool]string{true: "set", false: "not set"}[rf.Set()] + ")"
				} else if val == "" {
					val = "(not set"
					if f.Default != "" {
						val += "; default " + f.Default
					}
					val += ")"
				}
				fmt.Fprintf(e.stdout, "%s.%s = %s  [%s]\n", toolID, field, val, rf.Origin)
				return nil
			case "set", "unset":
				value := ""
				if args[0] == "set" {
					value = args[2]
					if value == "-" {
						b, err := io.ReadAll(io.LimitReader(e.stdin, 1<<20))
						if err != nil {
							return fmt.Errorf("reading the value from stdin: %w", err)
						}
						value = strings.TrimSpace(string(b))
					}
				}
				where, err := a.SetToolSetting(cmd.Context(), args[1], value)
				if se, ok := app.AsSettingError(err); ok && se.Usage {
					return usageError{err}
				}
				if err != nil {
					return err
				}
				verb := map[bool]string{true: "saved", false: "removed"}[value != ""]
				if f.Secret {
					verb = map[bool]string{true: "stored", false: "removed"}[value != ""]
				}
				fmt.Fprintf(e.stderr, "%s.%s %s in %s.\n", toolID, field, verb, where)
				return nil
			}
			return nil
		},
	}
	return cmd
}

func newConfigCmd(e env) *cobra.Command {
	cfg := &cobra.Command{
		Use:     "config",
		Short:   "Check the configuration",
		Example: `  steward config check`,
	}
	check := &cobra.Command{
		Use:   "check",
		Short: "Load every configuration plugin and setting and print each problem with its file and line",
		Long: `Load every organization and local configuration plugin and your settings file,
and print each problem with its file and line. Prints nothing and exits 0 when
all is in order; exits 1 when there are problems.`,
		Example: `  steward config check
  STEWARD_CONFIG_DIR=/etc/steward steward config check`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openApp(cmd, e)
			if err != nil {
				return err
			}
			n := 0
			for _, p := range a.Org.Problems {
				fmt.Fprintln(e.stdout, p.String())
				n++
			}
			for _, p := range a.RegistryProblems {
				fmt.Fprintf(e.stdout, "tools: %v\n", p)
				n++
			}
			for _, t := range a.Tools {
				def := t.Definition()
				_, st := a.Resolver.State(cmd.Context(), t)
				if st.Problem != nil {
					fmt.Fprintf(e.stdout, "%s: %v\n", def.ID, st.Problem)
					n++
				}
			}
			if n > 0 {
				return fmt.Errorf("%d configuration problem(s)", n)
			}
			return nil
		},
	}
	cfg.AddCommand(check)
	return cfg
}
