package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/app"
	"github.com/stewardhq/steward/config"
	"github.com/stewardhq/steward/settings"
)

// appSettingKeys are the settings of settings.json that `steward settings`
// sets by name, next to the TOOL.FIELD tool settings.
var appSettingKeys = []string{"default_provider", "selected_tools", "enabled_preview_features"}

func newSettingsCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "settings get|set|unset KEY [VALUE]",
		Short: "Read and change your settings",
		Long: `Read and change your own settings. KEY is a tool setting addressed as
TOOL.FIELD (the same "<toolId>.<field>" names organization plugins use), or one
of:

  default_provider          the provider ask and chat use when --provider is not
                            given: a provider kind or a configured provider's ID
  selected_tools            the tools ask and chat offer when --tools is not
                            given: comma-separated tool or collection IDs
  enabled_preview_features  preview features to switch on: comma-separated, e.g.
                            PRE_RAG_2024,PRE_MAILBOXES_2026 (the mail tools)

A value is checked the way 'steward config check' checks it before anything is
saved; a value that would be refused is not written (exit 2). A field your
organization locked cannot be changed; the message names the plugin that locked
it. Secret fields are never taken as an argument, where they would stay in your
shell history and be visible to every user in ps: give no VALUE to be asked
with the input hidden, or '-' to read the secret from stdin. They go to the OS
keyring where one exists, otherwise to a file only you can read, and are never
printed; 'settings get' says which of the two holds one.`,
		Example: `  steward settings get web_search.searxng.baseUrl
  steward settings set web_search.searxng.baseUrl https://search.example.org
  steward settings set web_search.brave.apiKey          # asks, input hidden
  printf '%s' "$BRAVE_KEY" | steward settings set web_search.brave.apiKey -
  steward settings set default_provider anthropic
  steward settings set selected_tools web_search,read_web_page
  steward settings set enabled_preview_features PRE_RAG_2024,PRE_MAILBOXES_2026
  steward settings unset read_web_page.freeAddressChoice`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usagef("settings needs a verb (get, set, unset) and a KEY: TOOL.FIELD or one of %s", strings.Join(appSettingKeys, ", "))
			}
			switch args[0] {
			case "get", "unset":
				if len(args) != 2 {
					return usagef("settings %s takes exactly one KEY", args[0])
				}
			case "set":
				if len(args) > 3 {
					return usagef("settings set takes a KEY and a VALUE (or - to read it from stdin); quote a value with spaces")
				}
			default:
				return usagef("unknown settings verb %q: use get, set or unset", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if contains(appSettingKeys, args[1]) {
				return runAppSetting(cmd, e, args)
			}
			toolID, field, ok := strings.Cut(args[1], ".")
			if !ok || toolID == "" || field == "" {
				return usagef("%q is neither TOOL.FIELD (e.g. web_search.maxResults) nor one of %s", args[1], strings.Join(appSettingKeys, ", "))
			}
			a, err := openApp(cmd, e)
			if err != nil {
				return err
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
			ctx := context.WithoutCancel(cmd.Context())
			resolved, _ := a.Resolver.Resolve(ctx, def)
			rf, _ := resolved.Field(field)
			name := toolID + "." + field
			switch args[0] {
			case "get":
				val := rf.Value
				switch {
				case f.Secret && rf.LockedBy != "":
					val = "(secret set by the organization plugin " + strconvQuote(rf.LockedBy) + ")"
					if rf.Invalid {
						val = "(secret locked by the organization plugin " + strconvQuote(rf.LockedBy) + ", but unusable)"
					}
				case f.Secret:
					where, err := config.LocateSecret(a.Secrets, "tool::"+toolID, field)
					if err != nil {
						return fmt.Errorf("reading %s: %w", a.Secrets.Where(), err)
					}
					val = "(secret not set)"
					if where != "" {
						val = "(secret set, stored in " + where + ")"
					}
				case val == "":
					val = "(not set"
					if f.Default != "" {
						val += "; default " + f.Default
					}
					val += ")"
				}
				origin := rf.Origin.String()
				if f.Secret && rf.LockedBy == "" {
					origin = "your secret store"
				}
				fmt.Fprintf(e.stdout, "%s = %s  [%s]\n", name, val, origin)
				return nil
			case "set", "unset":
				if rf.LockedBy != "" {
					return fmt.Errorf("%s is locked by the organization plugin %q and cannot be changed", name, rf.LockedBy)
				}
				value := ""
				if args[0] == "set" {
					value, err = settingValue(e, name, f.Secret, args[2:])
					if err != nil {
						return err
					}
					if value == "" {
						return usagef("%s: the value is empty; use 'steward settings unset %s' to remove it", name, name)
					}
					if len(f.Enum) > 0 && !contains(f.Enum, value) {
						return usagef("%s must be one of %s, not %q; nothing was saved", name, strings.Join(f.Enum, ", "), value)
					}
					if err := a.CheckToolSetting(ctx, toolID, field, value); err != nil {
						shown := fmt.Sprintf("%q", value)
						if f.Secret {
							shown = "the secret"
						}
						return usagef("%s: %s is refused: %v; nothing was saved", name, shown, err)
					}
				}
				// app saves it: the secret store for a secret, settings.json
				// otherwise, checked once more against the organization's lock.
				where, err := a.SetToolSetting(ctx, name, value)
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
				fmt.Fprintf(e.stderr, "%s %s in %s.\n", name, verb, where)
				return nil
			}
			return nil
		},
	}
	return cmd
}

