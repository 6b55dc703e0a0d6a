package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stewardhq/steward/server"
)

// serveTokenEnv holds an access token for `steward serve`.
const serveTokenEnv = "STEWARD_SERVE_TOKEN"

func newServeCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve [--port N] [--listen ADDR] [--token-file FILE]",
		Short: "Serve the chat page and the HTTP API on this computer",
		Long: `Serve the chat page and the HTTP API (see server/openapi.json). Steward binds
127.0.0.1 on a free port (or --port) and prints the address with a random
access token; open it in your browser. Nothing else is opened or started.
Every request needs the token. Turns keep running when a tab closes, and every
answer is stored like those of 'steward chat'. Ctrl-C stops the server; running
answers are cancelled and stored as far as they got.

--listen binds another address, e.g. one other computers reach. It needs a
token you chose, from --token-file or $STEWARD_SERVE_TOKEN (at least 32
characters), so that the address alone never lets anyone in. The server speaks
plain HTTP: put it behind a TLS proxy before it leaves a trusted network.`,
		Example: `  steward serve
  steward serve --port 8765
  STEWARD_SERVE_TOKEN=$(cat ~/.steward-token) steward serve --listen 192.0.2.10:8765`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			listen, _ := cmd.Flags().GetString("listen")
			port, _ := cmd.Flags().GetInt("port")
			tokenFile, _ := cmd.Flags().GetString("token-file")
			if listen != "" && cmd.Flags().Changed("port") {
				return usagef("give either --listen or --port, not both")
			}
			if port < 0 || port > 65535 {
				return usagef("--port %d is not a port number: use 1-65535, or 0 for a free one", port)
			}
			addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
			if listen != "" {
				host, p, err := net.SplitHostPort(listen)
				if err != nil {
					return usagef("--listen %q is not HOST:PORT, e.g. 127.0.0.1:8765 or 192.0.2.10:8765", listen)
				}
				if n, err := strconv.Atoi(p); err != nil || n < 0 || n > 65535 {
					return usagef("--listen %q has no port number: use 1-65535, or 0 for a free one", listen)
				}
				if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
					return usagef("--listen %q binds every address; name the one address other computers reach, e.g. 192.0.2.10:%s (the server checks that requests name it)", listen, p)
				}
				addr = net.JoinHostPort(host, p)
			}
			token, chosen, err := serveToken(e, tokenFile)
			if err != nil {
				return err
			}
			host, _, _ := net.SplitHostPort(addr)
			if !isLoopback(host) && !chosen {
				return usagef("--listen %s reaches beyond this computer: give a token you chose with --token-file or $%s (at least %d characters)", addr, serveTokenEnv, server.MinTokenLength)
			}
			a, err := openApp(cmd, e)
			if err != nil {
				return err
			}
			defer a.Close()
			l, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("listening on %s: %w", addr, err)
			}
			srv, err := server.New(cmd.Context(), server.Options{App: a, Token: token, Addr: l.Addr().String(), Logger: a.Logger})
			if err != nil {
				l.Close()
				return err
			}
			shown := l.Addr().String()
			fmt.Fprintf(e.stdout, "Steward is serving the chat page at\n\n    http://%s/?token=%s\n\nOpen that address in your browser. Ctrl-C stops the server.\n", shown, token)
			if !isLoopback(host) {
				fmt.Fprintln(e.stderr, "steward: the server speaks plain HTTP; put it behind a TLS proxy before it leaves a trusted network")
			}
			err = srv.Serve(cmd.Context(), l)
			if err != nil && !errors.Is(err, net.ErrClosed) {
				return err
			}
			fmt.Fprintln(e.stderr, "Steward stopped serving; every chat is stored.")
			return nil
		},
	}
	cmd.Flags().Int("port", 0, "port on 127.0.0.1 (0: a free one)")
	cmd.Flags().String("listen", "", "HOST:PORT to bind instead of 127.0.0.1 (needs a token you chose)")
	cmd.Flags().String("token-file", "", "file holding the access token (default: $"+serveTokenEnv+", else a random one)")
	return cmd
}

// serveToken returns the access token and whether the user chose it.
func serveToken(e env, file string) (string, bool, error) {
	tok := ""
	src := ""
	switch {
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", false, fmt.Errorf("reading the token file: %w", err)
		}
		tok, src = strings.TrimSpace(string(b)), "the token file "+file
	case e.getenv(serveTokenEnv) != "":
		tok, src = strings.TrimSpace(e.getenv(serveTokenEnv)), "$"+serveTokenEnv
	default:
		return server.NewToken(), false, nil
	}
	if len(tok) < server.MinTokenLength {
		return "", false, usagef("%s holds %d characters; an access token needs at least %d", src, len(tok), server.MinTokenLength)
	}
	if strings.ContainsFunc(tok, func(r rune) bool { return r <= ' ' || r > '~' || r == '&' || r == '#' || r == '%' }) {
		return "", false, usagef("%s holds spaces or characters that do not fit into an address; use letters, digits, - and _", src)
	}
	return tok, true, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
