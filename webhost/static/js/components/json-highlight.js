// @ts-check
// Colours for formatted JSON (results, structured content, _meta): spans over the text, built from text nodes
// (nothing is parsed as HTML), so the characters are unchanged: copying, searching and tests read the same
// text. Past HIGHLIGHT_LIMIT characters the text stays plain: a big result costs no more than before.

import { prettyJson } from "../html.js";

export const HIGHLIGHT_LIMIT = 100_000;

// A string (a key when a colon follows it), a number, or a literal; what is between them stays plain.
const TOKEN = /("(?:[^"\\\n]|\\.)*")(\s*:)?|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|\b(true|false|null)\b/g;

/** @param {string} className @param {string} text */
function span(className, text) {
  const el = document.createElement("span");
  el.className = className;
  el.textContent = text;
  return el;
}

/**
 * Put `text` (JSON, usually as prettyJson wrote it) into `el`, coloured when it is not too long.
 * @param {HTMLElement} el @param {string} text
 */
export function showJson(el, text) {
  if (text.length > HIGHLIGHT_LIMIT) {
    el.textContent = text;
    return;
  }
  const out = document.createDocumentFragment();
  let at = 0;
  for (const m of text.matchAll(TOKEN)) {
    const index = m.index ?? 0;
    if (index > at) out.append(text.slice(at, index));
    const [whole, string, colon, number, literal] = m;
    if (string !== undefined) {
      out.append(span(colon ? "j-key" : "j-str", string));
      if (colon) out.append(colon);
    } else if (number !== undefined) {
      out.append(span("j-num", number));
    } else {
      out.append(span("j-lit", literal));
    }
    at = index + whole.length;
  }
  if (at < text.length) out.append(text.slice(at));
  el.replaceChildren(out);
}

/**
 * A `<pre class="text-content json">` showing `value` formatted and coloured.
 * @param {unknown} value @param {string} [extraClass]
 */
export function jsonPre(value, extraClass = "") {
  const pre = document.createElement("pre");
  pre.className = `text-content json ${extraClass}`.trim();
  showJson(pre, prettyJson(value));
  return pre;
}