func strconvQuote(s string) string { return fmt.Sprintf("%q", s) }

// settingValue is the value given to `settings set`: the argument, stdin
// for "-", or for a secret without an argument a prompt with the input
// hidden. A secret given as an argument is refused.
func settingValue(e env, name string, secret bool, rest []string) (string, error) {
	switch {
	case len(rest) == 1 && rest[0] == "-":
		return readSecret(e.stdin)
	case secret && len(rest) == 1:
		return "", usagef("%s is a secret: it is not taken as an argument, where it would stay in your shell history and be visible in ps; run 'steward settings set %s' to be asked for it with the input hidden, or pipe it in with 'steward settings set %s -'", name, name, name)
	case secret:
		return readHidden(e, name)
	case len(rest) == 0:
		return "", usagef("settings set %s needs a VALUE (or - to read it from stdin)", name)
	}
	return rest[0], nil
}

// runAppSetting gets, sets or unsets one of appSettingKeys.
func runAppSetting(cmd *cobra.Command, e env, args []string) error {
	a, err := openApp(cmd, e)
	if err != nil {
		return err
	}
	key := args[1]
	current := map[string]string{
		"default_provider":         a.User.DefaultProvider,
		"selected_tools":           strings.Join(a.User.SelectedTools, ","),
		"enabled_preview_features": strings.Join(a.User.EnabledPreviewFeatures, ","),
	}[key]
	switch args[0] {
	case "get":
		if current == "" {
			current = "(not set)"
		}
		fmt.Fprintf(e.stdout, "%s = %s\n", key, current)
		return nil
	case "unset":
		switch key {
		case "default_provider":
			a.User.DefaultProvider = ""
		case "selected_tools":
			a.User.SelectedTools = nil
		case "enabled_preview_features":
			a.User.EnabledPreviewFeatures = nil
		}
	case "set":
		value, err := settingValue(e, key, false, args[2:])
		if err != nil {
			return err
		}
		value = strings.TrimSpace(value)
		switch key {
		case "default_provider":
			if value == "" {
				return usagef("default_provider needs a provider kind or a configured provider's ID; nothing was saved")
			}
			if err := a.CheckProviderName(value); err != nil {
				return usagef("default_provider %q is refused: %v; nothing was saved", value, err)
			}
			a.User.DefaultProvider = value
		case "selected_tools":
			ids, err := a.CheckSelection(cmd.Context(), splitList(value))
			if err != nil {
				return usagef("selected_tools: %v; nothing was saved", err)
			}
			a.User.SelectedTools = ids
		case "enabled_preview_features":
			known := settings.PreviewFeatures()
			var out []string
			for _, f := range splitList(value) {
				f = strings.ToUpper(f)
				if !contains(known, f) {
					return usagef("enabled_preview_features: unknown preview feature %q: use %s; nothing was saved", f, strings.Join(known, ", "))
				}
				if !contains(out, f) {
					out = append(out, f)
				}
			}
			a.User.EnabledPreviewFeatures = out
		}
	}
	if err := a.SaveUserSettings(); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "%s %s in %s.\n", key, map[bool]string{true: "saved", false: "removed"}[args[0] == "set"], config.UserSettingsPath(a.ConfigDir))
	return nil
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
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
