// @ts-check
// Where an App frame is shown: inline in the page, fullscreen (a fixed overlay with a host-owned
// Exit/Close bar that is always visible) or picture-in-picture (a small floating window), and the
// frame's height from the App's size reports (mcp-apps §8, §9).
//
// The iframe is never moved in the DOM (that would reload it): fullscreen and pip restyle the
// stage element, which is promoted to the top layer with the Popover API where available, so no
// ancestor's overflow, transform or z-index can clip it.

import { h } from "../html.js";
import { floatingChanged, matchParking } from "../park.js";

/** The inline frame grows with the App up to this height (containerDimensions.maxHeight). */
export const MAX_INLINE_HEIGHT = 6000;
/** Height before the App's first size report. */
export const INITIAL_HEIGHT = 160;
/** Shrinks smaller than this are ignored (1 px/frame shrink loops, MCP-UI-Org/mcp-ui#215). */
export const SHRINK_HYSTERESIS = 4;
/** pip is offered only when the window is at least this wide. */
const PIP_MIN_VIEWPORT = 900;
const PIP_WIDTH = 400;

/** @typedef {"inline" | "fullscreen" | "pip"} DisplayMode */

const SUPPORTS_POPOVER = typeof HTMLElement !== "undefined" && "showPopover" in HTMLElement.prototype;

export class Stage extends EventTarget {
  /** @type {DisplayMode} */
  mode = "inline";
  /** The last accepted App height report, or null before the first. @type {number | null} */
  appHeight = null;
  el;
  box;
  #title = h("span", { class: "wh-stage-title" });
  #bar;
  /** @type {HTMLIFrameElement | null} */
  #iframe = null;
  #ro;
  #lastLayout = "";
  #layoutQueued = false;
  #onKey;
  #onWindowResize;
  #callbacks;

  /**
   * @param {{title: string, onUserMode: (mode: DisplayMode) => void, onClose: () => void,
   *   declaredModes?: () => string[] | null}} callbacks `declaredModes`: the App's own
   *   appCapabilities.availableDisplayModes (null: it declared none); the bar offers no mode it left out
   */
  constructor(callbacks) {
    super();
    this.#callbacks = callbacks;
    this.#title.textContent = callbacks.title;
    const button = (/** @type {string} */ action, /** @type {string} */ text, /** @type {() => void} */ fn) =>
      h("button", { type: "button", class: "small", text, dataset: { stageAction: action }, onclick: fn });
    this.#bar = h("div", { class: "wh-stage-bar", role: "toolbar", "aria-label": "App window" },
      this.#title, h("span", { class: "spacer" }),
      button("pip", "Picture in picture", () => callbacks.onUserMode("pip")),
      button("fullscreen", "Fullscreen", () => callbacks.onUserMode("fullscreen")),
      button("inline", "Exit", () => callbacks.onUserMode("inline")),
      button("close", "Close app", () => callbacks.onClose()));
    this.box = h("div", { class: "wh-app-box" });
    this.el = h("div", { class: "wh-app-stage is-inline", dataset: { displayMode: "inline" } }, this.#bar, this.box);
    if (SUPPORTS_POPOVER) this.el.setAttribute("popover", "manual");
    this.#ro = new ResizeObserver(() => this.#layoutChanged());
    this.#ro.observe(this.box);
    this.#onWindowResize = () => {
      if (this.mode === "pip" && !this.availableModes().includes("pip")) callbacks.onUserMode("inline");
      this.#layoutChanged();
    };
    window.addEventListener("resize", this.#onWindowResize);
    this.#onKey = (/** @type {KeyboardEvent} */ ev) => {
      if (ev.key === "Escape" && this.mode === "fullscreen") {
        ev.preventDefault();
        callbacks.onUserMode("inline");
      }
    };
    document.addEventListener("keydown", this.#onKey);
    this.#updateBar();
  }

