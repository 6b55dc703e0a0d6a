package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func concatSource(n int) string {
	var b strings.Builder
	b.WriteString("x = 'a'")
	for i := 0; i < n; i++ {
		b.WriteString("..'a'")
	}
	return b.String() + "\n"
}

// hostileOrgPlugins try to hang or crash every command (issues 15 and 18).
var hostileOrgPlugins = map[string]string{
	"backtracking":    `x = string.find(string.rep("a", 60), string.rep("a?", 60) .. string.rep("a", 60))` + "\n",
	"repoverflow":     `x = ("abcd"):rep(2^62)` + "\n",
	"gsubbomb":        `local s = string.rep("a", 2^20) x = s:gsub(".", s)` + "\n",
	"concatbomb":      `local s = string.rep("x", 2^20) local t = {} for i = 1, 1e3 do t[i] = s end x = table.concat(t)` + "\n",
	"unpack":          `x = unpack({}, 1, 1e8)` + "\n",
	"tailcall":        "local function f(n) return f(n + 1) end\nf(1)\n",
	"compile":         concatSource(200000),
	"amplified":       "local s = string.rep('x', 2^20)\nlocal t = " + strings.TrimSuffix(strings.Repeat("s..", 150), "..") + "\nlocal u = " + strings.TrimSuffix(strings.Repeat("t..", 150), "..") + "\nx = #u\n",
	"sortcomparator":  "local t = {} for i = 1, 100 do t[i] = i end\ntable.sort(t, function(a, b) while true do end end)\n",
	"concatloop":      "local s = 'xxxxxxxxxxxxxxxx'\nwhile true do s = s .. s end\n",
	"gsubmanymatches": `local s = string.rep("a", 2^20) for i = 1, 1e6 do s = s:gsub("a", "a") end` + "\n",
}

// TestHostileOrganizationPluginsStallNoCommand puts every hostile plugin
// into the organization's plugins at once: providers, chats and ask still
// work, each within a bound, and each command reports every skipped plugin
// with one line on stderr.
func TestHostileOrganizationPluginsStallNoCommand(t *testing.T) {
	home := t.TempDir()
	for id, body := range hostileOrgPlugins {
		writeOrgPlugin(t, home, "org", id, body)
	}
	writeOrgPlugin(t, home, "org", "good", `CONFIG["SETTINGS"]["DataConfidence.ConfidenceScheme"] = "TRUST_EUROPE"`+"\n")
	p := newScripted(t, textReply("still answering"))
	for _, args := range [][]string{
		{"providers"},
		{"chats"},
		{"ask", "--provider", "vllm", "--base-url", p.baseURL(), "hi"},
	} {
		start := time.Now()
		r := steward(t, home, "", nil, args...)
		took := time.Since(start)
		if r.code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", args, r.code, r.stdout, r.stderr)
		}
		// Eleven plugins, some stopped at the 2 s limit each; before, one of
		// them ran forever and others crashed the process.
		if took > 50*time.Second {
			t.Errorf("%v took %v", args, took)
		}
		for id := range hostileOrgPlugins {
			n := 0
			for _, line := range strings.Split(r.stderr, "\n") {
				if strings.Contains(line, filepath.Join(id, "plugin.lua")) && strings.Contains(line, "not loaded") {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%v: %d lines on stderr report the skipped plugin %s, want 1:\n%s", args, n, id, r.stderr)
			}
		}
		if strings.Contains(r.stderr, "goroutine") || strings.Contains(r.stderr, "fatal error") {
			t.Fatalf("%v: a crash trace reached the user:\n%s", args, r.stderr)
		}
		t.Logf("steward %s with %d hostile organization plugins: %v", args[0], len(hostileOrgPlugins), took.Round(time.Millisecond))
	}
}

// TestInterruptStopsAPluginThatRuns sends SIGINT and SIGTERM while an
// organization plugin backtracks: Steward ends at once, said so, and did
// not wait for the plugin's time limit.
func TestInterruptStopsAPluginThatRuns(t *testing.T) {
	home := t.TempDir()
	writeOrgPlugin(t, home, "org", "backtracking", hostileOrgPlugins["backtracking"])
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		cmd := exec.Command(binary, "providers")
		cmd.Env = []string{"HOME=" + home, "STEWARD_CONFIG_DIR=" + filepath.Join(home, "config"), "STEWARD_DATA_DIR=" + filepath.Join(home, "data"), "STEWARD_NO_OLLAMA_PROBE=1", "DBUS_SESSION_BUS_ADDRESS=disabled:"}
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Signal only once the plugin runs (in its child process): under
		// load a signal sent after a fixed wait could reach steward before
		// it had started at all.
		waitForChildProcess(t, cmd.Process.Pid)
		sent := time.Now()
		cmd.Process.Signal(sig)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("%v: steward ignored the signal", sig)
		}
		code := cmd.ProcessState.ExitCode()
		// Ended by the signal (cancelled, or 130 for Ctrl-C), not by the
		// plugin's time limit.
		if code == 0 || !strings.Contains(errb.String(), "cancel") && code != 130 && code != 143 || strings.Contains(errb.String(), "time limit") {
			t.Fatalf("%v: exit %d, stderr %q", sig, cmd.ProcessState.ExitCode(), errb.String())
		}
		t.Logf("%v ended steward %v after it was sent", sig, time.Since(sent).Round(time.Millisecond))
	}
}

