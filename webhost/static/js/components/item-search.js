// @ts-check
// A list of items to choose from while typing in a text field (the chat's `@` and `/`): a listbox under the
// field's control, filtered by the words typed (every word in the item's text, any case), walked with the
// arrows, chosen with Enter or a click, closed with Escape. The field keeps the focus: it points at the item
// shown as active (aria-activedescendant), and a polite status line says how many items match.

import { h, uid } from "../html.js";

const SHOWN = 50; // items drawn at most (the words typed narrow them)

/**
 * @template T
 * @typedef {object} ItemSearchOptions
 * @property {HTMLInputElement | HTMLTextAreaElement} field the field typed in (it keeps the focus)
 * @property {string} label the list's accessible name
 * @property {(item: T) => string} text what the words typed are looked for in
 * @property {(item: T) => HTMLElement} draw an item's content (in the option)
 * @property {(item: T) => Record<string, string>} attrs the option's data attributes
 * @property {(item: T) => void} choose
 */

/** @template T */
export class ItemSearch {
  el;
  #list;
  #status = h("p", { class: "visually-hidden", role: "status", "aria-live": "polite" });
  #none = h("p", { class: "item-search-empty muted", hidden: true });
  /** @type {ItemSearchOptions<T>} */
  #opts;
  /** @type {T[]} */
  #items = [];
  /** @type {T[]} */
  #shown = [];
  #active = 0;
  #query = "";

  /** @param {ItemSearchOptions<T>} opts */
  constructor(opts) {
    this.#opts = opts;
    this.#list = h("ul", { id: uid("items"), role: "listbox", "aria-label": opts.label, class: "item-search-list" });
    this.el = h("div", { class: "item-search", hidden: true }, this.#list, this.#none, this.#status);
    opts.field.setAttribute("aria-controls", this.#list.id);
    // The field keeps the focus when an item is clicked.
    this.#list.addEventListener("mousedown", (ev) => ev.preventDefault());
  }

  get isOpen() { return !this.el.hidden; }

  /** Show these items, filtered by `query`. @param {T[]} items @param {string} query @param {string} [empty] */
  open(items, query, empty = "Nothing matches") {
    this.#items = items;
    this.#empty = empty;
    this.el.hidden = false;
    this.filter(query, true);
  }

  #empty = "Nothing matches";

  /** @param {string} query @param {boolean} [force] */
  filter(query, force = false) {
    if (!this.isOpen || (query === this.#query && !force)) return;
    this.#query = query;
    const words = query.toLowerCase().split(/\s+/).filter(Boolean);
    const matching = this.#items.filter((item) => {
      const text = this.#opts.text(item).toLowerCase();
      return words.every((w) => text.includes(w));
    });
    this.#shown = matching.slice(0, SHOWN);
    this.#active = 0;
    this.#draw();
    this.#status.textContent = matching.length
      ? `${matching.length} ${matching.length === 1 ? "item" : "items"}: arrows to choose, Enter to take one, Escape to close`
      : this.#empty;
  }

  close() {
    if (!this.isOpen) return;
    this.el.hidden = true;
    this.#list.replaceChildren();
    this.#opts.field.removeAttribute("aria-activedescendant");
    this.#query = "";
  }

  /** The field's keydown, first: true when the list took the key. @param {KeyboardEvent} ev */
  key(ev) {
    if (!this.isOpen || ev.isComposing) return false;
    if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
      if (this.#shown.length) {
        const step = ev.key === "ArrowDown" ? 1 : -1;
        this.#active = (this.#active + step + this.#shown.length) % this.#shown.length;
        this.#mark();
      }
    } else if (ev.key === "Enter" || ev.key === "Tab") {
      const item = this.#shown[this.#active];
      if (!item) {
        if (ev.key === "Tab") return false;
        this.close();
      } else this.#take(item);
    } else if (ev.key === "Escape") {
      this.close();
    } else return false;
    ev.preventDefault();
    ev.stopImmediatePropagation();
    return true;
  }

  /** @param {T} item */
  #take(item) {
    this.close();
    this.#opts.choose(item);
  }

  #draw() {
    this.#list.replaceChildren(...this.#shown.map((item, index) => {
      const option = h("li", { id: uid("item"), role: "option", class: "item-search-option", "aria-selected": "false",
        dataset: this.#opts.attrs(item) }, this.#opts.draw(item));
      option.addEventListener("click", () => this.#take(item));
      option.addEventListener("mousemove", () => { if (this.#active !== index) { this.#active = index; this.#mark(); } });
      return option;
    }));
    this.#list.hidden = !this.#shown.length;
    this.#none.hidden = Boolean(this.#shown.length);
    this.#none.textContent = this.#empty;
    this.#mark();
  }

  #mark() {
    const options = [...this.#list.querySelectorAll('[role="option"]')];
    options.forEach((option, index) => option.setAttribute("aria-selected", String(index === this.#active)));
    const active = options[this.#active];
    if (active) {
      this.#opts.field.setAttribute("aria-activedescendant", active.id);
      active.scrollIntoView({ block: "nearest" });
    } else this.#opts.field.removeAttribute("aria-activedescendant");
  }
}
