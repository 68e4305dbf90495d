// @ts-check
// The call history ([data-testid="history"]): every tool call, resource read and prompt its person
// made, newest first, from the database (history/list), so it is the same in every tab and after a
// reload. A call this tab makes shows at once as pending; the backend's `history/added` then gives
// it its stored id (calls made in another tab of the person arrive the same way). Each
// [data-history-entry] shows its server, name, arguments, status and duration, and offers Replay,
// Edit, Copy request and Result (the stored result, fetched with history/get when asked).
// Only the newest SHOWN_STEP rows are in the DOM at first (hundreds of rows made every layout of the
// page slower, and so every call); "Show older" adds the next ones, so every entry stays reachable.

import { h, prettyJson, formatBytes } from "../html.js";
import { copyButton } from "./copy.js";

export const HISTORY_CAP = 300;
/** Rows put in the DOM at first, and added by each "Show older". */
export const SHOWN_STEP = 50;

/** @typedef {"tool" | "resource" | "prompt"} HistoryKind */
/**
 * @typedef {object} HistoryEntry
 * @property {number} id this page's own number for the row
 * @property {number | null} storedId the database row (null until the backend stored it)
 * @property {HistoryKind} kind
 * @property {string} server
 * @property {string} name the tool or prompt name, or the resource URI
 * @property {Record<string, unknown>} args
 * @property {boolean} argsTruncated too big to keep whole: it cannot be replayed or edited
 * @property {string} method
 * @property {Record<string, unknown>} params
 * @property {string} callId
 * @property {"pending" | "ok" | "error" | "cancelled"} status
 * @property {number | null} durationMs
 */

/** The page methods the history records, and the kind each is. */
export const TRACKED = /** @type {Record<string, HistoryKind>} */ ({
  "tools/call": "tool", "resources/read": "resource", "prompts/get": "prompt",
});
const METHOD_OF = { tool: "tools/call", resource: "resources/read", prompt: "prompts/get" };

/** @param {HistoryKind} kind @param {string} server @param {string} name @param {Record<string, unknown>} args */
function requestOf(kind, server, name, args) {
  return kind === "resource" ? { server, uri: name } : { server, name, arguments: args };
}