// TestLocalPluginCannotTakeOverAnOrganizationMailbox: the organization's
// mailbox team demands HIGH; a local plugin redefining team with VERY_LOW
// must not get search_mails offered to a MEDIUM cloud provider (issue 17).
func TestLocalPluginCannotTakeOverAnOrganizationMailbox(t *testing.T) {
	mailbox := func(level, outbound string) string {
		return `CONFIG["MAILBOXES"] = { { ["Id"] = "team", ["Name"] = "Team", ["Host"] = "127.0.0.1", ["Port"] = 1993, ["Security"] = "TLS",
  ["Username"] = "team", ["RequiredProviderConfidence"] = "` + level + `", ["OutboundDataRestriction"] = "` + outbound + `" } }
CONFIG["SETTINGS"]["DataApp.EnabledPreviewFeatures"] = { "PRE_RAG_2024", "PRE_MAILBOXES_2026" }
`
	}
	offered := func(t *testing.T, home string) (bool, string) {
		p := newScripted(t, textReply("ok"))
		r := steward(t, home, "", []string{"OPENAI_API_KEY=sk-test"}, "ask", "--provider", "openai", "--base-url", p.baseURL(), "--tools", "mailboxes", "hi")
		if r.code != 0 {
			t.Fatalf("ask: %d %s", r.code, r.stderr)
		}
		tools, _ := json.Marshal(p.request(0)["tools"])
		return strings.Contains(string(tools), `"search_mails"`), r.stderr
	}
	// Control: the local plugin alone offers its own mailbox to MEDIUM.
	solo := t.TempDir()
	writeOrgPlugin(t, solo, "local", "mine", mailbox("VERY_LOW", "UNRESTRICTED"))
	if ok, stderr := offered(t, solo); !ok {
		t.Fatalf("the local mailbox alone must be offered (the test would prove nothing otherwise): %s", stderr)
	}
	home := t.TempDir()
	writeOrgPlugin(t, home, "org", "it", mailbox("HIGH", "ONLY_CONFIGURED_SERVICES"))
	writeOrgPlugin(t, home, "local", "mine", mailbox("VERY_LOW", "UNRESTRICTED"))
	ok, stderr := offered(t, home)
	if ok {
		t.Fatalf("a local plugin took over the organization's mailbox: search_mails was offered to a MEDIUM provider\n%s", stderr)
	}
	var lines []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, `mailbox "team"`) {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], `"Plugin it"`) || !strings.Contains(lines[0], `"Plugin mine"`) {
		t.Fatalf("want one line naming both plugins, got %q", stderr)
	}
}

// TestUnreadableSecuritySettingsCountAsStrictest: the typos leave
// a MEDIUM provider refused, not answering, and every command names the
// file, line and field (issue 17).
func TestUnreadableSecuritySettingsCountAsStrictest(t *testing.T) {
	home := t.TempDir()
	plugin := writeOrgPlugin(t, home, "org", "it", `CONFIG["SETTINGS"]["DataConfidence.EnforceGlobalMinimumConfidence"] = "true"
CONFIG["SETTINGS"]["DataConfidence.GlobalMinimumConfidence"] = "HIGH"
CONFIG["SETTINGS"]["DataMailboxes.MinimumOutboundDataRestriction"] = "ONLY_CONFIGURED_SERVICE"
`)
	p := newScripted(t, textReply("leaked"))
	r := steward(t, home, "", []string{"OPENAI_API_KEY=sk-test"}, "ask", "--provider", "openai", "--base-url", p.baseURL(), "hi")
	if r.code == 0 || strings.Contains(r.stdout, "leaked") {
		t.Fatalf("a MEDIUM provider answered under an enforced HIGH minimum: exit %d %q", r.code, r.stdout)
	}
	for _, want := range []string{plugin + ":7: DataConfidence.EnforceGlobalMinimumConfidence", plugin + ":9: DataMailboxes.MinimumOutboundDataRestriction"} {
		if n := strings.Count(r.stderr, want); n != 1 {
			t.Errorf("stderr names %q %d times, want once:\n%s", want, n, r.stderr)
		}
	}
	// A misspelt level inside the map costs that entry, not the map.
	home = t.TempDir()
	writeOrgPlugin(t, home, "org", "it", `CONFIG["SETTINGS"]["DataTools.MinimumProviderConfidenceByToolId"] = {
  ["web_search"] = "MEDIUM",
  ["read_web_page"] = "HIHG",
}
`)
	os.WriteFile(filepath.Join(home, "config", "settings.json"), []byte(`{"version":2,"tools":{"web_search":{"searxng.baseUrl":"http://127.0.0.1:9/","defaultLanguage":"en"}}}`), 0o600)
	r = steward(t, home, "", []string{"OPENAI_API_KEY=sk-test"}, "tools", "--provider", "openai", "--json")
	var out struct {
		Tools []struct {
			ID      string `json:"id"`
			Offered *bool  `json:"offered"`
			Reason  string `json:"reason"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	got := map[string]bool{}
	for _, tl := range out.Tools {
		got[tl.ID] = tl.Offered != nil && *tl.Offered
	}
	if got["read_web_page"] || !got["web_search"] {
		t.Fatalf("read_web_page must count as HIGH (not offered to MEDIUM), web_search keep MEDIUM (offered): %v\n%s", got, r.stderr)
	}
	if !strings.Contains(r.stderr, `:9: DataTools.MinimumProviderConfidenceByToolId["read_web_page"]`) {
		t.Fatalf("stderr must name file, line and entry: %s", r.stderr)
	}
}

// waitForChildProcess waits until the process pid has a child process
// (read from /proc), for at most 30 seconds.
func waitForChildProcess(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		stats, _ := filepath.Glob("/proc/[0-9]*/stat")
		for _, f := range stats {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			// pid (comm) state ppid ...; comm may hold spaces, so read
			// after its closing parenthesis.
			rest := string(b)
			if i := strings.LastIndexByte(rest, ')'); i >= 0 {
				rest = rest[i+1:]
			}
			fields := strings.Fields(rest)
			if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d started no plugin process within 30 s", pid)
}
