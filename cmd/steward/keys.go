package main

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// addConfigCommands adds the commands of the configuration and secrets:
// `keys`, and `mail set-secret` to the mail command.
func addConfigCommands(root *cobra.Command, e env) {
	root.AddCommand(newKeysCmd(e))
	for _, c := range root.Commands() {
		if c.Name() == "mail" {
			c.AddCommand(newMailSetSecretCmd(e))
		}
	}
}

// readHidden asks for a secret on the terminal without echoing it, or reads
// it from stdin when stdin is not a terminal.
func readHidden(e env, name string) (string, error) {
	if f, ok := e.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprintf(e.stderr, "%s (input hidden): ", name)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(e.stderr)
		if err != nil {
			return "", fmt.Errorf("reading %s from the terminal: %w", name, err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	v, err := readSecret(e.stdin)
	return strings.TrimSpace(v), err
}

// secretArgs checks the arguments of a command that takes NAME [-] and a
// secret: the secret comes from a hidden prompt, or from stdin after "-",
// never as an argument. need says what NAME is, what what the secret is.
func secretArgs(command, need, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usagef("%s needs %s", command, need)
		}
		if len(args) > 2 || len(args) == 2 && args[1] != "-" {
			return usagef("%s takes %s from a hidden prompt or from stdin with -, never as an argument (it would stay in your shell history and be visible in ps)", command, what)
		}
		return nil
	}
}

// readSecretArg reads the secret of a command whose arguments secretArgs
// checked: from stdin after "-", else from a hidden prompt for prompt.
func readSecretArg(e env, args []string, prompt string) (string, error) {
	if len(args) == 2 {
		return readSecret(e.stdin)
	}
	return readHidden(e, prompt)
}

func newKeysCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Store, list and remove provider API keys",
		Long: `Store the API keys of model providers in the OS keyring (or, where none
answers, a file only you can read), so that you need not export them in every
shell. A key belongs to a provider kind (openai, anthropic, …) or to the ID of a
configured provider. A key set in the environment (e.g. OPENAI_API_KEY) is used
first; a stored one after it. Keys are never taken as arguments and never
printed.`,
		Example: `  steward keys set openai            # asks for the key, input hidden
  printf '%s' "$KEY" | steward keys set anthropic -
  steward keys list
  steward keys remove openai`,
	}
	set := &cobra.Command{
		Use:   "set PROVIDER [-]",
		Short: "Store a provider's API key (asked for with the input hidden, or read from stdin with -)",
		Example: `  steward keys set openai
  printf '%s' "$KEY" | steward keys set anthropic -`,
		Args: secretArgs("keys set", "the provider: a kind such as openai or a configured provider's ID", "the key"),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openApp(cmd, e)
			if err != nil {
				return err
			}
			t, err := a.ProviderKeyTarget(args[0])
			if err != nil {
				return usageError{err}
			}
			if t.OrgKey {
				return fmt.Errorf("the organization's plugin supplies the key of %s; a stored key would not be used", t.Title)
			}
			key, err := readSecretArg(e, args, "API key for "+t.Title)
			if err != nil {
				return err
			}
			key = strings.TrimSpace(key)
			if key == "" {
				return usagef("the key is empty; to remove a stored key run 'steward keys remove %s'", t.Name)
			}
			where, err := a.SetProviderKey(t, key)
			if err != nil {
				return fmt.Errorf("storing the key in %s: %w", where, err)
			}
			fmt.Fprintf(e.stderr, "The key of %s is stored in %s.\n", t.Title, where)
			for _, env := range t.EnvVars {
				if strings.TrimSpace(e.getenv(env)) != "" {
					fmt.Fprintf(e.stderr, "Note: %s is set in your environment and is used first.\n", env)
				}
			}
			return nil
		},
	}
	list := &cobra.Command{
		Use:     "list",
		Short:   "List where each provider's key comes from, without showing any",
		Example: `  steward keys list`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openApp(cmd, e)
			if err != nil {
				return err
			}
			keys, err := a.ProviderKeys()
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PROVIDER\tNAME\tKEY")
			for _, k := range keys {
				var from []string
				if k.EnvSet != "" {
					from = append(from, "$"+k.EnvSet+" (used first)")
				}
				if k.OrgKey {
					from = append(from, "organization plugin")
				}
				if k.Where != "" {
					from = append(from, "stored in "+k.Where)
				}
				if len(from) == 0 {
					continue
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", k.Name, k.Title, strings.Join(from, "; "))
			}
			return tw.Flush()
		},
	}
	remove := &cobra.Command{
		Use:     "remove PROVIDER",
		Short:   "Remove a provider's stored API key",
		Example: `  steward keys remove openai`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openApp(cmd, e)
			if err != nil {
				return err
			}
			t, err := a.ProviderKeyTarget(args[0])
			if err != nil {
				return usageError{err}
			}
			where, err := a.SetProviderKey(t, "")
			if err != nil {
				return fmt.Errorf("removing the key from %s: %w", where, err)
			}
			fmt.Fprintf(e.stderr, "The key of %s is removed from %s.\n", t.Title, where)
			return nil
		},
	}
	cmd.AddCommand(set, list, remove)
	return cmd
}

func newMailSetSecretCmd(e env) *cobra.Command {
	return &cobra.Command{
		Use:   "set-secret MAILBOX [-]",
		Short: "Store or replace a mailbox's password or token (asked for with the input hidden, or read from stdin with -)",
		Long: `Store or replace the password or OAuth2 token Steward signs in to a mailbox
with, e.g. after it changed. The secret is asked for with the input hidden, or
read from stdin with -, never taken as an argument. It goes to the OS keyring,
or where none answers, to a file only you can read.`,
		Example: `  steward mail set-secret work
  printf '%s' "$IMAP_PASSWORD" | steward mail set-secret work -`,
		Args: secretArgs("mail set-secret", "the mailbox ID (see 'steward mail status')", "the secret"),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openApp(cmd, e)
			if err != nil {
				return err
			}
			defer a.Close()
			id := args[0]
			var known []string
			found := false
			for _, m := range a.MailboxConfigs() {
				known = append(known, m.ID)
				if m.ID == id {
					found = true
				}
			}
			if !found {
				if len(known) == 0 {
					return usagef("there is no mailbox %q: no mailbox is configured; add one with 'steward mail add'", id)
				}
				return usagef("there is no mailbox %q: use %s", id, strings.Join(known, ", "))
			}
			for _, m := range a.Org.Mailboxes {
				if m.ID == id && m.Secret != "" {
					return fmt.Errorf("the organization's plugin %q supplies the secret of mailbox %s; a stored one would not be used", m.Plugin, id)
				}
			}
			secret, err := readSecretArg(e, args, "password or token for mailbox "+id)
			if err != nil {
				return err
			}
			if secret == "" {
				return usagef("the secret is empty; nothing was stored")
			}
			if err := a.SetMailboxSecret(id, secret); err != nil {
				return fmt.Errorf("storing the secret in %s: %w", a.Secrets.Where(), err)
			}
			fmt.Fprintf(e.stderr, "The secret of mailbox %s is stored in %s.\n", id, a.Secrets.Where())
			return nil
		},
	}
}
