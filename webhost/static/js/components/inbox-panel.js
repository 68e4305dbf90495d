// @ts-check
// The "Waiting for you" panel's frame: its title and count, Hide / Show, and where it is docked. It takes a
// place of its own in the page's layout, below the workspace or beside it (layout.css), and never floats over
// it: a request must not cover the result, the app or the app's own buttons it is about. The person may hide
// its cards (the title bar stays, with the count) and dock it at the side or the bottom; the dock is
// remembered (localStorage `webhost:inbox`). A new request shows the cards again.
//
// Its selectors: the panel `aside.inbox` with `data-dock` = `bottom` / `side` and `data-collapsed`;
// `[data-action="toggle-inbox"]` (aria-expanded) and `[data-action="dock-inbox"]`.

import { h } from "../html.js";

const STORE = "webhost:inbox";
/** @typedef {"bottom" | "side"} Dock */

/** @returns {Dock} */
function savedDock() {
  try {
    return JSON.parse(localStorage.getItem(STORE) ?? "{}")?.dock === "side" ? "side" : "bottom";
  } catch {
    return "bottom";
  }
}

export class InboxPanel {
  count = h("span", { class: "count", text: "0" });
  list = h("div", { class: "inbox-list", id: "inbox-list" });
  #toggle = h("button", { type: "button", class: "small ghost", text: "Hide", "aria-expanded": "true",
    "aria-controls": "inbox-list", title: "Hide the requests (the count stays here)", dataset: { action: "toggle-inbox" } });
  #dock = h("button", { type: "button", class: "small ghost inbox-dock", dataset: { action: "dock-inbox" } });
  el;

  /** @param {HTMLElement} live the announcements' live region */
  constructor(live) {
    this.el = h("aside", { class: "inbox", "aria-label": "Waiting for you", hidden: true, dataset: { dock: savedDock() } },
      h("div", { class: "inbox-head" },
        h("h2", { class: "inbox-title" }, "Waiting for you ", this.count),
        h("span", { class: "spacer" }), this.#dock, this.#toggle),
      live, this.list);
    this.#toggle.addEventListener("click", () => this.#setCollapsed(this.el.dataset.collapsed !== "true"));
    this.#dock.addEventListener("click", () => {
      this.#setDock(this.el.dataset.dock === "side" ? "bottom" : "side");
      this.#dock.focus();
    });
    this.#setDock(/** @type {Dock} */ (this.el.dataset.dock));
  }

  /** Show the cards (a new request arrived, or the person asked for them). */
  expand() { this.#setCollapsed(false); }

  /** Bring the panel into view with its cards shown, and focus its first control; returns whether there was one. */
  reveal() {
    this.expand();
    this.el.scrollIntoView({ behavior: "smooth", block: "nearest" });
    const first = /** @type {HTMLElement | null} */ (this.list.querySelector("input, select, textarea, button"));
    first?.focus();
    return Boolean(first);
  }

  /** @param {boolean} collapsed */
  #setCollapsed(collapsed) {
    if (collapsed) this.el.dataset.collapsed = "true";
    else delete this.el.dataset.collapsed;
    this.list.hidden = collapsed;
    this.#toggle.textContent = collapsed ? "Show" : "Hide";
    this.#toggle.setAttribute("aria-expanded", String(!collapsed));
    this.#toggle.title = collapsed ? "Show the requests" : "Hide the requests (the count stays here)";
  }

  /** @param {Dock} dock */
  #setDock(dock) {
    this.el.dataset.dock = dock;
    document.body.dataset.inboxDock = dock; // layout.css gives the panel its place
    this.#dock.textContent = dock === "side" ? "Dock below" : "Dock at the side";
    this.#dock.title = dock === "side" ? "Show the requests below the workspace" : "Show the requests beside the workspace";
    try { localStorage.setItem(STORE, JSON.stringify({ dock })); } catch { /* storage off: not remembered */ }
  }
}
