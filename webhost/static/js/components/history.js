// @ts-check
// The call history ([data-testid="history"]): every tool call, resource read and prompt the page
// makes, newest first, the newest HISTORY_CAP kept in this tab. Each [data-history-entry] shows its
// server, name, arguments, status and duration, and offers Replay, Edit and Copy request.

import { h, prettyJson } from "../html.js";
import { copyButton } from "./copy.js";

export const HISTORY_CAP = 200;

/** @typedef {"tool" | "resource" | "prompt"} HistoryKind */
/**
 * @typedef {object} HistoryEntry
 * @property {number} id
 * @property {HistoryKind} kind
 * @property {string} server
 * @property {string} name the tool or prompt name, or the resource URI
 * @property {Record<string, unknown>} args
 * @property {string} method
 * @property {Record<string, unknown>} params
 * @property {"pending" | "ok" | "error"} status
 * @property {number | null} durationMs
 */

/** The page methods the history records, and the kind each is. */
export const TRACKED = /** @type {Record<string, HistoryKind>} */ ({
  "tools/call": "tool", "resources/read": "resource", "prompts/get": "prompt",
});

export class History {
  #seq = 0;
  #hooks;
  #list = h("ol", { class: "history-list" });
  #count = h("span", { class: "count", text: "0" });
  #empty = h("p", { class: "empty muted", text: "Calls, reads and prompts you make appear here." });
  /** @type {HistoryEntry[]} newest first */
  entries = [];
  el;

  /** @param {{replay: (e: HistoryEntry) => void, edit: (e: HistoryEntry) => void}} hooks */
  constructor(hooks) {
    this.#hooks = hooks;
    const clear = h("button", { type: "button", class: "small ghost", text: "Clear", dataset: { action: "clear-history" } });
    clear.addEventListener("click", () => {
      this.entries = [];
      this.#list.replaceChildren();
      this.#sync();
    });
    this.el = h("section", { class: "history", "aria-label": "Call history", dataset: { testid: "history" } },
      h("div", { class: "history-head" }, h("h2", { class: "sidebar-title" }, "History ", this.#count),
        h("span", { class: "spacer" }), clear),
      this.#empty, this.#list);
  }

  /**
   * Record a request the page sends, and its outcome when it settles.
   * @param {string} method @param {Record<string, any>} params @param {Promise<any>} promise
   */
  track(method, params, promise) {
    const kind = TRACKED[method];
    if (!kind) return;
    const args = kind === "resource" ? {} : /** @type {Record<string, unknown>} */ (params.arguments ?? {});
    /** @type {HistoryEntry} */
    const entry = { id: ++this.#seq, kind, server: String(params.server ?? ""),
      name: String(kind === "resource" ? params.uri : params.name), args, method,
      params: Object.fromEntries(Object.entries(params).filter(([k]) => k !== "callId")),
      status: "pending", durationMs: null };
    const started = performance.now();
    const row = this.#render(entry);
    this.entries.unshift(entry);
    this.#list.prepend(row.el);
    while (this.entries.length > HISTORY_CAP) {
      this.entries.pop();
      this.#list.lastElementChild?.remove();
    }
    this.#sync();
    promise.then(
      (result) => row.done(result?.isError === true ? "error" : "ok", performance.now() - started),
      () => row.done("error", performance.now() - started));
  }

  #sync() {
    this.#count.textContent = String(this.entries.length);
    this.#empty.hidden = this.entries.length > 0;
  }

  /** @param {HistoryEntry} entry */
  #render(entry) {
    const status = h("span", { class: "status-pill pending", text: "…" });
    const duration = h("span", { class: "muted history-dur" });
    const argsText = Object.keys(entry.args).length ? JSON.stringify(entry.args) : "";
    const replay = h("button", { type: "button", class: "small", text: "Replay", dataset: { action: "replay" },
      title: "Run it again" });
    const edit = h("button", { type: "button", class: "small ghost", text: "Edit", dataset: { action: "edit" },
      title: entry.kind === "resource" ? "Open the resource" : "Open it with these arguments in the form" });
    replay.addEventListener("click", () => this.#hooks.replay(entry));
    edit.addEventListener("click", () => this.#hooks.edit(entry));
    const el = h("li", { class: "history-entry", dataset: { historyEntry: String(entry.id), kind: entry.kind,
      historyServer: entry.server, name: entry.name, status: "pending" } },
    h("div", { class: "history-row" },
      h("span", { class: `badge kind-${entry.kind}`, text: entry.kind }),
      h("span", { class: "history-name", text: entry.name, title: entry.name }),
      h("span", { class: "spacer" }), status),
    h("div", { class: "history-row muted" },
      h("span", { class: "history-server", text: entry.server }),
      argsText ? h("code", { class: "history-args", text: argsText.length > 200 ? `${argsText.slice(0, 200)}…` : argsText,
        title: prettyJson(entry.args).slice(0, 2000) }) : null,
      h("span", { class: "spacer" }), duration),
    h("div", { class: "history-actions" }, replay, edit,
      copyButton("Copy request", "copy-request", () => prettyJson({ method: entry.method, params: entry.params }))));
    return {
      el,
      /** @param {"ok" | "error"} outcome @param {number} ms */
      done(outcome, ms) {
        entry.status = outcome;
        entry.durationMs = ms;
        el.dataset.status = outcome;
        status.className = `status-pill ${outcome}`;
        status.textContent = outcome;
        duration.textContent = ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
      },
    };
  }
}