/** @param {number | null} ms */
function duration(ms) {
  if (ms == null) return "";
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

export class History {
  #seq = 0;
  #hooks;
  #rpc;
  #list = h("ol", { class: "history-list" });
  #count = h("span", { class: "count", text: "0" });
  #empty = h("p", { class: "empty muted", text: "Calls, reads and prompts you make appear here." });
  #shown = SHOWN_STEP;
  #older = h("button", { type: "button", class: "small ghost history-older", hidden: true,
    dataset: { action: "show-older-history" }, title: "Show older calls" });
  /** @type {HistoryEntry[]} newest first */
  entries = [];
  /** @type {Map<HistoryEntry, ReturnType<History["render"]>>} */
  #rows = new Map();
  el;

  /**
   * @param {import("../rpc.js").RpcClient} rpc
   * @param {{replay: (e: HistoryEntry) => void, edit: (e: HistoryEntry) => void}} hooks
   */
  constructor(rpc, hooks) {
    this.#rpc = rpc;
    this.#hooks = hooks;
    const clear = h("button", { type: "button", class: "small ghost", text: "Clear", dataset: { action: "clear-history" },
      title: "Forget every call in your history (in every tab)" });
    clear.addEventListener("click", () => {
      rpc.request("history/clear", {}).then(() => this.cleared(), (err) => console.warn("webhost: history/clear", err));
    });
    this.el = h("section", { class: "history", "aria-label": "Call history", dataset: { testid: "history" } },
      h("div", { class: "history-head" }, h("h2", { class: "sidebar-title" }, "History ", this.#count),
        h("span", { class: "spacer" }), clear),
      this.#empty, this.#list, this.#older);
    this.#older.addEventListener("click", () => {
      this.#shown += SHOWN_STEP;
      this.#sync();
    });
  }

  /**
   * Params for a tracked request: a callId is added where the page gave none, so the backend's
   * stored entry can be matched to the row shown while it runs.
   * @param {string} method @param {Record<string, any>} params
   */
  withCallId(method, params) {
    return method in TRACKED && !params.callId ? { ...params, callId: `h-${crypto.randomUUID()}` } : params;
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
    const entry = { id: ++this.#seq, storedId: null, kind, server: String(params.server ?? ""),
      name: String(kind === "resource" ? params.uri : params.name), args, argsTruncated: false, method,
      params: Object.fromEntries(Object.entries(params).filter(([k]) => k !== "callId")),
      callId: String(params.callId ?? ""), status: "pending", durationMs: null };
    const started = performance.now();
    this.#add(entry, "start");
    const row = this.#rows.get(entry);
    promise.then(
      (result) => row?.done(result?.isError === true ? "error" : "ok", performance.now() - started),
      (err) => row?.done(err?.code === -32800 ? "cancelled" : "error", performance.now() - started));
  }

  /** The person's history from the database (on every new socket); rows still running here stay on top. */
  async load() {
    /** @type {any} */
    let answer;
    try {
      answer = await this.#rpc.request("history/list", {});
    } catch (err) {
      console.warn("webhost: history/list failed", err);
      return;
    }
    const running = this.entries.filter((e) => e.status === "pending");
    for (const entry of [...this.entries]) if (!running.includes(entry)) this.#remove(entry);
    for (const stored of Array.isArray(answer?.entries) ? answer.entries : []) {
      if (!running.some((e) => e.callId && e.callId === stored.callId)) this.#add(this.#fromStored(stored), "end");
    }
    this.#sync();
  }

  /** The backend stored a call of this person (made here or in another tab). @param {any} stored */
  added(stored) {
    const mine = this.entries.find((e) => e.storedId === null && e.callId && e.callId === stored?.callId);
    if (mine) {
      mine.storedId = Number(stored.id);
      this.#rows.get(mine)?.stored(stored);
      return;
    }
    if (this.entries.some((e) => e.storedId === Number(stored?.id))) return;
    this.#add(this.#fromStored(stored), "start");
  }

  /** The person cleared their history (here or in another tab). */
  cleared() {
    for (const entry of [...this.entries]) if (entry.status !== "pending") this.#remove(entry);
    this.#sync();
  }

  /** @param {any} stored @returns {HistoryEntry} */
  #fromStored(stored) {
    /** @type {HistoryKind} */
    const kind = stored.kind === "resource" || stored.kind === "prompt" ? stored.kind : "tool";
    const args = stored.arguments && typeof stored.arguments === "object" ? stored.arguments : {};
    const server = String(stored.server ?? "");
    const name = String(stored.name ?? "");
    return { id: ++this.#seq, storedId: Number(stored.id), kind, server, name, args,
      argsTruncated: Boolean(stored.argumentsTruncated), method: METHOD_OF[kind],
      params: requestOf(kind, server, name, args), callId: String(stored.callId ?? ""),
      status: ["ok", "error", "cancelled"].includes(stored.status) ? stored.status : "error",
      durationMs: typeof stored.durationMs === "number" ? stored.durationMs : null };
  }

  /** @param {HistoryEntry} entry @param {"start" | "end"} where */
  #add(entry, where) {
    const row = this.render(entry);
    this.#rows.set(entry, row);
    // The DOM holds a prefix of `entries` (the newest #shown): a new row goes on top; an old one is
    // appended by #sync only while there is room.
    if (where === "start") {
      this.entries.unshift(entry);
      this.#list.prepend(row.el);
    } else {
      this.entries.push(entry);
    }
    while (this.entries.length > HISTORY_CAP) this.#remove(this.entries[this.entries.length - 1]);
    this.#sync();
  }

  /** @param {HistoryEntry} entry */
  #remove(entry) {
    this.entries.splice(this.entries.indexOf(entry), 1);
    this.#rows.get(entry)?.el.remove();
    this.#rows.delete(entry);
  }

  /** The count, and the DOM back to the newest #shown entries (one row added or removed at a time). */
  #sync() {
    this.#count.textContent = String(this.entries.length);
    this.#empty.hidden = this.entries.length > 0;
    const list = this.#list;
    const want = Math.min(this.#shown, this.entries.length);
    while (list.childElementCount > want) list.lastElementChild?.remove();
    for (let i = list.childElementCount; i < want; i++) {
      const row = this.#rows.get(this.entries[i]);
      if (row) list.append(row.el);
    }
    const older = this.entries.length - want;
    this.#older.hidden = older <= 0;
    this.#older.textContent = `Show older (${older})`;
  }

  /** @param {HistoryEntry} entry */
  render(entry) {
    const status = h("span", { class: `status-pill ${entry.status}`, text: entry.status === "pending" ? "…" : entry.status });
    const time = h("span", { class: "muted history-dur", text: duration(entry.durationMs) });
    const argsText = entry.argsTruncated ? "(arguments too big to keep)"
      : Object.keys(entry.args).length ? JSON.stringify(entry.args) : "";
    const replay = h("button", { type: "button", class: "small", text: "Replay", dataset: { action: "replay" },
      title: "Run it again", disabled: entry.argsTruncated });
    const edit = h("button", { type: "button", class: "small ghost", text: "Edit", dataset: { action: "edit" },
      title: entry.kind === "resource" ? "Open the resource" : "Open it with these arguments in the form",
      disabled: entry.argsTruncated });
    replay.addEventListener("click", () => this.#hooks.replay(entry));
    edit.addEventListener("click", () => this.#hooks.edit(entry));
    const shown = h("div", { class: "history-result", dataset: { testid: "history-result" }, hidden: true });
    const showResult = h("button", { type: "button", class: "small ghost", text: "Result",
      dataset: { action: "show-result" }, "aria-expanded": "false", hidden: entry.storedId === null,
      title: "Show the result as it was stored" });
    showResult.addEventListener("click", () => {
      const open = showResult.getAttribute("aria-expanded") === "true";
      showResult.setAttribute("aria-expanded", String(!open));
      shown.hidden = open;
      if (!open && entry.storedId !== null) void this.#showResult(entry.storedId, shown);
    });
    const el = h("li", { class: "history-entry", dataset: { historyEntry: String(entry.id), kind: entry.kind,
      historyServer: entry.server, name: entry.name, status: entry.status,
      ...(entry.storedId === null ? {} : { historyId: String(entry.storedId) }) } },
    h("div", { class: "history-row" },
      h("span", { class: `badge kind-${entry.kind}`, text: entry.kind }),
      h("span", { class: "history-name", text: entry.name, title: entry.name }),
      h("span", { class: "spacer" }), status),
    h("div", { class: "history-row muted" },
      h("span", { class: "history-server", text: entry.server }),
      argsText ? h("code", { class: "history-args", text: argsText.length > 200 ? `${argsText.slice(0, 200)}…` : argsText,
        title: entry.argsTruncated ? argsText : prettyJson(entry.args).slice(0, 2000) }) : null,
      h("span", { class: "spacer" }), time),
    h("div", { class: "history-actions" }, replay, edit,
      copyButton("Copy request", "copy-request", () => prettyJson({ method: entry.method, params: entry.params })),
      showResult),
    shown);
    return {
      el,
      /** @param {"ok" | "error" | "cancelled"} outcome @param {number} ms */
      done(outcome, ms) {
        if (entry.status !== "pending") return;
        entry.status = outcome;
        entry.durationMs = ms;
        el.dataset.status = outcome;
        status.className = `status-pill ${outcome}`;
        status.textContent = outcome;
        time.textContent = duration(ms);
      },
      /** The backend stored it: its id, and the result can be shown. @param {any} stored */
      stored(stored) {
        el.dataset.historyId = String(stored.id);
        showResult.hidden = false;
      },
    };
  }

  /** @param {number} id @param {HTMLElement} into */
  async #showResult(id, into) {
    into.replaceChildren(h("p", { class: "muted", text: "Loading…" }));
    try {
      const { entry } = /** @type {any} */ (await this.#rpc.request("history/get", { id }));
      const note = entry.resultTruncated
        ? h("p", { class: "muted", dataset: { truncated: "true" },
          text: `Cut: ${formatBytes(entry.resultBytes)} in all, the first ${formatBytes(entry.preview.length)} kept.` })
        : null;
      into.replaceChildren(...[note, h("pre", { class: "history-result-json",
        text: entry.resultTruncated ? entry.preview : prettyJson(entry.result) })].filter((x) => x !== null));
    } catch (err) {
      into.replaceChildren(h("p", { class: "error-text", text: `Could not load the result: ${/** @type {any} */ (err)?.message ?? err}` }));
    }
  }
}
