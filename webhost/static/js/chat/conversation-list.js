// @ts-check
// The person's conversations, newest first: [data-conversation="ID"] each (data-active on the open one),
// [data-action="new-conversation"], and rename / delete for the open one.

import { h } from "../html.js";

/**
 * @typedef {object} ListHost
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

  /** @param {ListHost} host */
  constructor(host) {
    this.#host = host;
    const fresh = h("button", { type: "button", class: "small primary chat-new", text: "New conversation",
      dataset: { action: "new-conversation" } });
    fresh.addEventListener("click", () => host.open(null));
    this.el = h("nav", { class: "chat-side", "aria-label": "Conversations" }, fresh, this.#list);
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
    this.#list.replaceChildren(...this.#items.map((c) => {
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
    return h("div", { class: "chat-conversation-actions" }, rename, remove);
  }
}
