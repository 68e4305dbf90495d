// @ts-check
// The sidebar's search box ([data-testid="search"]): filters every server's tools, resources,
// templates and prompts as you type (name, title, description); the rest are hidden. `/` focuses
// it, the arrow keys move through the matches, Enter opens the highlighted one, Escape clears.

import { h } from "../html.js";

export class Search {
  #cards;
  #index = -1;
  input = h("input", { type: "search", class: "search-input", placeholder: "Search tools, resources, prompts  ( / )",
    "aria-label": "Search tools, resources and prompts", autocomplete: "off", spellcheck: "false",
    dataset: { testid: "search" } });
  #count = h("span", { class: "search-count muted", "aria-live": "polite" });
  el = h("div", { class: "search", role: "search" }, this.input, this.#count);

  /** @param {() => import("./server-card.js").ServerCard[]} cards */
  constructor(cards) {
    this.#cards = cards;
    this.input.addEventListener("input", () => this.apply());
    this.input.addEventListener("keydown", (ev) => this.#keys(ev));
    document.addEventListener("keydown", (ev) => {
      if (ev.key !== "/" || ev.ctrlKey || ev.metaKey || ev.altKey || isEditable(ev.target)) return;
      ev.preventDefault();
      this.input.focus();
      this.input.select();
    });
  }

  get query() { return this.input.value; }

  /** Filter again (on typing, and when a server's lists change). */
  apply() {
    for (const card of this.#cards()) card.filter(this.input.value);
    this.#index = -1;
    this.#highlight();
    const matches = this.#matches();
    this.#count.textContent = this.input.value.trim() ? `${matches.length} match${matches.length === 1 ? "" : "es"}` : "";
  }

  #matches() { return this.#cards().flatMap((c) => c.matches()); }

  /** @param {KeyboardEvent} ev */
  #keys(ev) {
    const matches = this.#matches();
    if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
      if (!matches.length) return;
      ev.preventDefault();
      const step = ev.key === "ArrowDown" ? 1 : -1;
      this.#index = this.#index < 0 ? (step > 0 ? 0 : matches.length - 1)
        : (this.#index + step + matches.length) % matches.length;
      this.#highlight(matches);
    } else if (ev.key === "Enter") {
      const target = matches[this.#index] ?? matches[0];
      if (!target) return;
      ev.preventDefault();
      target.click();
    } else if (ev.key === "Escape" && this.input.value) {
      ev.preventDefault();
      this.input.value = "";
      this.apply();
    }
  }

  #highlight(matches = this.#matches()) {
    for (const el of document.querySelectorAll("[data-search-active]")) el.removeAttribute("data-search-active");
    const el = matches[this.#index];
    if (el) {
      el.dataset.searchActive = "true";
      el.scrollIntoView({ block: "nearest" });
      this.input.setAttribute("aria-activedescendant", el.id || "");
    } else {
      this.input.removeAttribute("aria-activedescendant");
    }
  }
}

/** @param {EventTarget | null} target */
function isEditable(target) {
  const el = /** @type {HTMLElement | null} */ (target);
  if (!el || !el.tagName) return false;
  return el.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName);
}
