// @ts-check
// The stack of things waiting for the user: input requests (elicitation) and approvals.
// Cards are keyed by request id, added on */request notifications, removed on */resolved.

import { h } from "../html.js";
import { formCard, urlCard, appCard, endedNote } from "./elicitation-card.js";
import { approvalCard } from "./approval-card.js";

const ENDED = /** @type {Record<string, string>} */ ({
  timeout: "An input request timed out.",
  released: "An input request was withdrawn.",
});

export class Inbox {
  #rpc;
  /** @type {Map<string, HTMLElement>} */
  #cards = new Map();
  #list = h("div", { class: "inbox-list" });
  #count = h("span", { class: "count", text: "0" });
  #live = h("p", { class: "visually-hidden", "aria-live": "assertive" });
  #onCount;
  el;

  /**
   * @param {import("../rpc.js").RpcClient} rpc
   * @param {(count: number) => void} onCount
   */
  constructor(rpc, onCount) {
    this.#rpc = rpc;
    this.#onCount = onCount;
    this.el = h("aside", { class: "inbox", "aria-label": "Waiting for you", hidden: true },
      h("h2", { class: "inbox-title" }, "Waiting for you ", this.#count),
      this.#live, this.#list);
  }

  /** @param {any} req an InputRequest */
  addElicitation(req) {
    if (!req || req.id === undefined) return;
    const ctx = { rpc: this.#rpc, fallbackToForm: (/** @type {any} */ r) => this.#replace(r, formCard(r, ctx)) };
    const card = req.mode === "url" ? urlCard(req, ctx) : req.mode === "app" ? appCard(req, ctx) : formCard(req, ctx);
    this.#add(`e:${req.id}`, card);
    this.#announce(`${req.server ?? "A server"} is asking for ${req.mode === "url" ? "your consent to open a link" : "input"}.`);
  }

  /** @param {{id: string, outcome?: string}} p */
  resolveElicitation(p) {
    const key = `e:${p.id}`;
    const card = this.#cards.get(key);
    if (!card) return;
    const wasApp = card.dataset.mode === "app";
    const note = !card.dataset.answer && p.outcome ? ENDED[p.outcome] : undefined;
    this.#remove(key);
    if (wasApp) {
      const apps = /** @type {any} */ (window).webhostApps;
      try { apps?.unmountElicitation?.(p.id); } catch (err) { console.warn("webhost: unmountElicitation failed", err); }
    }
    if (note) this.#flash(note);
  }

  /** @param {any} req */
  addApproval(req) {
    if (!req || req.id === undefined) return;
    this.#add(`a:${req.id}`, approvalCard(req, this.#rpc));
    this.#announce(`${req.server ?? "A server"} needs your approval.`);
  }

  /** @param {{id: string}} p */
  resolveApproval(p) {
    this.#remove(`a:${p.id}`);
  }

  /** The backend session ended: none of its requests can be answered any more. */
  clear() {
    for (const key of [...this.#cards.keys()]) this.#remove(key);
  }

  /** @param {string} key @param {HTMLElement} card */
  #add(key, card) {
    this.#cards.get(key)?.remove();
    this.#cards.set(key, card);
    this.#list.append(card);
    this.#changed();
  }

  /** @param {any} req @param {HTMLElement} card */
  #replace(req, card) {
    const key = `e:${req.id}`;
    const old = this.#cards.get(key);
    if (!old) return;
    old.replaceWith(card);
    this.#cards.set(key, card);
  }

  /** @param {string} key */
  #remove(key) {
    const card = this.#cards.get(key);
    if (!card) return;
    this.#cards.delete(key);
    card.remove();
    this.#changed();
  }

  /** @param {string} text */
  #flash(text) {
    const note = endedNote(text);
    this.#list.append(note);
    this.#changed();
    setTimeout(() => { note.remove(); this.#changed(); }, 5000);
  }

  /** @param {string} text */
  #announce(text) {
    this.#live.textContent = text;
  }

  #changed() {
    const n = this.#cards.size;
    this.#count.textContent = String(n);
    this.el.hidden = n === 0 && !this.#list.querySelector(".ended");
    document.body.classList.toggle("has-inbox", !this.el.hidden);
    this.#onCount(n);
  }
}
