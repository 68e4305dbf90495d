// @ts-check
// Markdown that grows while the model writes it, drawn from DOM nodes (../markdown.js: no HTML is ever
// parsed). Text before the last paragraph break outside a code fence is settled: it is rendered once and
// kept; only the tail after it is rendered again, at most once per animation frame. So a long answer at
// hundreds of tokens per second costs the page about one short render per frame, not the whole answer.

import { renderMarkdown } from "../markdown.js";

/** The index just after the last blank line that is not inside a fenced code block (0: none). @param {string} text */
function settledEnd(text) {
  let end = 0;
  let inFence = false;
  let at = 0;
  for (const line of text.split("\n")) {
    const next = at + line.length + 1;
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    else if (!inFence && !line.trim() && next <= text.length) end = next;
    at = next;
  }
  return end;
}

export class StreamingMarkdown {
  el = document.createElement("div");
  #text = "";
  #settled = 0;
  #live = /** @type {HTMLElement | null} */ (null);
  #queued = false;

  constructor(text = "") {
    this.el.className = "markdown chat-markdown";
    this.el.dataset.markdown = "true";
    if (text) this.append(text, true);
  }

  get text() { return this.#text; }

  /**
   * @param {string} delta
   * @param {boolean} [now] render at once (a stored message) instead of on the next frame; the first text is
   *   always drawn at once (the person waits for it), what follows at most once a frame
   */
  append(delta, now = false) {
    const first = !this.#text;
    this.#text += delta;
    if (now || first) this.#render();
    else if (!this.#queued) {
      this.#queued = true;
      requestAnimationFrame(() => { this.#queued = false; this.#render(); });
    }
  }

  /** Replace the whole text (the final message from the backend), rendering only what changed. @param {string} text */
  set(text) {
    if (text === this.#text) return;
    if (text.startsWith(this.#text)) { this.append(text.slice(this.#text.length), true); return; }
    this.#text = "";
    this.#settled = 0;
    this.#live = null;
    this.el.replaceChildren();
    this.append(text, true);
  }

  #render() {
    const end = settledEnd(this.#text);
    if (end > this.#settled) {
      this.#live?.remove();
      this.#live = null;
      const settled = renderMarkdown(this.#text.slice(this.#settled, end));
      this.el.append(...settled.childNodes);
      this.#settled = end;
    }
    const tail = this.#text.slice(this.#settled);
    const live = renderMarkdown(tail);
    live.className = "md-live";
    if (this.#live) this.#live.replaceWith(live);
    else this.el.append(live);
    this.#live = live;
  }
}