  /** @param {string} title */
  setTitle(title) { this.#title.textContent = title; }

  /**
   * @param {HTMLIFrameElement} iframe
   * @param {{move?: boolean}} [how] move: a loaded frame (warm), moved with the state-preserving
   *   moveBefore, which keeps its document; throws when the browser cannot (the caller goes cold)
   */
  mount(iframe, how = {}) {
    if (how.move) {
      const box = /** @type {any} */ (this.box);
      box.replaceChildren();
      box.moveBefore(iframe, null);
    } else {
      this.box.replaceChildren(iframe);
    }
    matchParking(iframe); // an app can open while its tool view is parked
    this.#iframe = iframe;
    this.#applyHeight();
  }

  /** The modes the layout allows now. @returns {DisplayMode[]} */
  availableModes() {
    return window.innerWidth >= PIP_MIN_VIEWPORT ? ["inline", "fullscreen", "pip"] : ["inline", "fullscreen"];
  }

  /** containerDimensions for the current mode (mcp-apps §9). @returns {Record<string, number>} */
  containerDimensions() {
    const width = Math.max(0, Math.round(this.box.clientWidth));
    if (this.mode === "fullscreen") return { width, height: Math.max(0, Math.round(this.box.clientHeight)) };
    if (this.mode === "pip") return { width, maxHeight: this.#pipMaxHeight() };
    return { width, maxHeight: MAX_INLINE_HEIGHT };
  }

  /**
   * Switch the visual mode (the caller has already checked it is allowed).
   * @param {DisplayMode} mode
   */
  setMode(mode) {
    if (mode === this.mode) return;
    const wasOverlay = this.mode !== "inline";
    this.mode = mode;
    this.el.classList.toggle("is-inline", mode === "inline");
    this.el.classList.toggle("is-fullscreen", mode === "fullscreen");
    this.el.classList.toggle("is-pip", mode === "pip");
    this.el.dataset.displayMode = mode;
    // A pip frame floats above the page: it stays seen and usable when its tool view is parked (park.js).
    this.el.toggleAttribute("data-floating", mode === "pip");
    floatingChanged(this.el);
    const overlay = mode !== "inline";
    if (SUPPORTS_POPOVER && this.el.isConnected) {
      try {
        if (overlay && !wasOverlay) this.el.showPopover();
        if (!overlay && wasOverlay) this.el.hidePopover();
      } catch { /* not connected or already in that state: the classes still apply */ }
    }
    this.#updateBar();
    this.#applyHeight();
    if (mode === "fullscreen") {
      /** @type {HTMLElement | null} */ (this.#bar.querySelector('[data-stage-action="inline"]'))?.focus();
    }
    this.#layoutChanged();
  }

  /**
   * An App size report. Grows at once; shrinks only by SHRINK_HYSTERESIS px or more; clamped.
   * The host never measures the App itself, so there is no feedback loop to feed.
   * @param {unknown} height
   * @returns {boolean} whether it changed the frame
   */
  reportHeight(height) {
    if (typeof height !== "number" || !Number.isFinite(height) || height < 0) return false;
    const next = Math.min(Math.ceil(height), MAX_INLINE_HEIGHT);
    const current = this.appHeight;
    if (current !== null) {
      if (next === current) return false;
      if (next < current && current - next < SHRINK_HYSTERESIS) return false;
    }
    this.appHeight = next;
    this.#applyHeight();
    return true;
  }

  destroy() {
    this.#ro.disconnect();
    window.removeEventListener("resize", this.#onWindowResize);
    document.removeEventListener("keydown", this.#onKey);
    if (SUPPORTS_POPOVER && this.mode !== "inline") {
      try { this.el.hidePopover(); } catch { /* already hidden */ }
    }
    this.mode = "inline";
    this.el.className = "wh-app-stage is-inline";
    this.el.dataset.displayMode = "inline";
    this.el.removeAttribute("data-floating");
    floatingChanged(this.el);
  }

  #pipMaxHeight() {
    return Math.max(120, Math.round(Math.min(480, window.innerHeight * 0.6)));
  }

  #applyHeight() {
    const frame = this.#iframe;
    if (!frame) return;
    const wanted = this.appHeight ?? INITIAL_HEIGHT;
    if (this.mode === "fullscreen") frame.style.height = "100%";
    else if (this.mode === "pip") frame.style.height = `${Math.min(wanted, this.#pipMaxHeight())}px`;
    else frame.style.height = `${Math.min(wanted, MAX_INLINE_HEIGHT)}px`;
    if (this.mode === "pip") this.el.style.width = `${Math.min(PIP_WIDTH, window.innerWidth - 32)}px`;
    else this.el.style.removeProperty("width");
  }

  #updateBar() {
    const modes = this.availableModes();
    // A mode is offered when the layout allows it and the App declared it (or declared none).
    const declared = this.#callbacks.declaredModes?.() ?? null;
    const offered = (/** @type {DisplayMode} */ m) => modes.includes(m) && (!declared || declared.includes(m));
    for (const b of /** @type {NodeListOf<HTMLButtonElement>} */ (this.#bar.querySelectorAll("[data-stage-action]"))) {
      const action = b.dataset.stageAction;
      if (action === "pip") b.hidden = this.mode !== "fullscreen" || !offered("pip");
      if (action === "fullscreen") b.hidden = this.mode !== "pip" || !offered("fullscreen");
      if (action === "inline") b.textContent = this.mode === "pip" ? "Back to page" : "Exit fullscreen";
    }
  }

  /** Coalesced into a microtask, so an answer to ui/request-display-mode goes out before the context change. */
  #layoutChanged() {
    if (this.#layoutQueued) return;
    this.#layoutQueued = true;
    queueMicrotask(() => {
      this.#layoutQueued = false;
      const key = JSON.stringify([this.mode, this.containerDimensions(), this.availableModes()]);
      if (key === this.#lastLayout) return;
      this.#lastLayout = key;
      this.#updateBar();
      this.dispatchEvent(new Event("layout"));
    });
  }
}
