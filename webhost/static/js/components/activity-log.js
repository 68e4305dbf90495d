// @ts-check
// The activity log: one [data-log-entry] per `activity` notification, filterable by server and
// kind. The DOM keeps the newest DOM_CAP entries (a long list made every frame of the page lay out
// and paint more, and so every round trip); the newest KEEP entries stay in memory, reachable with
// "Show older" at the top of the list (DOM_CAP more each time) and downloadable as JSON.
// Entry data is rendered only when expanded (it can be large). Like a console, the list follows new
// entries while the person is at the bottom, and stops (with a "Follow" button) once they scroll up.
// Three switches show or hide whole sources ([data-log-filter]: protocol messages, the servers' own
// log messages (notifications/message), stderr lines); the dock is resized by its top edge
// ([data-action="resize-log"], mouse or arrow keys). Switches, height and Hide/Show are remembered
// in localStorage.

import { h, prettyJson } from "../html.js";
import { textView } from "./content-view.js";

const DOM_CAP = 200;
const KEEP = 2000;
const KINDS = ["request", "response", "error", "cancelled", "notification", "stderr", "status"];
const ARROWS = /** @type {Record<string, string>} */ ({ out: "→", in: "←", local: "•" });
/** How close to the bottom (px) still counts as "at the bottom": a few rows, not a fraction of one. */
const FOLLOW_SLACK = 80;
/** A scroll this soon (ms) after the person's wheel, key, touch or pointer is theirs, not the page's. */
const USER_SCROLL_MS = 1200;
const SOURCES = /** @type {const} */ ([["protocol", "Protocol"], ["logs", "Server logs"], ["stderr", "stderr"]]);
const STORE = "webhost:log";
const MIN_HEIGHT = 96;
const KEY_STEP = 24;

/** Which source an entry comes from. @param {any} entry @returns {"protocol" | "logs" | "stderr"} */
export function sourceOf(entry) {
  if (entry?.kind === "stderr") return "stderr";
  if (entry?.method === "notifications/message") return "logs";
  return "protocol";
}

/** @returns {{height?: number, hidden?: boolean, sources?: Record<string, boolean>}} */
function loadPrefs() {
  try {
    const value = JSON.parse(localStorage.getItem(STORE) ?? "{}");
    return value && typeof value === "object" ? value : {};
  } catch {
    return {};
  }
}

