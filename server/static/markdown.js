// Steward's Markdown renderer for untrusted text (model answers, tool
// content). It never parses HTML: every piece of text becomes a text node,
// raw HTML tags are removed, and elements are built one by one. Links are
// made clickable only when the page says their address is allowed; images
// are never loaded, only offered as a link under the same rule.
"use strict";

(function (global) {
  const NOT_ALLOWED = "Not clickable: this chat's outbound data restriction does not allow this address.";

  // Raw HTML is removed, not shown: whole script, style and similar
  // elements with their content, comments, then every remaining tag.
  function stripHTML(s) {
    return s
      .replace(/<!--[\s\S]*?(-->|$)/g, "")
      .replace(/<(script|style|iframe|object|embed|svg|math|template|noscript|textarea|title)\b[\s\S]*?(<\/\1\s*>|$)/gi, "")
      .replace(/<\/?[A-Za-z][A-Za-z0-9:-]*(\s[^<>]*)?\/?>/g, "");
  }

  function isWebAddress(u) {
    try {
      const p = new URL(u);
      return p.protocol === "http:" || p.protocol === "https:";
    } catch (e) {
      return false;
    }
  }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // link builds a link to url labelled by the nodes of label, or the same
  // label as plain text when the address may not be reached.
  function link(url, labelNodes, labelText, clickable) {
    if (clickable(url) && isWebAddress(url)) {
      const a = document.createElement("a");
      a.setAttribute("href", url);
      a.setAttribute("target", "_blank");
      a.setAttribute("rel", "noopener noreferrer");
      a.setAttribute("referrerpolicy", "no-referrer");
      labelNodes.forEach((n) => a.appendChild(n));
      if (labelText !== url) a.title = url;
      return a;
    }
    const span = el("span", "link-off");
    labelNodes.forEach((n) => span.appendChild(n));
    if (labelText !== url) span.appendChild(document.createTextNode(" (" + url + ")"));
    span.title = NOT_ALLOWED;
    span.dataset.blockedHref = url;
    return span;
  }

  function image(url, alt, clickable) {
    const span = el("span", "image-off");
    span.appendChild(document.createTextNode("Image" + (alt ? ": " + alt : "") + " — not loaded. "));
    if (clickable(url) && isWebAddress(url)) {
      const a = link(url, [document.createTextNode("Open it in a new tab")], "", clickable);
      span.appendChild(a);
    } else {
      span.appendChild(document.createTextNode("(" + url + ", not allowed by this chat)"));
      span.title = NOT_ALLOWED;
    }
    return span;
  }

  const bareURL = /https?:\/\/[^\s<>"'`]+/y;

  function trimURL(u) {
    // Trailing punctuation belongs to the sentence, an unmatched ")" too.
    while (/[.,;:!?]$/.test(u)) u = u.slice(0, -1);
    while (u.endsWith(")") && (u.match(/\(/g) || []).length < (u.match(/\)/g) || []).length) u = u.slice(0, -1);
    return u;
  }

  // inline turns one block's text into nodes.
  function inline(text, clickable) {
    const out = [];
    let buf = "";
    const flush = () => {
      if (buf) out.push(document.createTextNode(buf));
      buf = "";
    };
    let i = 0;
    while (i < text.length) {
      const c = text[i];
      const rest = text.slice(i);
      let m;
      if (c === "`" && (m = /^(`+)([\s\S]*?[^`])\1(?!`)/.exec(rest))) {
        flush();
        out.push(el("code", "", m[2].replace(/^ (.*) $/, "$1")));
        i += m[0].length;
        continue;
      }
      if (c === "!" && (m = /^!\[([^\]]*)\]\(\s*<?([^\s)>]+)>?(?:\s+"[^"]*")?\s*\)/.exec(rest))) {
        flush();
        out.push(image(m[2], stripHTML(m[1]), clickable));
        i += m[0].length;
        continue;
      }
      if (c === "[" && (m = /^\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^\s)>]+)>?(?:\s+"[^"]*")?\s*\)/.exec(rest))) {
        flush();
        const label = m[1] === "" ? m[2] : m[1];
        out.push(link(m[2], inline(label, () => false).map(unlinked), stripHTML(label), clickable));
        i += m[0].length;
        continue;
      }
      if (c === "<" && (m = /^<(https?:\/\/[^\s<>]+)>/.exec(rest))) {
        flush();
        out.push(link(m[1], [document.createTextNode(m[1])], m[1], clickable));
        i += m[0].length;
        continue;
      }
      if (c === "<" && (m = /^(<!--[\s\S]*?(-->|$)|<(script|style|iframe|object|embed|svg|math|template|noscript|textarea|title)\b[\s\S]*?(<\/\3\s*>|$)|<\/?[A-Za-z][A-Za-z0-9:-]*(\s[^<>]*)?\/?>)/i.exec(rest))) {
        // Raw HTML is removed.
        i += m[0].length;
        continue;
      }
      if ((c === "h" || c === "H") && /^https?:\/\//i.test(rest)) {
        bareURL.lastIndex = i;
        const u = bareURL.exec(text);
        if (u) {
          const url = trimURL(u[0]);
          flush();
          out.push(link(url, [document.createTextNode(url)], url, clickable));
          i += url.length;
          continue;
        }
      }
      if ((c === "*" || c === "_") && (m = /^(\*\*|__)(?=\S)([\s\S]*?\S)\1/.exec(rest))) {
        flush();
        const s = el("strong");
        inline(m[2], clickable).forEach((n) => s.appendChild(n));
        out.push(s);
        i += m[0].length;
        continue;
      }
      if ((c === "*" || c === "_") && (m = /^([*_])(?=\S)([\s\S]*?\S)\1(?![*_])/.exec(rest))) {
        flush();
        const s = el("em");
        inline(m[2], clickable).forEach((n) => s.appendChild(n));
        out.push(s);
        i += m[0].length;
        continue;
      }
      if (c === "\\" && i + 1 < text.length && /[\\`*_{}\[\]()#+\-.!<>]/.test(text[i + 1])) {
        buf += text[i + 1];
        i += 2;
        continue;
      }
      buf += c;
      i++;
    }
    flush();
    return out;
  }

  // Inside a link's label a link is text.
  function unlinked(n) {
    if (n.nodeType === 1 && n.tagName === "A") {
      return document.createTextNode(n.textContent);
    }
    return n;
  }

  function appendInline(parent, text, clickable) {
    const lines = text.split("\n");
    lines.forEach((line, k) => {
      if (k > 0) parent.appendChild(document.createElement("br"));
      inline(line, clickable).forEach((n) => parent.appendChild(n));
    });
  }

  // removeHTMLBlocks removes script, style and similar elements and
  // comments that span lines, outside fenced code.
  function removeHTMLBlocks(text) {
    const lines = text.split("\n");
    const out = [];
    let run = [];
    let fence = null;
    const endRun = () => {
      if (run.length) {
        out.push(run.join("\n")
          .replace(/<!--[\s\S]*?(-->|$)/g, "")
          .replace(/<(script|style|iframe|object|embed|svg|math|template|noscript|textarea|title)\b[\s\S]*?(<\/\1\s*>|$)/gi, ""));
      }
      run = [];
    };
    for (const line of lines) {
      const m = /^\s*(```+|~~~+)/.exec(line);
      if (fence === null && m) {
        endRun();
        fence = m[1];
        out.push(line);
      } else if (fence !== null) {
        out.push(line);
        if (line.trim().startsWith(fence)) fence = null;
      } else {
        run.push(line);
      }
    }
    endRun();
    return out.join("\n");
  }

  // render returns the nodes of text as Markdown; clickable(url) says
  // whether an address may become a link.
  function render(text, clickable) {
    clickable = clickable || (() => false);
    const frag = document.createDocumentFragment();
    const lines = removeHTMLBlocks(String(text).replace(/\r\n?/g, "\n")).split("\n");
    let i = 0;
    let para = [];
    const endPara = () => {
      if (para.length) {
        const p = el("p");
        appendInline(p, para.join("\n"), clickable);
        if (p.childNodes.length) frag.appendChild(p);
      }
      para = [];
    };
    while (i < lines.length) {
      const line = lines[i];
      let m;
      if ((m = /^\s*(```+|~~~+)\s*([\w+-]*)\s*$/.exec(line))) {
        endPara();
        const fence = m[1];
        const body = [];
        i++;
        while (i < lines.length && !lines[i].trim().startsWith(fence)) {
          body.push(lines[i]);
          i++;
        }
        i++;
        const pre = el("pre");
        const code = el("code", "", body.join("\n"));
        if (m[2]) code.dataset.lang = m[2];
        pre.appendChild(code);
        frag.appendChild(pre);
        continue;
      }
      if ((m = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line))) {
        endPara();
        const h = el("h" + Math.min(6, m[1].length + 3));
        appendInline(h, m[2], clickable);
        frag.appendChild(h);
        i++;
        continue;
      }
      if (/^\s*>/.test(line)) {
        endPara();
        const quote = [];
        while (i < lines.length && /^\s*>/.test(lines[i])) {
          quote.push(lines[i].replace(/^\s*>\s?/, ""));
          i++;
        }
        const bq = el("blockquote");
        bq.appendChild(render(quote.join("\n"), clickable));
        frag.appendChild(bq);
        continue;
      }
      if ((m = /^\s*([-*+]|\d+[.)])\s+/.exec(line))) {
        endPara();
        const ordered = /\d/.test(m[1]);
        const list = el(ordered ? "ol" : "ul");
        while (i < lines.length && (m = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(lines[i]))) {
          const li = el("li");
          let item = m[2];
          i++;
          while (i < lines.length && /^\s{2,}\S/.test(lines[i]) && !/^\s*([-*+]|\d+[.)])\s+/.test(lines[i])) {
            item += "\n" + lines[i].trim();
            i++;
          }
          appendInline(li, item, clickable);
          list.appendChild(li);
        }
        frag.appendChild(list);
        continue;
      }
      if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
        endPara();
        frag.appendChild(el("hr"));
        i++;
        continue;
      }
      if (line.trim() === "") {
        endPara();
        i++;
        continue;
      }
      para.push(line);
      i++;
    }
    endPara();
    return frag;
  }

  global.StewardMarkdown = { render: render, stripHTML: stripHTML, isWebAddress: isWebAddress };
})(window);
