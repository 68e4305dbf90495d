// @ts-check
// Copy buttons: put text (a result's text, its JSON, a request) on the clipboard, and say so.

import { h } from "../html.js";

/**
 * Copy `text` to the clipboard (the async API where the page may use it, else a hidden textarea).
 * @param {string} text @returns {Promise<boolean>}
 */
export async function copyText(text) {
  try {
    if (navigator.clipboard?.writeText) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch { /* fall back below */ }
  const area = h("textarea", { class: "visually-hidden", readOnly: true, value: text });
  document.body.append(area);
  area.select();
  let ok = false;
  try { ok = document.execCommand("copy"); } catch { ok = false; }
  area.remove();
  return ok;
}

/**
 * A small button copying what `get` returns.
 * @param {string} label @param {string} action its data-action @param {() => string} get
 */
export function copyButton(label, action, get) {
  const b = h("button", { type: "button", class: "small ghost copy", text: label, dataset: { action } });
  b.addEventListener("click", async () => {
    const ok = await copyText(get());
    b.textContent = ok ? "Copied" : "Copy failed";
    b.dataset.copied = ok ? "true" : "false";
    setTimeout(() => { b.textContent = label; delete b.dataset.copied; }, 1500);
  });
  return b;
}

/** The text content blocks of a result, joined (what "Copy text" copies). @param {any} result */
export function resultText(result) {
  const blocks = Array.isArray(result?.content) ? result.content
    : Array.isArray(result?.contents) ? result.contents
      : Array.isArray(result?.messages) ? result.messages.map((/** @type {any} */ m) => m.content) : [];
  return blocks.filter((/** @type {any} */ b) => b && typeof b.text === "string").map((/** @type {any} */ b) => b.text).join("\n");
}