export class ActivityLog {
  #list = h("ol", { class: "log-list" });
  #serverFilter = h("select", { "aria-label": "Filter by server" }, h("option", { value: "", text: "All servers" }));
  #kindFilter = h("select", { "aria-label": "Filter by kind" }, h("option", { value: "", text: "All kinds" }),
    KINDS.map((k) => h("option", { value: k, text: k })));
  #textFilter = h("input", { type: "search", placeholder: "Filter…", "aria-label": "Filter by text" });
  #count = h("span", { class: "muted log-count", text: "0" });
  #empty = h("li", { class: "empty muted", text: "Nothing yet. Requests, responses and notifications appear here." });
  #olderBtn = h("button", { type: "button", class: "small ghost", dataset: { action: "show-older-log" },
    title: "Show older entries of this log" });
  #older = h("li", { class: "log-older", hidden: true }, this.#olderBtn);
  /** Rows the DOM may hold while following: DOM_CAP, raised by each "Show older" until it follows again. */
  #cap = DOM_CAP;
  #servers = new Set();
  /** @type {any[]} */
  #pending = [];
  /** @type {any[]} */
  #kept = [];
  #scheduled = false;
  #stick = true;
  #userAt = -Infinity;
  /**
   * While following, a row that gets its real height late (content-visibility lays out a row only once
   * it is near the view) moves the bottom after the list was pinned there: pin again when any row, or
   * the list itself, changes size. Not within USER_SCROLL_MS of the person's own input: opening a row's
   * data must not jump the list.
   */
  #resized = new ResizeObserver(() => {
    if (!this.#stick || this.el.classList.contains("collapsed")) return;
    if (performance.now() - this.#userAt < USER_SCROLL_MS) return;
    const l = this.#list;
    if (l.scrollHeight - l.scrollTop - l.clientHeight > 1) l.scrollTop = l.scrollHeight;
  });
  #follow = h("button", { type: "button", class: "small", text: "Follow", hidden: true,
    title: "Scroll to the newest entry and follow new ones", dataset: { action: "follow-log" } });
  #collapseBtn = h("button", { type: "button", class: "small ghost", "aria-expanded": "true", text: "Hide",
    dataset: { action: "toggle-log" } });
  #prefs = loadPrefs();
  /** @type {Record<string, HTMLInputElement>} */
  #sources = {};
  #handle = h("div", { class: "log-resize", role: "separator", tabIndex: 0, "aria-orientation": "horizontal",
    "aria-label": "Resize the activity log", title: "Drag (or use the arrow keys) to resize the activity log",
    dataset: { action: "resize-log" } });
  el;

  constructor() {
    const clear = h("button", { type: "button", class: "small ghost", text: "Clear", dataset: { action: "clear-log" } });
    clear.addEventListener("click", () => this.clear());
    const download = h("button", { type: "button", class: "small ghost", text: "Download",
      title: `Download the newest ${KEEP} entries as JSON`, dataset: { action: "download-log" } });
    download.addEventListener("click", () => this.#download());
    for (const f of [this.#serverFilter, this.#kindFilter]) f.addEventListener("change", () => this.#applyFilters());
    this.#textFilter.addEventListener("input", () => this.#applyFilters());
    this.#list.append(this.#older, this.#empty);
    this.#resized.observe(this.#list); // the dock resized: the bottom moved too
    this.#olderBtn.addEventListener("click", () => this.#showOlder());
    // Only the person's own scrolling stops the following: rows laid out late (content-visibility)
    // or the page's own scrollTop also fire scroll events, and must not.
    for (const type of ["wheel", "touchmove", "keydown", "pointerdown"]) {
      this.#list.addEventListener(type, () => { this.#userAt = performance.now(); }, { passive: true });
    }
    this.#list.addEventListener("scroll", () => {
      const l = this.#list;
      const distance = l.scrollHeight - l.scrollTop - l.clientHeight;
      if (distance <= FOLLOW_SLACK) this.#setStick(true);
      else if (performance.now() - this.#userAt < USER_SCROLL_MS) this.#setStick(false);
    });
    this.#follow.addEventListener("click", () => {
      this.#userAt = -Infinity; // they asked to follow: rows laid out from now on are followed at once
      this.#setStick(true);
      this.#pin();
    });
    this.#collapseBtn.addEventListener("click", () => {
      this.#setCollapsed(!this.el.classList.contains("collapsed"));
      this.#save();
    });
    const switches = SOURCES.map(([key, label]) => {
      const box = h("input", { type: "checkbox", checked: this.#prefs.sources?.[key] !== false,
        dataset: { logFilter: key } });
      box.addEventListener("change", () => { this.#applyFilters(); this.#save(); });
      this.#sources[key] = box;
      return h("label", { class: "check log-source" }, box, h("span", { text: label }));
    });
    this.el = h("section", { class: "activity-log", "aria-label": "Activity log", dataset: { testid: "activity-log" } },
      this.#handle,
      h("div", { class: "log-toolbar" },
        h("h2", { class: "log-title" }, "Activity ", this.#count),
        h("span", { class: "log-sources", role: "group", "aria-label": "Show sources" }, switches),
        this.#serverFilter, this.#kindFilter, this.#textFilter,
        h("span", { class: "spacer" }), this.#follow, download, clear, this.#collapseBtn),
      this.#list);
    this.#wireResize();
    if (typeof this.#prefs.height === "number") this.#setHeight(this.#prefs.height);
    else this.#describeHeight(Math.round(innerHeight * 0.28)); // the stylesheet's 28vh, until the person resizes
    this.#setCollapsed(this.#prefs.hidden === true);
  }

  /** @param {boolean} collapsed */
  #setCollapsed(collapsed) {
    this.el.classList.toggle("collapsed", collapsed);
    this.#collapseBtn.setAttribute("aria-expanded", String(!collapsed));
    this.#collapseBtn.textContent = collapsed ? "Show" : "Hide";
    this.#handle.hidden = collapsed;
  }

  /** The dock's height in px, within what the window leaves. @param {number} px */
  #setHeight(px) {
    const max = Math.max(MIN_HEIGHT, Math.round(innerHeight * 0.8));
    const height = Math.round(Math.min(max, Math.max(MIN_HEIGHT, px)));
    this.el.style.setProperty("--wh-log-height", `${height}px`);
    this.el.dataset.height = String(height);
    this.#describeHeight(height);
    return height;
  }

  /** The separator's value, for assistive technology. @param {number} height */
  #describeHeight(height) {
    this.#handle.setAttribute("aria-valuenow", String(height));
    this.#handle.setAttribute("aria-valuemin", String(MIN_HEIGHT));
    this.#handle.setAttribute("aria-valuemax", String(Math.max(MIN_HEIGHT, Math.round(innerHeight * 0.8))));
  }

  #wireResize() {
    const handle = this.#handle;
    handle.addEventListener("pointerdown", (ev) => {
      ev.preventDefault();
      handle.setPointerCapture(ev.pointerId);
      const startY = ev.clientY;
      const startHeight = this.el.getBoundingClientRect().height;
      const move = (/** @type {PointerEvent} */ e) => { this.#setHeight(startHeight + startY - e.clientY); };
      const up = () => {
        handle.removeEventListener("pointermove", move);
        handle.removeEventListener("pointerup", up);
        handle.removeEventListener("pointercancel", up);
        this.#save();
      };
      handle.addEventListener("pointermove", move);
      handle.addEventListener("pointerup", up);
      handle.addEventListener("pointercancel", up);
    });
    handle.addEventListener("keydown", (ev) => {
      const step = ev.key === "ArrowUp" ? KEY_STEP : ev.key === "ArrowDown" ? -KEY_STEP : 0;
      if (!step) return;
      ev.preventDefault();
      this.#setHeight(this.el.getBoundingClientRect().height + step);
      this.#save();
    });
  }

  #save() {
    const height = Number(this.el.dataset.height);
    const prefs = {
      ...(Number.isFinite(height) && height > 0 ? { height } : {}),
      hidden: this.el.classList.contains("collapsed"),
      sources: Object.fromEntries(Object.entries(this.#sources).map(([k, box]) => [k, box.checked])),
    };
    try { localStorage.setItem(STORE, JSON.stringify(prefs)); } catch { /* storage off: not remembered */ }
  }

  /** Whether the list follows new entries (the person has not scrolled up). */
  get following() { return this.#stick; }

  /** @param {boolean} on */
  #setStick(on) {
    if (on && !this.#stick) this.#cap = DOM_CAP; // the rows brought back go at the next flush (still behind "Show older")
    this.#stick = on;
    this.#follow.hidden = on;
  }

  /** @param {any} entry an ActivityEntry */
  add(entry) {
    if (!entry || typeof entry !== "object") return;
    // Batched per frame: a burst of thousands of entries must not force a layout each.
    this.#pending.push(entry);
    this.#kept.push(entry);
    if (this.#kept.length > KEEP) this.#kept.splice(0, this.#kept.length - KEEP);
    const cap = this.#roomFor();
    if (this.#pending.length > cap) this.#pending.splice(0, this.#pending.length - cap);
    if (!this.#scheduled) {
      this.#scheduled = true;
      const flush = () => this.#flush();
      if (document.hidden) setTimeout(flush, 250);
      else requestAnimationFrame(flush);
    }
  }

  #flush() {
    this.#scheduled = false;
    const batch = this.#pending;
    this.#pending = [];
    if (!batch.length) return;
    const frag = document.createDocumentFragment();
    for (const entry of batch) frag.append(this.#render(entry));
    this.#empty.remove();
    this.#list.append(frag);
    let extra = this.#rowCount() - this.#roomFor();
    while (extra-- > 0) {
      const row = this.#older.nextElementSibling;
      if (!row) break;
      this.#resized.unobserve(row);
      row.remove();
    }
    this.#count.textContent = String(this.#kept.length);
    this.#describeOlder();
    // Only while the person follows the tail (and the log is shown): reading scrollHeight forces layout.
    if (this.#stick && !this.el.classList.contains("collapsed")) this.#pin();
  }

  /** Scroll to the newest entry; rows that get their height later are followed by #resized. */
  #pin() {
    const l = this.#list;
    l.scrollTop = l.scrollHeight;
  }

  /** @param {any} entry */
  #render(entry) {
    const server = entry.server ? String(entry.server) : "";
    if (server && !this.#servers.has(server)) {
      this.#servers.add(server);
      this.#serverFilter.append(h("option", { value: server, text: server }));
    }
    const kind = String(entry.kind ?? "");
    const ts = typeof entry.ts === "number" ? new Date(entry.ts * 1000) : new Date();
    const dur = typeof entry.durationMs === "number" ? `${entry.durationMs.toFixed(entry.durationMs < 10 ? 1 : 0)} ms` : "";
    const details = h("details", { class: `log-entry kind-${kind.replace(/[^\w-]/g, "")}`,
      dataset: { logEntry: String(entry.id ?? ""), kind, direction: String(entry.direction ?? ""), logServer: server,
        method: String(entry.method ?? ""), source: sourceOf(entry) } });
    const summary = h("summary", {},
      h("time", { class: "log-time", datetime: ts.toISOString(), text: ts.toLocaleTimeString([], { hour12: false }) }),
      h("span", { class: "log-server", text: server || "webhost", title: server || "webhost" }),
      h("span", { class: "log-dir", title: String(entry.direction ?? ""), text: ARROWS[entry.direction] ?? "·" }),
      h("span", { class: "log-kind", text: kind }),
      entry.method ? h("span", { class: "log-method", text: String(entry.method) }) : null,
      entry.summary && entry.summary !== entry.method
        ? h("span", { class: "log-summary", text: String(entry.summary).slice(0, 300) }) : null,
      dur ? h("span", { class: "log-dur muted", text: dur }) : null);
    details.append(summary);
    details.addEventListener("toggle", () => {
      if (details.open && details.childElementCount === 1) {
        details.append(entry.data === null || entry.data === undefined
          ? h("p", { class: "muted", text: "No data." })
          : textView(typeof entry.data === "string" ? entry.data : prettyJson(entry.data), { className: "json", filename: "activity.json" }));
      }
    });
    const row = h("li", { class: "log-row" }, details);
    row.hidden = !this.#matches(details);
    this.#resized.observe(row);
    return row;
  }

  clear() {
    this.#pending = [];
    this.#kept = [];
    this.#cap = DOM_CAP;
    this.#resized.disconnect();
    this.#resized.observe(this.#list);
    this.#list.replaceChildren(this.#older, this.#empty);
    this.#count.textContent = "0";
    this.#describeOlder();
  }

  /**
   * Rows the DOM may hold now: once the person scrolled up, none is taken from above what they read
   * (up to KEEP), so their place stays put; while following, the cap.
   */
  #roomFor() {
    return this.#stick ? this.#cap : KEEP;
  }

  /** Entry rows in the DOM (the list also holds the "Show older" row and, when empty, a note). */
  #rowCount() {
    return this.#list.childElementCount - 1 - (this.#empty.isConnected ? 1 : 0);
  }

  /** Kept entries older than the DOM's first row (the ones still pending are the newest). */
  #olderCount() {
    return Math.max(0, this.#kept.length - this.#pending.length - this.#rowCount());
  }

  #describeOlder() {
    const older = this.#olderCount();
    this.#older.hidden = older === 0;
    this.#olderBtn.textContent = `Show older (${older})`;
  }

  /** Put up to DOM_CAP older kept entries above the first row, keeping the person's place in the list. */
  #showOlder() {
    const older = this.#olderCount();
    if (!older) return;
    const take = Math.min(DOM_CAP, older);
    const frag = document.createDocumentFragment();
    for (const entry of this.#kept.slice(older - take, older)) frag.append(this.#render(entry));
    const l = this.#list;
    const fromBottom = l.scrollHeight - l.scrollTop;
    this.#older.after(frag);
    // Room for DOM_CAP new entries before the top rows go again (they stay behind "Show older").
    this.#cap = Math.min(KEEP, this.#rowCount() + DOM_CAP);
    l.scrollTop = l.scrollHeight - fromBottom;
    this.#describeOlder();
  }

  #download() {
    const blob = new Blob([JSON.stringify(this.#kept, null, 2)], { type: "application/json" });
    const url = URL.createObjectURL(blob);
    const link = h("a", { href: url, download: "webhost-activity.json" });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }

  /** @param {HTMLElement} el */
  #matches(el) {
    const s = this.#serverFilter.value;
    const k = this.#kindFilter.value;
    const t = this.#textFilter.value.trim().toLowerCase();
    const source = this.#sources[el.dataset.source ?? "protocol"];
    return (!source || source.checked) && (!s || el.dataset.logServer === s) && (!k || el.dataset.kind === k)
      && (!t || (el.firstElementChild?.textContent ?? "").toLowerCase().includes(t));
  }

  #applyFilters() {
    for (const el of /** @type {NodeListOf<HTMLElement>} */ (this.#list.querySelectorAll("[data-log-entry]"))) {
      if (el.parentElement) el.parentElement.hidden = !this.#matches(el);
    }
  }
}
