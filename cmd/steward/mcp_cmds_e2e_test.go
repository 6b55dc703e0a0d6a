package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/mcptest"
)

// userSettings reads the user's settings.json as JSON.
func userSettings(t *testing.T, home string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, "config", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("settings.json: %v\n%s", err, b)
	}
	return m
}

// settingsServers are the IDs of the MCP servers in the user's settings.
func settingsServers(t *testing.T, home string) []string {
	t.Helper()
	var ids []string
	m, _ := userSettings(t, home)["mcp"].(map[string]any)
	servers, _ := m["servers"].([]any)
	for _, s := range servers {
		ids = append(ids, s.(map[string]any)["id"].(string))
	}
	return ids
}

func selectedTools(t *testing.T, home string) []string {
	t.Helper()
	var out []string
	l, _ := userSettings(t, home)["selected_tools"].([]any)
	for _, s := range l {
		out = append(out, s.(string))
	}
	return out
}

// wantUsage checks a usage error: exit 2 and a message with every part in want.
func wantExit(t *testing.T, r result, code int, want ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit %d, want %d; stdout %q stderr %q", r.code, code, r.stdout, r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr %q does not say %q", r.stderr, w)
		}
	}
}

// TestMCPCommandsEndToEnd drives mcp add, list, tools, check and remove on
// the built binary with the real server-everything: each command's text
// and JSON, its wrong-input errors and the settings it changes.
func TestMCPCommandsEndToEnd(t *testing.T) {
	command, args := mcptest.Everything(t)
	home := t.TempDir()

	// Nothing configured yet.
	r := steward(t, home, "", nil, "mcp", "list")
	wantExit(t, r, 0, "No MCP servers configured", "steward mcp add", "steward mcp import")
	if r.stdout != "" {
		t.Errorf("an empty list writes nothing on stdout: %q", r.stdout)
	}
	if r = steward(t, home, "", nil, "mcp", "list", "--json"); r.code != 0 || strings.TrimSpace(r.stdout) != "[]" {
		t.Fatalf("mcp list --json with no server: exit %d, %q", r.code, r.stdout)
	}

	// add
	addArgs := append([]string{"mcp", "add", "ev", "--name", "Everything", "--outbound-data", "NONE",
		"--restrict-outbound", "ONLY_CONFIGURED_SERVICES", "--env", "EV_TOKEN=ev-secret-7788", "--", command}, args...)
	r = steward(t, home, "", nil, addArgs...)
	wantExit(t, r, 0, "Added MCP server ev", "steward mcp check ev")
	if ids := settingsServers(t, home); !slices.Equal(ids, []string{"ev"}) {
		t.Fatalf("settings after add: %v", ids)
	}
	if sel := selectedTools(t, home); !slices.Contains(sel, "mcp__ev") {
		t.Fatalf("add selects the collection mcp__ev: %v", sel)
	}
	raw, _ := os.ReadFile(filepath.Join(home, "config", "settings.json"))
	if strings.Contains(string(raw), "ev-secret-7788") || !strings.Contains(string(raw), "EV_TOKEN") {
		t.Fatalf("settings.json names the env variable but never holds its value:\n%s", raw)
	}

	// Wrong input to add: usage errors exit 2 and say what is right;
	// nothing is stored.
	for _, c := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"mcp", "add", "ev", "--", "node", "x.js"}, 1, []string{`"ev" exists already`, "steward mcp remove ev", "--replace"}},
		{[]string{"mcp", "add", "Bad-ID", "--", "node"}, 2, []string{`"Bad-ID"`, "lower-case letters"}},
		{[]string{"mcp", "add", "x", "--outbound-data", "SOMEWHERE", "--", "node"}, 2, []string{"--outbound-data", `"SOMEWHERE"`, "NONE, CONFIGURED_SERVICE, THIRD_PARTY_QUERIES or MODEL_CHOSEN_ADDRESSES"}},
		{[]string{"mcp", "add", "x", "--min-confidence", "SUPER", "--", "node"}, 2, []string{"--min-confidence", "SUPER"}},
		{[]string{"mcp", "add", "x", "--restrict-outbound", "NOWHERE", "--", "node"}, 2, []string{"--restrict-outbound", "NOWHERE"}},
		{[]string{"mcp", "add", "x"}, 2, []string{"after --", "--url"}},
		{[]string{"mcp", "add", "x", "--url", "http://127.0.0.1:9/mcp", "--", "node"}, 2, []string{"either a command after -- or --url, not both"}},
		{[]string{"mcp", "add", "x", "--env", "NOVALUE", "--", "node"}, 2, []string{"--env", "NOVALUE", "NAME=VALUE"}},
		{[]string{"mcp", "add", "x", "--env", "=orphan", "--", "node"}, 2, []string{`--env "=orphan"`, "NAME=VALUE"}},
		{[]string{"mcp", "add", "x", "--url", "http://127.0.0.1:9/", "--header", "no colon"}, 2, []string{"--header", "Name: value"}},
		{[]string{"mcp", "add", "x", "--bogus", "--", "node"}, 2, []string{"--bogus"}},
	} {
		r := steward(t, home, "", nil, c.args...)
		wantExit(t, r, c.code, c.want...)
	}
	if ids := settingsServers(t, home); !slices.Equal(ids, []string{"ev"}) {
		t.Fatalf("failed adds changed the settings: %v", ids)
	}

	// list, text and JSON
	r = steward(t, home, "", nil, "mcp", "list")
	wantExit(t, r, 0)
	for _, w := range []string{"ev  Everything  stdio: " + command, "from your settings", "sends data: NONE", "content untrusted: true",
		"chat keeps ONLY_CONFIGURED_SERVICES after use", "secrets: env EV_TOKEN; headers none", "collection mcp__ev, selected"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("mcp list does not say %q:\n%s", w, r.stdout)
		}
	}
	if strings.Contains(r.stdout+r.stderr, "ev-secret-7788") {
		t.Errorf("mcp list shows a secret value:\n%s", r.stdout)
	}
	r = steward(t, home, "", nil, "mcp", "list", "--json")
	var rows []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("mcp list --json: %v\n%s", err, r.stdout)
	}
	row := rows[0]
	if row["id"] != "ev" || row["name"] != "Everything" || row["type"] != "stdio" || row["outbound_data"] != "NONE" ||
		row["untrusted_content"] != true || row["outbound_data_restriction"] != "ONLY_CONFIGURED_SERVICES" ||
		row["collection"] != "mcp__ev" || row["selected"] != true || row["from"] != "your settings" {
		t.Errorf("mcp list --json row: %v", row)
	}
	if env, _ := row["env"].([]any); len(env) != 1 || env[0] != "EV_TOKEN" {
		t.Errorf("the JSON names the env variable only: %v", row["env"])
	}

	// tools, text and JSON, with the real server
	r = steward(t, home, "", nil, "mcp", "tools", "ev")
	wantExit(t, r, 0)
	if !strings.Contains(r.stdout, "mcp__ev__echo  (echo of ev; strict; sends data: NONE)\n    Echoes back the input string") {
		t.Errorf("mcp tools text:\n%s", r.stdout)
	}
	// The server's own annotation overrides the declared NONE, and is said.
	if !strings.Contains(r.stderr, `MCP server "ev": tool "gzip-file-as-resource"`) || !strings.Contains(r.stderr, "MODEL_CHOSEN_ADDRESSES") {
		t.Errorf("mcp tools reports the open-world tool: %s", r.stderr)
	}
	r = steward(t, home, "", nil, "mcp", "tools", "--json")
	var tools []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &tools); err != nil || len(tools) < 5 {
		t.Fatalf("mcp tools --json: %v\n%s", err, r.stdout)
	}
	found := false
	for _, tl := range tools {
		if tl["server"] != "ev" || !strings.HasPrefix(tl["name"].(string), "mcp__ev__") {
			t.Errorf("tool row: %v", tl)
		}
		if tl["remote_name"] == "echo" {
			found = true
			if tl["name"] != "mcp__ev__echo" || tl["strict"] != true || tl["outbound_data"] != "NONE" || tl["read_only_hint"] != true {
				t.Errorf("echo row: %v", tl)
			}
		}
		if tl["remote_name"] == "gzip-file-as-resource" && tl["outbound_data"] != "MODEL_CHOSEN_ADDRESSES" {
			t.Errorf("the open-world tool counts as MODEL_CHOSEN_ADDRESSES: %v", tl)
		}
	}
	if !found {
		t.Errorf("no echo tool in %v", tools)
	}

	// check
	r = steward(t, home, "", nil, "mcp", "check", "ev")
	wantExit(t, r, 0)
	if !strings.Contains(r.stdout, "ev: OK: mcp-servers/everything ") || !strings.Contains(r.stdout, " tools taken") {
		t.Errorf("mcp check ev:\n%s", r.stdout)
	}

	// Unknown server IDs: usage errors naming the ID and where to look.
	for _, sub := range []string{"tools", "check"} {
		r = steward(t, home, "", nil, "mcp", sub, "nosuch")
		wantExit(t, r, 2, `no MCP server "nosuch" is configured`, "steward mcp list")
	}
	r = steward(t, home, "", nil, "mcp", "tools", "--bogus")
	wantExit(t, r, 2, "--bogus")

	// A server that cannot start costs only itself: check reports it as
	// FAILED and exits 1, the other server is still OK.
	r = steward(t, home, "", nil, "mcp", "add", "broken", "--", filepath.Join(home, "no-such-program"))
	wantExit(t, r, 0)
	r = steward(t, home, "", nil, "mcp", "check")
	if r.code != 1 || !strings.Contains(r.stdout, "broken: FAILED: ") || !strings.Contains(r.stdout, "no-such-program") ||
		!strings.Contains(r.stdout, "ev: OK: ") || !strings.Contains(r.stderr, "1 of 2 MCP servers failed") {
		t.Errorf("mcp check with a broken server: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	r = steward(t, home, "", nil, "mcp", "tools", "--json")
	if r.code != 1 || !strings.Contains(r.stderr, "1 of 2 MCP servers could not be started") {
		t.Errorf("mcp tools with a broken server: exit %d\nstderr %s", r.code, r.stderr)
	}
	if err := json.Unmarshal([]byte(r.stdout), &tools); err != nil || len(tools) < 5 {
		t.Errorf("the working server's tools are still listed: %v\n%s", err, r.stdout)
	}

	// remove
	wantExit(t, steward(t, home, "", nil, "mcp", "remove", "nosuch"), 2, `no MCP server "nosuch" in your settings`, "steward mcp list")
	wantExit(t, steward(t, home, "", nil, "mcp", "remove"), 2, "mcp remove takes the server's ID")
	wantExit(t, steward(t, home, "", nil, "mcp", "remove", "ev"), 0, "Removed MCP server ev.")
	if ids := settingsServers(t, home); !slices.Equal(ids, []string{"broken"}) {
		t.Fatalf("settings after remove: %v", ids)
	}
	if sel := selectedTools(t, home); slices.Contains(sel, "mcp__ev") || !slices.Contains(sel, "mcp__broken") {
		t.Fatalf("remove unselects only its collection: %v", sel)
	}
	if b, err := os.ReadFile(filepath.Join(home, "config", "secrets.json")); err == nil && strings.Contains(string(b), "ev-secret-7788") {
		t.Fatalf("remove deletes the server's secrets:\n%s", b)
	}
	r = steward(t, home, "", nil, "mcp", "list")
	if strings.Contains(r.stdout, "ev  Everything") || !strings.Contains(r.stdout, "broken") {
		t.Errorf("mcp list after remove:\n%s", r.stdout)
	}
}

// TestMCPImportEndToEnd imports a Claude Code and a Crush file on the built
// binary: the servers land in the settings with their secrets in the
// secret store, --only and the policy flags apply, and malformed files are
// refused naming what was wrong and what is expected.
func TestMCPImportEndToEnd(t *testing.T) {
	home := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(home, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	claude := write(".mcp.json", `{"mcpServers": {
	  "fs": {"command": "node", "args": ["fs.js", "/srv"], "env": {"FS_TOKEN": "cc-secret-1234"}},
	  "web-api": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer hdr-secret-5678"}}}}`)
	crush := write("crush.json", `{"mcp": {
	  "files": {"type": "stdio", "command": "node", "args": ["files.js"], "env": {"K": "$CRUSH_TOKEN"}},
	  "other": {"type": "stdio", "command": "node", "args": ["other.js"]}}}`)

	r := steward(t, home, "", nil, "mcp", "import", claude, "--outbound-data", "NONE", "--min-confidence", "HIGH")
	wantExit(t, r, 0, `Imported MCP server "fs" as fs.`, `Imported MCP server "web-api" as web_api.`)
	if ids := settingsServers(t, home); !slices.Equal(ids, []string{"fs", "web_api"}) {
		t.Fatalf("servers after the Claude Code import: %v", ids)
	}
	raw, _ := os.ReadFile(filepath.Join(home, "config", "settings.json"))
	if strings.Contains(string(raw), "cc-secret-1234") || strings.Contains(string(raw), "hdr-secret-5678") {
		t.Fatalf("settings.json holds a secret value:\n%s", raw)
	}
	r = steward(t, home, "", nil, "mcp", "list", "--json")
	var rows []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != 2 {
		t.Fatalf("mcp list --json: %v\n%s", err, r.stdout)
	}
	for _, row := range rows {
		if row["outbound_data"] != "NONE" || row["minimum_confidence"] != "HIGH" || row["selected"] != true {
			t.Errorf("the policy flags apply to every imported server: %v", row)
		}
	}
	if rows[1]["type"] != "http" || rows[1]["target"] != "http://127.0.0.1:9/mcp" || rows[1]["name"] != "web-api" {
		t.Errorf("the HTTP server: %v", rows[1])
	}
	if h, _ := rows[1]["headers"].([]any); len(h) != 1 || h[0] != "Authorization" {
		t.Errorf("the header is named as a secret: %v", rows[1]["headers"])
	}

	// Crush, only one of its servers; $VAR becomes ${VAR}.
	r = steward(t, home, "", nil, "mcp", "import", crush, "--only", "files")
	wantExit(t, r, 0, `Imported MCP server "files" as files.`)
	if strings.Contains(r.stderr, `"other"`) {
		t.Errorf("--only files imported other: %s", r.stderr)
	}
	if ids := settingsServers(t, home); !slices.Equal(ids, []string{"fs", "web_api", "files"}) {
		t.Fatalf("servers after the Crush import: %v", ids)
	}
	if b, err := os.ReadFile(filepath.Join(home, "config", "secrets.json")); err != nil || !strings.Contains(string(b), "${CRUSH_TOKEN}") {
		t.Errorf("the Crush $VAR is kept as ${VAR} in the secret store: %v\n%s", err, b)
	}

	// Importing again without --replace imports nothing and says why.
	r = steward(t, home, "", nil, "mcp", "import", crush, "--only", "files")
	wantExit(t, r, 1, `"files" was not imported`, "--replace", "no MCP server was imported")

	// Servers the file gets wrong are named with the reason; the rest is imported.
	mixed := write("mixed.json", `{"mcpServers": {
	  "evil": {"command": "node", "env": {"T": "$(cat ~/.ssh/id_rsa)"}},
	  "ws": {"type": "ws", "url": "ws://127.0.0.1:9/"},
	  "plain": {"command": "node", "args": ["plain.js"]}}}`)
	r = steward(t, home, "", nil, "mcp", "import", mixed)
	wantExit(t, r, 0, `MCP server "evil" was not imported: its environment variable T runs a command`,
		`MCP server "ws" was not imported: type "ws" is unknown: use stdio, http (streamable HTTP) or sse`, `Imported MCP server "plain" as plain.`)
	if ids := settingsServers(t, home); !slices.Equal(ids, []string{"fs", "web_api", "files", "plain"}) {
		t.Fatalf("servers after the mixed import: %v", ids)
	}

	// Wrong input.
	before, _ := os.ReadFile(filepath.Join(home, "config", "settings.json"))
	for _, c := range []struct {
		file string
		code int
		want []string
	}{
		{write("cut.json", `{"mcpServers": `), 1, []string{"cut.json", "not a JSON object", `{"mcpServers": {...}} (Claude Code) or {"mcp": {...}} (Crush)`}},
		{write("none.json", `{"servers": {}}`), 1, []string{"none.json", "no MCP servers", `"mcpServers"`, `"mcp" (Crush)`}},
		{filepath.Join(home, "missing.json"), 1, []string{"reading ", "missing.json", "no such file"}},
	} {
		wantExit(t, steward(t, home, "", nil, "mcp", "import", c.file), c.code, c.want...)
	}
	wantExit(t, steward(t, home, "", nil, "mcp", "import"), 2, "mcp import takes one file")
	wantExit(t, steward(t, home, "", nil, "mcp", "import", crush, "--outbound-data", "ANYWHERE"), 2, "--outbound-data", "ANYWHERE")
	if after, _ := os.ReadFile(filepath.Join(home, "config", "settings.json")); string(after) != string(before) {
		t.Errorf("a failed import changed settings.json:\n%s\n->\n%s", before, after)
	}
}
