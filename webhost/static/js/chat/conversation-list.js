// @ts-check
// The person's conversations, by last activity: [data-conversation="ID"] each (data-active on the open one),
// [data-action="new-conversation"], and rename / export / delete for the open one. Contract §8.1: the search
// box (input[type="search"][data-testid="chat-search"]) shows its results in place of the list, as
// [data-conversation] entries too; [data-action="export"] downloads the branch shown (.md or .json).

import { h } from "../html.js";
import { describeError } from "../rpc.js";
import { downloadExport } from "./export-download.js";
import { SearchBox } from "./search-box.js";

/**
 * @typedef {object} ListHost
 * @property {(method: string, params: Record<string, unknown>) => Promise<any>} request
 * @property {(text: string) => void} say a line for the person (an error)
 * @property {(id: string | null) => void} open
 * @property {(id: string, title: string) => Promise<void>} rename
 * @property {(id: string) => Promise<void>} remove
 */

export class ConversationList {
  el;
  #list = h("ul", { class: "chat-conversations", "aria-label": "Conversations" });
  /** @type {any[]} */
  #items = [];
  /** @type {string | null} */
  #active = null;
  #host;
  #searching = false;

  /** @param {ListHost} host */
  constructor(host) {
    this.#host = host;
    const fresh = h("button", { type: "button", class: "small primary chat-new", text: "New conversation",
      dataset: { action: "new-conversation" } });
    fresh.addEventListener("click", () => host.open(null));
    // While a search is shown, its results are the only [data-conversation] entries.
    const search = new SearchBox(host, (searching) => { this.#searching = searching; this.#draw(); });
    this.el = h("nav", { class: "chat-side", "aria-label": "Conversations" }, fresh, search.el, this.#list);
  }

  /** @param {any[]} items conversation summaries, newest first */
  set(items) {
    this.#items = items;
    this.#draw();
  }

  /** @param {string | null} id */
  setActive(id) {
    this.#active = id;
    this.#draw();
  }

  /** @param {any} summary a conversation that changed (its title, its time) */
  upsert(summary) {
    this.#items = [summary, ...this.#items.filter((c) => c.id !== summary.id)];
    this.#draw();
  }

  #draw() {
    this.#list.hidden = this.#searching;
    this.#list.replaceChildren(...(this.#searching ? [] : this.#items).map((c) => {
      const active = c.id === this.#active;
      const open = h("button", { type: "button", class: "chat-conversation-title", text: String(c.title || "Untitled"),
        title: String(c.title || ""), "aria-current": active ? "page" : null });
      open.addEventListener("click", () => this.#host.open(String(c.id)));
      const item = h("li", { class: `chat-conversation${active ? " active" : ""}`,
        dataset: { conversation: String(c.id), active: String(active) } }, open);
      if (active) item.append(this.#actions(c));
      return item;
    }));
  }

  /** @param {any} c */
  #actions(c) {
    const rename = h("button", { type: "button", class: "small ghost", text: "Rename", dataset: { action: "rename" } });
    const remove = h("button", { type: "button", class: "small ghost danger", text: "Delete", dataset: { action: "delete" } });
    const exports = ["md", "json"].map((format) => {
      const button = h("button", { type: "button", class: "small ghost", text: `Export .${format}`,
        dataset: { action: "export", format } });
      button.addEventListener("click", () => {
        downloadExport(this.#host.request, String(c.id), format).catch((err) => this.#host.say(describeError(err)));
      });
      return button;
    });
    rename.addEventListener("click", () => {
      const input = h("input", { type: "text", value: String(c.title ?? ""), "aria-label": "Conversation title",
        name: "title", maxLength: 200 });
      const form = h("form", { class: "chat-rename" }, input,
        h("button", { type: "submit", class: "small", text: "Save", dataset: { action: "save-title" } }));
      form.addEventListener("submit", async (ev) => {
        ev.preventDefault();
        if (input.value.trim()) await this.#host.rename(String(c.id), input.value.trim());
        this.#draw();
      });
      rename.parentElement?.replaceWith(form);
      input.focus();
      input.select();
    });
    remove.addEventListener("click", () => {
      const confirm = h("button", { type: "button", class: "small danger", text: "Delete for good", dataset: { action: "confirm-delete" } });
      const keep = h("button", { type: "button", class: "small ghost", text: "Keep" });
      const row = h("div", { class: "chat-confirm", role: "group", "aria-label": "Delete this conversation?" },
        h("span", { text: "Delete this conversation?" }), confirm, keep);
      confirm.addEventListener("click", () => { void this.#host.remove(String(c.id)); });
      keep.addEventListener("click", () => this.#draw());
      remove.parentElement?.replaceWith(row);
      keep.focus();
    });
    return h("div", { class: "chat-conversation-actions" }, rename, ...exports, remove);
  }
}
