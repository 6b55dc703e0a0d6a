// Steward's chat page. It talks only to this server's API (same origin, the
// access token travels in a cookie) and renders every text from a model or
// a tool through StewardMarkdown, which builds DOM nodes from text.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const MD = window.StewardMarkdown;

  const state = {
    chats: [],
    chat: null, // the open chat's view
    providers: [],
    streaming: null, // {chatId, abort}
    view: "chat",
    toolEdits: 0,
    toolLoads: 0,
  };

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }

  async function api(method, path, body) {
    const opts = { method: method, headers: {}, credentials: "same-origin" };
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    const res = await fetch(path, opts);
    if (res.status === 204) return null;
    const data = await res.json().catch(() => null);
    if (!res.ok) {
      const msg = data && data.error ? data.error.message : res.status + " " + res.statusText;
      const err = new Error(msg);
      err.status = res.status;
      err.code = data && data.error ? data.error.code : "";
      throw err;
    }
    return data;
  }

  function setStatus(text) {
    $("status").textContent = text || "";
  }

  // ---- views ---------------------------------------------------------

  const views = { chat: "chat-view", settings: "settings-view", status: "status-view", read: "read-view" };

  function showView(name) {
    state.view = name;
    for (const [k, id] of Object.entries(views)) {
      $(id).hidden = k !== name;
      $("view-" + k).setAttribute("aria-pressed", String(k === name));
    }
    if (name === "settings") loadSettings();
    if (name === "status") loadStatus();
  }

  // ---- chat list -----------------------------------------------------

  async function loadChats() {
    try {
      const data = await api("GET", "/api/chats");
      state.chats = data.chats;
      renderChatList();
      // Another tab may have started a turn in the open chat.
      if (state.chat && !state.streaming) {
        const c = state.chats.find((x) => x.id === state.chat.id);
        if (c && c.running) followTurn(state.chat.id);
      }
    } catch (e) {
      setStatus("Could not list the chats: " + e.message);
    }
  }

  function renderChatList() {
    const ul = $("chat-list");
    const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.chatId : null;
    ul.replaceChildren();
    if (state.chats.length === 0) {
      ul.appendChild(el("li", "hint", "No chats yet."));
    }
    for (const c of state.chats) {
      const li = el("li");
      const b = el("button", "", c.title || "Untitled chat");
      b.type = "button";
      b.dataset.chatId = c.id;
      if (state.chat && state.chat.id === c.id) b.setAttribute("aria-current", "true");
      if (c.running) {
        b.appendChild(document.createTextNode(" "));
        b.appendChild(el("span", "running-mark", "(answering)"));
      }
      b.addEventListener("click", () => openChat(c.id));
      li.appendChild(b);
      ul.appendChild(li);
      if (focused === c.id) b.focus();
    }
  }

  async function newChat() {
    try {
      const body = {};
      const prov = $("provider").value;
      if (prov) body.provider = prov;
      const c = await api("POST", "/api/chats", body);
      await loadChats();
      await openChat(c.id);
      $("composer-text").focus();
    } catch (e) {
      setStatus("Could not start a chat: " + e.message);
    }
  }

  async function openChat(id) {
    showView("chat");
    // The tool list is about to be redrawn for this chat: it is busy from
    // now on, not only while its own request runs, so that nobody (a user
    // or a test) acts on the old list in between.
    const box = $("tool-list");
    state.toolLoads++;
    box.setAttribute("aria-busy", "true");
    try {
      try {
        state.chat = await api("GET", "/api/chats/" + encodeURIComponent(id));
      } catch (e) {
        setStatus("Could not open the chat: " + e.message);
        return;
      }
      history.replaceState(null, "", "#chat=" + encodeURIComponent(id));
      renderChat();
      renderChatList();
      await loadProviders();
      await loadTools();
    } finally {
      if (--state.toolLoads === 0) box.removeAttribute("aria-busy");
    }
    if (state.chat.running && !state.streaming) followTurn(id);
  }

  // ---- the open chat -----------------------------------------------

  function renderChat() {
    const c = state.chat;
    $("chat-title").textContent = c ? c.title || "Untitled chat" : "No chat open";
    $("rename").hidden = !c;
    $("delete-chat").hidden = !c;
    renderRequirements();
    const box = $("messages");
    box.replaceChildren();
    if (!c) return;
    c.messages.forEach((m) => box.appendChild(renderMessage(m)));
    box.scrollTop = box.scrollHeight;
    updateComposer();
  }

  function renderRequirements() {
    const c = state.chat;
    $("req-confidence").textContent = c ? c.required_confidence : "—";
    $("req-security").textContent = c ? c.data_security : "—";
    if (c && c.outbound) {
      const who = c.outbound.mailbox_name || c.outbound.mailbox_id;
      $("req-outbound").textContent = c.outbound.restriction + (who ? " — demanded by " + who : "");
    } else {
      $("req-outbound").textContent = c ? "UNRESTRICTED" : "—";
    }
  }

  function clickableFor(links) {
    const allowed = new Set((links || []).filter((l) => l.clickable).map((l) => l.url));
    return (u) => allowed.has(u);
  }

  function renderMessage(m) {
    const div = el("article", "msg " + m.role);
    div.appendChild(el("p", "who", m.role === "user" ? "You" : "Steward"));
    const body = el("div", "body");
    body.appendChild(MD.render(m.text, clickableFor(m.links)));
    div.appendChild(body);
    if (m.documents && m.documents.length) {
      div.appendChild(el("p", "hint", "Attached: " + m.documents.join(", ")));
    }
    if (m.role === "assistant") {
      if (m.traces && m.traces.length) div.appendChild(renderTraces(m.traces));
      if (m.filter && m.filter.length) div.appendChild(renderFilter(m.filter));
      if (m.sources && m.sources.length) div.appendChild(renderSources(m.sources, clickableFor(m.links)));
    }
    return div;
  }

  function renderTraces(traces) {
    const sec = el("section", "activity");
    sec.setAttribute("aria-label", "Tool activity");
    sec.appendChild(el("h4", "", "Tool activity"));
    traces.forEach((t) => sec.appendChild(renderTrace(t)));
    return sec;
  }

  function renderTrace(t) {
    const d = el("details", "trace");
    d.dataset.order = t.order;
    const s = el("summary");
    const badge = el("span", "badge " + t.status, t.status === "SUCCESS" ? "DONE" : t.status);
    s.appendChild(badge);
    s.appendChild(document.createTextNode(" " + t.name));
    if (t.status_message) {
      s.appendChild(document.createTextNode(" — "));
      s.appendChild(el("span", t.status === "ERROR" ? "error-line" : "", t.status_message));
    }
    d.appendChild(s);
    if (t.status !== "SUCCESS") d.open = true;
    const args = t.arguments;
    if (args === null) {
      d.appendChild(el("p", "hint", "The arguments were not a JSON object."));
    } else if (args && args.length) {
      const dl = el("dl", "args");
      args.forEach((a) => {
        dl.appendChild(el("dt", "", a.name));
        dl.appendChild(el("dd", a.value === "*****" ? "masked" : "", a.value === "*****" ? "***** (sensitive, not shown)" : a.value));
      });
      d.appendChild(dl);
    } else if (args) {
      d.appendChild(el("p", "hint", "No arguments."));
    }
    return d;
  }

  function renderFilter(reports) {
    const sec = el("section", "filter");
    sec.setAttribute("aria-label", "Prompt-injection filter");
    sec.appendChild(el("h4", "", "Removed by the prompt-injection filter"));
    const ul = el("ul");
    reports.forEach((r) => {
      (r.sources || []).forEach((s) => {
        const li = el("li");
        const rules = s.findings.map((f) => f.category + " (" + f.rule + ")");
        li.appendChild(el("strong", "", s.label || s.kind));
        li.appendChild(document.createTextNode(" [" + s.kind + "] — " + s.findings.length + " finding(s) in " + (s.fields || []).join(", ") + ": " + Array.from(new Set(rules)).join(", ")));
        ul.appendChild(li);
      });
      if (r.warning) ul.appendChild(el("li", "error-line", r.warning));
    });
    sec.appendChild(ul);
    return sec;
  }

  function renderSources(sources, clickable) {
    const sec = el("section", "sources");
    sec.setAttribute("aria-label", "Sources used by tools");
    sec.appendChild(el("h4", "", "Sources used by tools"));
    const ol = el("ol");
    sources.forEach((s) => {
      const li = el("li");
      const title = s.title || s.url;
      if (/^mailbox:\/\//.test(s.url)) {
        li.appendChild(document.createTextNode(title + " (" + s.url + ")"));
      } else {
        const md = MD.render("[" + title.replace(/[\[\]]/g, "") + "](" + s.url + ")", clickable);
        const p = md.firstChild;
        if (p) while (p.firstChild) li.appendChild(p.firstChild);
      }
      ol.appendChild(li);
    });
    sec.appendChild(ol);
    return sec;
  }

  // ---- providers and tools --------------------------------------------

  async function loadProviders() {
    const q = state.chat ? "?chat=" + encodeURIComponent(state.chat.id) : "";
    try {
      const data = await api("GET", "/api/providers" + q);
      state.providers = data.providers;
      const sel = $("provider");
      const current = (state.chat && state.chat.provider) || sel.value || data.default;
      sel.replaceChildren();
      for (const p of data.providers) {
        const label = p.title + " — confidence " + p.confidence + (p.allowed_for_chat ? "" : " (not allowed for this chat)");
        const o = el("option", "", label);
        o.value = p.id;
        sel.appendChild(o);
      }
      if (current) sel.value = current;
      $("model").value = (state.chat && state.chat.model) || "";
      $("model").placeholder = providerById(sel.value) ? providerById(sel.value).model || "" : "";
      explainProvider();
    } catch (e) {
      setStatus("Could not list the providers: " + e.message);
    }
  }

  function providerById(id) {
    return state.providers.find((p) => p.id === id);
  }

  // explainProvider says why the chosen provider may not answer in this
  // chat, and keeps Send off until another is chosen.
  function explainProvider() {
    const p = providerById($("provider").value);
    const why = $("provider-why");
    if (p && !p.allowed_for_chat) {
      why.textContent = p.title + " cannot answer in this chat: " + p.not_allowed_because;
      why.hidden = false;
    } else {
      why.textContent = "";
      why.hidden = true;
    }
    updateComposer();
  }

  async function chooseProvider() {
    const p = providerById($("provider").value);
    $("model").placeholder = p ? p.model || "" : "";
    explainProvider();
    if (state.chat && p && p.allowed_for_chat) {
      try {
        state.chat = await api("PATCH", "/api/chats/" + encodeURIComponent(state.chat.id), { provider: p.id, model: $("model").value });
      } catch (e) {
        setStatus(e.message);
      }
    }
    await loadTools();
  }

  async function loadTools() {
    const params = new URLSearchParams();
    if ($("provider").value) params.set("provider", $("provider").value);
    if ($("model").value) params.set("model", $("model").value);
    if (state.chat) params.set("chat", state.chat.id);
    const edits = state.toolEdits;
    const box = $("tool-list");
    state.toolLoads++;
    box.setAttribute("aria-busy", "true");
    try {
      const data = await api("GET", "/api/tools?" + params.toString());
      // A choice made while the list was asked for wins over the answer.
      if (edits !== state.toolEdits) data.selected = selectedTools();
      renderTools(data);
    } catch (e) {
      $("tool-list").replaceChildren(el("p", "why", "Could not list the tools: " + e.message));
    } finally {
      if (--state.toolLoads === 0) box.removeAttribute("aria-busy");
    }
  }

  function renderTools(data) {
    const box = $("tool-list");
    // A redraw must not take the focus from a keyboard user in the list.
    const focused = box.contains(document.activeElement) ? document.activeElement.id : "";
    box.replaceChildren();
    const selected = new Set(data.selected || []);
    if (!data.tools.length) box.appendChild(el("p", "hint", "No tools are available in this installation."));
    for (const t of data.tools) {
      const item = el("div", "tool-item");
      const id = "tool-" + t.id;
      const cb = el("input");
      cb.type = "checkbox";
      cb.id = id;
      cb.value = t.id;
      cb.checked = selected.has(t.id) || t.tools.some((x) => selected.has(x));
      cb.addEventListener("change", saveTools);
      const label = el("label", "", " " + t.id);
      label.htmlFor = id;
      item.appendChild(cb);
      item.appendChild(label);
      const notes = [];
      if (t.tools.length > 1 || (t.tools.length === 1 && t.tools[0] !== t.id)) notes.push("tools: " + t.tools.join(", "));
      if (!t.active) notes.push("switched off");
      if (!t.configured) notes.push(t.configuration);
      notes.push("minimum confidence " + t.minimum_confidence);
      if (t.offered === false) notes.push("not offered: " + t.not_offered_because);
      if (t.offered === true) notes.push("offered");
      const hint = el("span", "hint", notes.join("; "));
      hint.id = id + "-hint";
      cb.setAttribute("aria-describedby", hint.id);
      item.appendChild(hint);
      box.appendChild(item);
    }
    if (focused && $(focused)) $(focused).focus();
    $("tool-tokens").textContent = data.provider && data.tool_tokens >= 0
      ? "The tools offered to " + data.provider.title + " add about " + data.tool_tokens + " tokens to each request."
      : "";
  }

  function selectedTools() {
    return Array.from(document.querySelectorAll("#tool-list input[type=checkbox]")).filter((c) => c.checked).map((c) => c.value);
  }

  async function saveTools() {
    state.toolEdits++;
    if (!state.chat) return;
    try {
      state.chat = await api("PATCH", "/api/chats/" + encodeURIComponent(state.chat.id), { tools: selectedTools() });
    } catch (e) {
      setStatus(e.message);
    }
  }

  // ---- sending and streaming ------------------------------------------

  function updateComposer() {
    const p = providerById($("provider").value);
    const forbidden = p && !p.allowed_for_chat;
    const busy = !!state.streaming || (state.chat && state.chat.running);
    $("send").disabled = !state.chat || busy || forbidden;
    $("stop").hidden = !busy;
  }

  async function send(ev) {
    ev.preventDefault();
    const text = $("composer-text").value;
    if (!text.trim()) return;
    if (!state.chat) await newChat();
    if (!state.chat) return;
    const p = providerById($("provider").value);
    if (p && !p.allowed_for_chat) {
      explainProvider();
      return;
    }
    const body = { text: text, tools: selectedTools() };
    if ($("provider").value) body.provider = $("provider").value;
    body.model = $("model").value;
    const id = state.chat.id;
    state.chat.messages.push({ role: "user", text: text, links: [], documents: [] });
    $("messages").appendChild(renderMessage(state.chat.messages[state.chat.messages.length - 1]));
    $("composer-text").value = "";
    await stream(id, "POST", "/api/chats/" + encodeURIComponent(id) + "/turns", body);
  }

  function followTurn(id) {
    if (state.streaming) return;
    stream(id, "GET", "/api/chats/" + encodeURIComponent(id) + "/turn");
  }

  // stream reads one turn's Server-Sent Events and shows them as they come.
  async function stream(chatId, method, path, body) {
    const ctrl = new AbortController();
    state.streaming = { chatId: chatId, abort: ctrl };
    updateComposer();
    setStatus("Answering…");
    // The list stays busy until the stored chat is read back: only then are
    // the answer's links decided.
    $("messages").setAttribute("aria-busy", "true");
    const live = liveMessage();
    try {
      const opts = { method: method, credentials: "same-origin", signal: ctrl.signal, headers: {} };
      if (body !== undefined) {
        opts.headers["Content-Type"] = "application/json";
        opts.body = JSON.stringify(body);
      }
      const res = await fetch(path, opts);
      if (res.status === 204) {
        live.remove();
        return;
      }
      if (!res.ok) {
        const data = await res.json().catch(() => null);
        throw new Error(data && data.error ? data.error.message : res.status + " " + res.statusText);
      }
      const reader = res.body.getReader();
      const dec = new TextDecoder();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let cut;
        while ((cut = buf.indexOf("\n\n")) >= 0) {
          const frame = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          const data = frame.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
          if (data && state.chat && state.chat.id === chatId) live.event(JSON.parse(data));
        }
      }
    } catch (e) {
      if (e.name !== "AbortError") live.error(e.message);
    } finally {
      state.streaming = null;
      setStatus("");
      if (state.chat && state.chat.id === chatId) {
        try {
          state.chat = await api("GET", "/api/chats/" + encodeURIComponent(chatId));
          const keepFocus = document.activeElement;
          renderChat();
          await loadProviders();
          await loadTools();
          if (keepFocus && document.body.contains(keepFocus)) keepFocus.focus();
        } catch (e) {
          setStatus(e.message);
        }
      }
      $("messages").removeAttribute("aria-busy");
      updateComposer();
      loadChats();
    }
  }

  // liveMessage is the answer being written: text arrives as plain text
  // (no link is clickable until the answer is stored and checked), tool
  // calls appear as they run.
  function liveMessage() {
    const div = el("article", "msg assistant");
    div.setAttribute("aria-busy", "true");
    div.appendChild(el("p", "who", "Steward"));
    const body = el("div", "body");
    div.appendChild(body);
    const activity = el("section", "activity");
    activity.appendChild(el("h4", "", "Tool activity"));
    activity.hidden = true;
    div.appendChild(activity);
    const filter = el("div");
    div.appendChild(filter);
    const sources = el("div");
    div.appendChild(sources);
    const errors = el("div");
    div.appendChild(errors);
    $("messages").appendChild(div);
    let text = "";
    let pending = null;
    const draw = () => {
      pending = null;
      body.replaceChildren(MD.render(text, () => false));
      $("messages").scrollTop = $("messages").scrollHeight;
    };
    return {
      remove: () => div.remove(),
      error: (msg) => errors.appendChild(el("p", "error-line", msg)),
      event: (ev) => {
        switch (ev.type) {
          case "text":
            text += ev.text;
            if (!pending) pending = requestAnimationFrame(draw);
            break;
          case "tool_call": {
            activity.hidden = false;
            const d = el("details", "trace");
            d.dataset.order = ev.call.order;
            const s = el("summary");
            s.appendChild(el("span", "badge RUNNING", "RUNNING"));
            s.appendChild(document.createTextNode(" " + ev.call.name));
            d.appendChild(s);
            activity.appendChild(d);
            setStatus("Using tool: " + ev.call.name);
            break;
          }
          case "trace": {
            activity.hidden = false;
            const old = activity.querySelector('details[data-order="' + ev.trace.order + '"]');
            const n = renderTrace(ev.trace);
            if (old) old.replaceWith(n);
            else activity.appendChild(n);
            setStatus("Answering…");
            break;
          }
          case "filter":
            filter.appendChild(renderFilter([ev.filter]));
            break;
          case "sources":
            sources.replaceChildren(renderSources(ev.sources.filter((s) => s.origin !== "provider"), () => false));
            break;
          case "error":
            errors.appendChild(el("p", "error-line", ev.error));
            break;
          case "done":
            div.removeAttribute("aria-busy");
            if (pending) {
              cancelAnimationFrame(pending);
              draw();
            }
            break;
        }
      },
    };
  }

  async function stop() {
    if (!state.chat) return;
    try {
      await api("POST", "/api/chats/" + encodeURIComponent(state.chat.id) + "/turn/cancel", {});
      setStatus("Stopping…");
    } catch (e) {
      setStatus(e.message);
    }
  }

  // ---- rename and delete --------------------------------------------

  function startRename() {
    $("rename-form").hidden = false;
    $("rename-input").value = state.chat ? state.chat.title : "";
    $("rename-input").focus();
  }

  async function saveRename() {
    if (!state.chat) return;
    try {
      state.chat = await api("PATCH", "/api/chats/" + encodeURIComponent(state.chat.id), { title: $("rename-input").value });
      $("rename-form").hidden = true;
      renderChat();
      await loadChats();
      $("rename").focus();
    } catch (e) {
      setStatus(e.message);
    }
  }

  async function deleteChat() {
    if (!state.chat) return;
    if (!window.confirm("Delete the chat “" + (state.chat.title || "Untitled chat") + "”?")) return;
    try {
      await api("DELETE", "/api/chats/" + encodeURIComponent(state.chat.id));
      state.chat = null;
      history.replaceState(null, "", "#");
      renderChat();
      await loadChats();
      $("new-chat").focus();
    } catch (e) {
      setStatus(e.message);
    }
  }

  // ---- settings, status, read ----------------------------------------

  async function loadSettings() {
    const box = $("settings-list");
    try {
      const data = await api("GET", "/api/settings");
      box.replaceChildren();
      if (!data.settings.length) box.appendChild(el("p", "hint", "No tool has settings."));
      data.settings.forEach((s, n) => box.appendChild(renderSetting(s, n)));
    } catch (e) {
      box.replaceChildren(el("p", "why", "Could not read the settings: " + e.message));
    }
  }

  function renderSetting(s, n) {
    const div = el("div", "setting");
    const id = "setting-" + n;
    const label = el("label", "", s.key + (s.title ? " — " + s.title : ""));
    label.htmlFor = id;
    div.appendChild(label);
    if (s.description) div.appendChild(el("p", "hint", s.description));
    const row = el("div", "row");
    let input;
    if (s.enum && s.enum.length) {
      input = el("select");
      input.appendChild(el("option", "", "(not set" + (s.default ? "; default " + s.default : "") + ")"));
      input.firstChild.value = "";
      s.enum.forEach((v) => {
        const o = el("option", "", v);
        o.value = v;
        input.appendChild(o);
      });
      input.value = s.value;
    } else {
      input = el("input");
      input.type = s.write_only ? "password" : "text";
      input.autocomplete = "off";
      input.value = s.write_only ? "" : s.value;
      input.placeholder = s.write_only ? (s.is_set ? "(secret set — type to replace)" : "(secret not set)") : s.default ? "default " + s.default : "";
    }
    input.id = id;
    row.appendChild(input);
    const note = el("span", s.locked_by ? "locked" : "hint", s.locked_by ? "Locked by the organization plugin “" + s.locked_by + "”" : s.origin);
    if (s.locked_by) {
      input.disabled = true;
    } else {
      const save = el("button", "", "Save");
      save.type = "button";
      save.addEventListener("click", async () => {
        try {
          await api("PUT", "/api/settings/" + encodeURIComponent(s.key), { value: input.value });
          note.textContent = "Saved.";
          loadSettings();
        } catch (e) {
          note.textContent = e.message;
        }
      });
      row.appendChild(save);
    }
    row.appendChild(note);
    div.appendChild(row);
    return div;
  }

  async function loadStatus() {
    try {
      const mb = await api("GET", "/api/mailboxes");
      const box = $("mailbox-list");
      box.replaceChildren();
      if (!mb.mailboxes.length) box.appendChild(el("p", "hint", "No mailboxes configured (steward mail add)."));
      else box.appendChild(table(["Mailbox", "Requires", "After reading", "Index", "Last complete sync"], mb.mailboxes.map((m) => [
        m.name + " (" + m.id + ")",
        m.required_confidence,
        m.outbound_data_restriction,
        m.problem ? m.problem : m.mails + " mails, " + m.chunks + " chunks, " + m.embedded + " embedded" + (m.never_synced ? "; never synced" : ""),
        m.sign_in_refused_at ? "sign-in refused at " + m.sign_in_refused_at : m.last_complete_sync || "not completed",
      ])));
      if (!mb.tools_enabled) box.appendChild(el("p", "hint", "The mail tools are a preview feature that is switched off."));
      const prov = $("provider").value;
      const ds = await api("GET", "/api/datasources" + (prov ? "?provider=" + encodeURIComponent(prov) : ""));
      const src = $("source-list");
      src.replaceChildren();
      if (!ds.data_sources.length) src.appendChild(el("p", "hint", "No data sources configured (steward sources add)."));
      else src.appendChild(table(["Data source", "Kind", "Requires", "Index", "For the chosen provider"], ds.data_sources.map((d) => [
        d.name + " (" + d.id + ")",
        d.kind + ", " + d.search_mode,
        d.required_provider_confidence + ", " + d.data_security,
        d.index ? (d.index.indexed ? d.index.documents + " documents, " + d.index.chunks + " chunks" + (d.index.complete ? "" : " (last run incomplete)") : "not indexed yet") : d.address || "",
        d.usable === undefined ? "" : d.usable ? "usable" : "not usable: " + d.not_usable_because,
      ])));
      if (!ds.preview_enabled && ds.data_sources.length) src.appendChild(el("p", "hint", "Data sources are a preview feature that is switched off (PRE_RAG_2024)."));
      const mcp = $("mcp-list");
      mcp.replaceChildren();
      if (!ds.mcp_servers.length) mcp.appendChild(el("p", "hint", "No MCP servers configured."));
      else mcp.appendChild(table(["Server", "Type", "Configured by", "State"], ds.mcp_servers.map((s) => [s.name + " (" + s.id + ")", s.type, s.configured_by, s.state + (s.problem ? ": " + s.problem : "")])));
    } catch (e) {
      $("mailbox-list").replaceChildren(el("p", "why", e.message));
    }
  }

  function table(head, rows) {
    const t = el("table");
    const tr = el("tr");
    head.forEach((h) => tr.appendChild(el("th", "", h)));
    const thead = el("thead");
    thead.appendChild(tr);
    t.appendChild(thead);
    const tb = el("tbody");
    rows.forEach((r) => {
      const row = el("tr");
      r.forEach((c) => row.appendChild(el("td", "", c)));
      tb.appendChild(row);
    });
    t.appendChild(tb);
    return t;
  }

  async function readPage(ev) {
    ev.preventDefault();
    const out = $("read-result");
    out.replaceChildren(el("p", "hint", "Reading…"));
    try {
      const r = await api("POST", "/api/read", { url: $("read-url").value });
      out.replaceChildren();
      const p = r.page;
      out.appendChild(el("p", "", "Address: " + p.final_url));
      if (p.title) out.appendChild(el("p", "", "Title: " + p.title));
      out.appendChild(el("p", "", "Kind: " + p.content_kind + (p.media_type ? " (" + p.media_type + ")" : "") + (p.truncated ? "; truncated from " + p.original_characters + " to " + p.returned_characters + " characters" : "")));
      const filtered = p.filtered || [];
      out.appendChild(el("p", filtered.length ? "why" : "hint", filtered.length
        ? "The filter neutralized " + filtered.length + " finding(s): " + filtered.map((f) => f.category + " in " + f.field + " (" + f.rule + ")").join("; ")
        : "The filter found nothing suspicious."));
      const md = el("div", "msg");
      md.appendChild(MD.render(p.markdown, clickableFor(r.links)));
      out.appendChild(md);
    } catch (e) {
      out.replaceChildren(el("p", "why", e.message));
    }
  }

  // ---- wiring -----------------------------------------------------------

  function init() {
    for (const k of Object.keys(views)) $("view-" + k).addEventListener("click", () => showView(k));
    $("new-chat").addEventListener("click", newChat);
    $("composer").addEventListener("submit", send);
    $("composer-text").addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        if (!$("send").disabled) $("composer").requestSubmit();
      }
    });
    $("stop").addEventListener("click", stop);
    $("provider").addEventListener("change", chooseProvider);
    $("model").addEventListener("change", chooseProvider);
    $("rename").addEventListener("click", startRename);
    $("rename-save").addEventListener("click", saveRename);
    $("rename-cancel").addEventListener("click", () => {
      $("rename-form").hidden = true;
      $("rename").focus();
    });
    $("rename-input").addEventListener("keydown", (e) => {
      if (e.key === "Enter") saveRename();
      if (e.key === "Escape") $("rename-cancel").click();
    });
    $("delete-chat").addEventListener("click", deleteChat);
    $("read-form").addEventListener("submit", readPage);
    document.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && state.streaming) stop();
    });
    renderChat();
    loadChats().then(() => {
      const m = /#chat=([^&]+)/.exec(location.hash);
      if (m) openChat(decodeURIComponent(m[1]));
      else loadProviders().then(loadTools);
    });
    window.addEventListener("hashchange", () => {
      const m = /#chat=([^&]+)/.exec(location.hash);
      if (m && (!state.chat || state.chat.id !== decodeURIComponent(m[1]))) openChat(decodeURIComponent(m[1]));
    });
    setInterval(() => {
      if (!document.hidden) loadChats();
    }, 4000);
  }

  init();
})();
