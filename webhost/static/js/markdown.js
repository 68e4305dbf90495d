// @ts-check
// A small Markdown renderer for text resources of type text/markdown, built from DOM nodes only:
// no HTML is ever parsed, so raw HTML in the source shows as text. Headings, paragraphs, lists,
// block quotes, fenced code, rules, and inline code, emphasis, strong and links (http, https and
// mailto only, opened in a new tab with no referrer). Anything else stays plain text.

import { h } from "./html.js";

const SAFE_LINK = /^(https?:|mailto:)/i;

/** @param {string} source @returns {HTMLElement} */
export function renderMarkdown(source) {
  const root = h("div", { class: "markdown", dataset: { markdown: "true" } });
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = /^\s*(```|~~~)/.exec(line);
    if (fence) {
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trimStart().startsWith(fence[1])) body.push(lines[i++]);
      i += 1;
      root.append(h("pre", { class: "md-code", tabIndex: 0 }, h("code", { text: body.join("\n") })));
      continue;
    }
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const level = Math.min(6, heading[1].length + 2); // below the view's own h2
      root.append(h(/** @type {"h3"} */ (`h${level}`), {}, inline(heading[2])));
      i += 1;
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      root.append(h("hr"));
      i += 1;
      continue;
    }
    const item = /^\s*([-*+]|\d+[.)])\s+/;
    if (item.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const list = h(ordered ? "ol" : "ul", {});
      while (i < lines.length && item.test(lines[i])) list.append(h("li", {}, inline(lines[i++].replace(item, ""))));
      root.append(list);
      continue;
    }
    if (/^\s*>/.test(line)) {
      const quoted = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) quoted.push(lines[i++].replace(/^\s*>\s?/, ""));
      root.append(h("blockquote", {}, renderMarkdown(quoted.join("\n"))));
      continue;
    }
    if (!line.trim()) {
      i += 1;
      continue;
    }
    const para = [];
    while (i < lines.length && lines[i].trim() && !/^\s*(```|~~~|#{1,6}\s|>|[-*+]\s|\d+[.)]\s)/.test(lines[i])) {
      para.push(lines[i++].trim());
    }
    if (!para.length) para.push(lines[i++].trim());
    root.append(h("p", {}, inline(para.join(" "))));
  }
  return root;
}

/** Inline code, links, strong and emphasis, as nodes. @param {string} text @returns {Node[]} */
function inline(text) {
  /** @type {Node[]} */
  const out = [];
  const pattern = /`([^`]+)`|\[([^\]]+)\]\(([^)\s]+)\)|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*]+)\*|_([^_]+)_/g;
  let last = 0;
  for (const m of text.matchAll(pattern)) {
    const at = m.index ?? 0;
    if (at > last) out.push(document.createTextNode(text.slice(last, at)));
    if (m[1] !== undefined) out.push(h("code", { text: m[1] }));
    else if (m[2] !== undefined) {
      out.push(SAFE_LINK.test(m[3])
        ? h("a", { href: m[3], target: "_blank", rel: "noopener noreferrer" }, inline(m[2]))
        : document.createTextNode(m[0]));
    } else if (m[4] !== undefined || m[5] !== undefined) out.push(h("strong", {}, inline(m[4] ?? m[5])));
    else out.push(h("em", {}, inline(m[6] ?? m[7])));
    last = at + m[0].length;
  }
  if (last < text.length) out.push(document.createTextNode(text.slice(last)));
  return out;
}
