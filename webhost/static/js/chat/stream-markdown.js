// @ts-check
// Markdown that grows while the model writes it, drawn from DOM nodes (../markdown.js: no HTML is ever
// parsed). Text before the last paragraph break outside a code fence is settled: it is rendered once and
// kept; only the tail after it is rendered again, at most once per animation frame. So a long answer at
// hundreds of tokens per second costs the page about one short render per frame, not the whole answer.
// A table is settled up to its start and then grows: each row is drawn once when its line is complete (the row
// being written is drawn again each frame), so a 200-row table streams at the cost of its last row per frame.

import { h } from "../html.js";
import { isTableRow, isTableStart, renderMarkdown, tableBlock } from "../markdown.js";

/**
 * The index just after the last blank line that is not inside a fenced code block, or the start of a table whose
 * header and delimiter rows are complete, whichever is later (0: none). @param {string} text
 */
function settledEnd(text) {
  let end = 0;
  let inFence = false;
  let at = 0;
  const lines = text.split("\n");
  for (let k = 0; k < lines.length; k += 1) {
    const line = lines[k];
    const next = at + line.length + 1;
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    else if (!inFence && !line.trim() && next <= text.length) end = next;
    else if (!inFence && k + 2 < lines.length && isTableStart(line, lines[k + 1])) end = at;
    at = next;
  }
  return end;
}

/** A table at the start of the unsettled text, drawn row by row. */
class GrowingTable {
  /** @param {ReturnType<typeof tableBlock>} block @param {number} consumed where its next row starts in the tail */
  constructor(block, consumed) {
    this.block = block;
    this.consumed = consumed;
    /** @type {Element | null} the row still being written, drawn again each frame */
    this.partial = null;
  }

  /** A table when the tail starts with its complete header and delimiter rows. @param {string} tail */
  static start(tail) {
    const first = tail.indexOf("\n");
    const second = first < 0 ? -1 : tail.indexOf("\n", first + 1);
    if (second < 0) return null;
    const header = tail.slice(0, first);
    const delimiter = tail.slice(first + 1, second);
    return isTableStart(header, delimiter) ? new GrowingTable(tableBlock(header, delimiter), second + 1) : null;
  }

  /** Draw the rows that arrived; false when the tail is no longer this table alone. @param {string} tail */
  grow(tail) {
    this.partial?.remove();
    this.partial = null;
    let at = this.consumed;
    for (let nl = tail.indexOf("\n", at); nl >= 0; nl = tail.indexOf("\n", at)) {
      const line = tail.slice(at, nl);
      if (!isTableRow(line)) return false;
      this.block.addRow(line);
      at = nl + 1;
    }
    this.consumed = at;
    const rest = tail.slice(at);
    if (!rest) return true;
    if (!isTableRow(rest)) return false;
    this.block.addRow(rest);
    this.partial = this.block.lastRow;
    return true;
  }
}

export class StreamingMarkdown {
  el = document.createElement("div");
  #text = "";
  #settled = 0;
  #live = /** @type {HTMLElement | null} */ (null);
  #queued = false;
  /** @type {GrowingTable | null} */
  #table = null;

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
    this.#table = null;
    this.el.replaceChildren();
    this.append(text, true);
  }

  #render() {
    const end = settledEnd(this.#text);
    if (end > this.#settled) {
      this.#live?.remove();
      this.#live = null;
      this.#table = null;
      const settled = renderMarkdown(this.#text.slice(this.#settled, end));
      this.el.append(...settled.childNodes);
      this.#settled = end;
    }
    const tail = this.#text.slice(this.#settled);
    if (this.#growTable(tail)) return;
    const live = renderMarkdown(tail);
    live.className = "md-live";
    if (this.#live) this.#live.replaceWith(live);
    else this.el.append(live);
    this.#live = live;
  }

  /** Grow the table the tail starts with, if it does; false: draw the tail whole. @param {string} tail */
  #growTable(tail) {
    if (!this.#table) {
      const table = GrowingTable.start(tail);
      if (!table) return false;
      const live = h("div", { class: "md-live" }, table.block.el);
      if (this.#live) this.#live.replaceWith(live);
      else this.el.append(live);
      this.#live = live;
      this.#table = table;
    }
    if (this.#table.grow(tail)) return true;
    this.#table = null; // another block follows the table without a blank line: rare, drawn whole from now on
    return false;
  }
}
