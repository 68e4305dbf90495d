// @ts-check
// A small Markdown renderer for text resources of type text/markdown and the chat's answers, built from DOM
// nodes only: no HTML is ever parsed, so raw HTML in the source shows as text. Headings, paragraphs, lists
// (task list items `- [ ]` / `- [x]` as disabled checkboxes), block quotes, fenced code (`pre[data-lang]` with
// its language and a Copy button), tables (GitHub's pipe tables), rules, and inline code, emphasis, strong and
// links (http, https and mailto only, opened in a new tab with no referrer). Anything else stays plain text.

import { h } from "./html.js";
import { copyButton } from "./components/copy.js";

const SAFE_LINK = /^(https?:|mailto:)/i;
const FENCE = /^\s*(```|~~~)\s*([^\s`]*)/;
const ITEM = /^\s*([-*+]|\d+[.)])\s+/;
const TASK = /^\[([ xX])\]\s+/;
/** A table's delimiter row: `| --- | :---: |` (the pipes at either end optional, one column at least). */
const DELIMITER = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;
/** What starts another block, and so ends a paragraph or a table. */
const BLOCK_START = /^\s*(```|~~~|#{1,6}\s|>|[-*+]\s|\d+[.)]\s)/;

/** @param {string} source @returns {HTMLElement} */
export function renderMarkdown(source) {
  const root = h("div", { class: "markdown", dataset: { markdown: "true" } });
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = FENCE.exec(line);
    if (fence) {
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trimStart().startsWith(fence[1])) body.push(lines[i++]);
      i += 1;
      root.append(codeBlock(body.join("\n"), fence[2]));
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
    if (ITEM.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const list = h(ordered ? "ol" : "ul", {});
      while (i < lines.length && ITEM.test(lines[i])) list.append(listItem(lines[i++].replace(ITEM, "")));
      root.append(list);
      continue;
    }
    if (/^\s*>/.test(line)) {
      const quoted = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) quoted.push(lines[i++].replace(/^\s*>\s?/, ""));
      root.append(h("blockquote", {}, renderMarkdown(quoted.join("\n"))));
      continue;
    }
    if (isTableStart(lines[i], lines[i + 1])) {
      const table = tableBlock(lines[i], lines[i + 1]);
      i += 2;
      while (i < lines.length && isTableRow(lines[i])) table.addRow(lines[i++]);
      root.append(table.el);
      continue;
    }
    if (!line.trim()) {
      i += 1;
      continue;
    }
    const para = [];
    while (i < lines.length && lines[i].trim() && !BLOCK_START.test(lines[i]) && !isTableStart(lines[i], lines[i + 1])) {
      para.push(lines[i++].trim());
    }
    if (!para.length) para.push(lines[i++].trim());
    root.append(h("p", {}, inline(para.join(" "))));
  }
  return root;
}

/** A list item; `[ ] ` / `[x] ` at its start makes it a task, drawn as a checkbox nobody can tick. @param {string} text */
function listItem(text) {
  const task = TASK.exec(text);
  if (!task) return h("li", {}, inline(text));
  const done = task[1] !== " ";
  const box = h("input", { type: "checkbox", disabled: true, checked: done, "aria-label": done ? "done" : "not done" });
  return h("li", { class: "md-task", dataset: { task: done ? "done" : "open" } }, box, " ", inline(text.slice(task[0].length)));
}

/**
 * Fenced code: `pre[data-lang]` (the fence's language, "text" without one) with a label and a Copy button.
 * @param {string} code @param {string} info the fence's info string (its first word is the language)
 */
export function codeBlock(code, info) {
  const lang = /^[\w+#.-]{1,30}$/.test(info) ? info.toLowerCase() : "text";
  const body = h("code", { text: code });
  const head = h("span", { class: "md-code-head" },
    h("span", { class: "md-lang", text: lang }),
    copyButton("Copy", "copy", () => code));
  head.querySelector("button")?.setAttribute("aria-label", `Copy the ${lang} code`);
  return h("pre", { class: "md-code", tabIndex: 0, dataset: { lang } }, head, body);
}

/** The cells of a table row, trimmed (`\|` is a pipe inside a cell). @param {string} line */
function cells(line) {
  let inner = line.trim();
  if (inner.startsWith("|")) inner = inner.slice(1);
  if (inner.endsWith("|") && !inner.endsWith("\\|")) inner = inner.slice(0, -1);
  return inner.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, "|"));
}

/** Whether these two lines open a table: a row with a pipe, then a delimiter row of as many columns. */
export function isTableStart(/** @type {string} */ line, /** @type {string | undefined} */ next) {
  return line.includes("|") && next !== undefined && DELIMITER.test(next) && next.includes("-")
    && (next.includes("|") || cells(line).length === 1) && cells(line).length === cells(next).length;
}

/** Whether a line goes on a table: not blank, and not the start of another block. @param {string} line */
export function isTableRow(line) {
  return line.trim() !== "" && !BLOCK_START.test(line);
}

/**
 * A table from its header and delimiter rows; `addRow` appends a body row (the streaming renderer adds them as
 * they arrive). Cells past the header's count are dropped and missing ones are empty, as GitHub draws them.
 * @param {string} header @param {string} delimiter
 */
export function tableBlock(header, delimiter) {
  const aligns = cells(delimiter).map((c) => (c.startsWith(":") && c.endsWith(":") ? "center" : c.endsWith(":") ? "right" : c.startsWith(":") ? "left" : ""));
  const cell = (/** @type {"th" | "td"} */ tag, /** @type {string} */ text, /** @type {number} */ col) =>
    h(tag, aligns[col] ? { dataset: { align: aligns[col] } } : {}, inline(text));
  const row = (/** @type {"th" | "td"} */ tag, /** @type {string} */ line) => {
    const found = cells(line);
    return h("tr", {}, aligns.map((_, col) => cell(tag, found[col] ?? "", col)));
  };
  const body = h("tbody", {});
  const table = h("table", { class: "md-table" }, h("thead", {}, row("th", header)), body);
  // Wide tables scroll in their own box, which a keyboard can reach.
  const el = h("div", { class: "md-table-wrap", tabIndex: 0, role: "region", "aria-label": "Table" }, table);
  return {
    el,
    /** @param {string} line */
    addRow(line) { body.append(row("td", line)); },
    /** The last body row, to replace while it is still being written. */
    get lastRow() { return body.lastElementChild; },
  };
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
