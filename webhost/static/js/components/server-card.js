// @ts-check
// One configured server in the sidebar: status (data-server / data-status, the contract's
// selectors), Reconnect / Disconnect, and tabs listing its tools, resources, prompts and apps.
// Tool items ([data-tool]) live inside the [data-server] element, as tests expect.

import { h, replaceChildren } from "../html.js";
import { describeError } from "../rpc.js";
import { serverInputForm } from "./server-inputs.js";
import { serverSignIn } from "./server-sign-in.js";
import { iconFor } from "../icons.js";
import { getTheme } from "../theme.js";

/**
 * @typedef {object} CardContext
 * @property {import("../rpc.js").RpcClient} rpc
 * @property {(kind: "tool" | "resource" | "template" | "prompt" | "server", server: string, item?: any) => void} open
 * @property {(card: ServerCard) => void} changed the card's state or lists changed
 */

/** @typedef {"tools" | "resources" | "prompts" | "apps"} TabName */
/** @typedef {{state: "idle" | "loading" | "ok" | "error", items: any[], error?: string, cacheHint?: any}} ListState */

const LOG_CAP = 500;
const TABS = /** @type {TabName[]} */ (["tools", "resources", "prompts", "apps"]);
const TAB_LABELS = { tools: "Tools", resources: "Resources", prompts: "Prompts", apps: "Apps" };

export class ServerCard {
  /** @type {any} ServerState */
  state;
  #ctx;
  #gen = 0;
  #logSeq = 0;
  /** @type {Record<"tools" | "resources" | "templates" | "prompts", ListState>} */
  lists = { tools: idle(), resources: idle(), templates: idle(), prompts: idle() };
  /** @type {any[]} server/log messages, newest last */
  logs = [];
  /** @type {TabName} */
  #tab = "tools";
  #dot = h("span", { class: "status-dot", "aria-hidden": "true" });
  #icon = h("span", { class: "server-icon", dataset: { serverIcon: "" } });
  #statusText = h("span", { class: "status-text" });
  #meta = h("p", { class: "server-meta muted" });
  #error = h("p", { class: "server-error", role: "alert", hidden: true, dataset: { testid: "server-error" } });
  #actions = h("div", { class: "server-actions" });
  #inputs = h("div", { class: "server-inputs" });
  #inputKey = "";
  #signIn = h("div", { class: "server-sign-in-slot" });
  #signInKey = "";
  #tablist = h("div", { class: "tabs", role: "tablist" });
  /** @type {Record<TabName, HTMLButtonElement>} */
  #tabButtons;
  /** @type {Record<TabName, HTMLElement>} */
  #panels;
  #collapse = h("button", { type: "button", class: "icon-button collapse", "aria-expanded": "true", title: "Collapse", text: "▾" });
  #body = h("div", { class: "server-body" });
  /** @type {{kind: string | null, key: string | null}} */
  #active = { kind: null, key: null };
  /** The search box's query, lower case ("" shows the tabs as usual). */
  #query = "";
  #noMatch = h("p", { class: "empty muted search-none", text: "No matches.", hidden: true });
  el;

  /** @param {any} state @param {CardContext} ctx */
  constructor(state, ctx) {
    this.state = state;
    this.#ctx = ctx;
    const name = String(state.name);
    this.#tabButtons = /** @type {any} */ ({});
    this.#panels = /** @type {any} */ ({});
    for (const tab of TABS) {
      const panelId = `panel-${cssId(name)}-${tab}`;
      const btn = h("button", { type: "button", role: "tab", class: "tab", "aria-controls": panelId,
        dataset: { tab }, "aria-selected": String(tab === this.#tab), tabIndex: tab === this.#tab ? 0 : -1 });
      btn.addEventListener("click", () => this.selectTab(tab));
      btn.addEventListener("keydown", (ev) => this.#tabKeys(ev, tab));
      this.#tabButtons[tab] = btn;
      this.#panels[tab] = h("div", { class: "tab-panel", role: "tabpanel", id: panelId, hidden: tab !== this.#tab });
      this.#tablist.append(btn);
    }
    this.#body.append(this.#tablist, ...TABS.map((t) => this.#panels[t]), this.#noMatch);
    const nameButton = h("button", { type: "button", class: "server-name", title: "Server details" },
      this.#dot, this.#icon, h("span", { class: "name", text: name }));
    nameButton.addEventListener("click", () => this.#ctx.open("server", name));
    this.#collapse.addEventListener("click", () => {
      const collapsed = this.el.classList.toggle("collapsed");
      this.#collapse.setAttribute("aria-expanded", String(!collapsed));
      this.#collapse.textContent = collapsed ? "▸" : "▾";
      this.#body.hidden = collapsed;
    });
    this.el = h("section", { class: "server-card", dataset: { server: name, status: String(state.status) },
      "aria-label": `Server ${name}` },
    h("header", { class: "server-head" }, nameButton, this.#statusText, this.#collapse),
    this.#meta, this.#error, this.#inputs, this.#signIn, this.#actions, this.#body);
    this.setState(state);
  }

  get name() { return String(this.state.name); }

  /** The RPC client (for the server's details: ping, log level). */
  get rpc() { return this.#ctx.rpc; }

  /**
   * Filter the items by the search box's query: while searching, every list (tools, resources,
   * templates, prompts) is shown at once and items that do not match are hidden.
   * @param {string} query
   */
  filter(query) {
    this.#query = query.trim().toLowerCase();
    this.#applyFilter();
  }

  /** The visible items while searching, in order. @returns {HTMLElement[]} */
  matches() {
    if (!this.#query) return [];
    return /** @type {HTMLElement[]} */ ([...this.el.querySelectorAll(".tab-panel:not([data-search-off]) li:not([hidden]) > .item")]);
  }

  #applyFilter() {
    const q = this.#query;
    const searching = q !== "" && this.state.status === "connected";
    this.el.classList.toggle("searching", searching);
    this.#tablist.hidden = searching || this.state.status !== "connected";
    let shown = 0;
    for (const tab of TABS) {
      const panel = this.#panels[tab];
      if (searching) {
        // The apps tab repeats tools: left out of a search.
        panel.hidden = tab === "apps" || this.#tabButtons[tab].hidden;
        if (tab === "apps") panel.dataset.searchOff = "";
        else delete panel.dataset.searchOff;
      } else {
        panel.hidden = tab !== this.#tab;
        delete panel.dataset.searchOff;
      }
      for (const li of panel.querySelectorAll("li")) {
        const item = /** @type {HTMLElement | null} */ (li.querySelector(".item"));
        const hit = !searching || (item?.dataset.search ?? "").includes(q);
        /** @type {HTMLElement} */ (li).hidden = !hit;
        if (hit && searching && tab !== "apps" && !panel.hidden) shown += 1;
      }
    }
    this.#noMatch.hidden = !searching || shown > 0;
    // A server with nothing matching shrinks to its name and status line while the search lasts (sidebar.css).
    this.el.toggleAttribute("data-search-miss", q !== "" && shown === 0);
    if (searching && this.#body.hidden) {
      this.el.classList.remove("collapsed");
      this.#body.hidden = false;
      this.#collapse.setAttribute("aria-expanded", "true");
      this.#collapse.textContent = "▾";
    }
  }

  /** @param {any} state */
  setState(state) {
    const was = this.state?.status;
    this.state = state;
    const status = String(state.status ?? "disconnected");
    this.el.dataset.status = status;
    this.#statusText.textContent = status;
    const info = state.serverInfo;
    const icon = iconFor(info?.icons, getTheme());
    replaceChildren(this.#icon, icon.el);
    this.#icon.dataset.serverIcon = icon.el ? "drawn" : icon.skipped ? "skipped" : "";
    // The era the entry chose (webhost.servers.NAME.protocol) is named when it is not "auto".
    const choice = String(state.protocolChoice ?? "auto");
    this.el.dataset.protocolChoice = choice;
    this.#meta.textContent = [state.transport, info ? `${info.name ?? ""} ${info.version ?? ""}`.trim() : null,
      state.protocolVersion, choice === "auto" ? null : `protocol: ${choice}`].filter(Boolean).join(" · ");
    this.#error.hidden = !(state.error && (status === "error" || status === "disconnected"));
    this.#error.textContent = state.error ? String(state.error) : "";
    this.#renderActions(status);
    this.#renderInputs(status, Array.isArray(state.inputs) ? state.inputs : []);
    this.#renderSignIn(status);
    if (status === "connected" && (was !== "connected" || this.lists.tools.state === "idle")) this.loadAll();
    if (status !== "connected") {
      this.#gen += 1;
      for (const key of /** @type {const} */ (["tools", "resources", "templates", "prompts"])) this.lists[key] = idle();
    }
    this.#renderPanels();
    this.#ctx.changed(this);
  }

  /** The form for the values a "needs-input" server waits for (kept while the same ones are asked). @param {string} status @param {any[]} inputs */
  #renderInputs(status, inputs) {
    const key = status === "needs-input" ? inputs.map((i) => String(i.id)).join("\n") : "";
    if (key === this.#inputKey) return;
    this.#inputKey = key;
    replaceChildren(this.#inputs, key ? serverInputForm(this.name, inputs, this.#ctx.rpc, (s) => {
      if (s?.name === this.name) this.setState(s);
    }) : null);
  }

  /** Sign in (auth-required, with the reason) or Sign out of this server (signed in). @param {string} status */
  #renderSignIn(status) {
    const signIn = this.state.signIn;
    const key = signIn ? `${status}\n${this.state.error ?? ""}\n${signIn.signedIn}` : "";
    if (key === this.#signInKey) return;
    this.#signInKey = key;
    replaceChildren(this.#signIn, serverSignIn(this.name, this.state, this.#ctx.rpc, (s) => {
      if (s?.name === this.name) this.setState(s);
    }));
  }

  /** @param {string} status */
  #renderActions(status) {
    const btn = (/** @type {string} */ label, /** @type {string} */ method, /** @type {string} */ cls) => {
      const b = h("button", { type: "button", class: `small ${cls}`, text: label, dataset: { action: method.split("/")[1] } });
      b.addEventListener("click", () => this.#act(method, b));
      return b;
    };
    const parts = [];
    if (status !== "connecting") parts.push(btn("Reconnect", "servers/reconnect", status === "connected" ? "" : "primary"));
    if (status === "connected" || status === "connecting") parts.push(btn("Disconnect", "servers/disconnect", ""));
    replaceChildren(this.#actions, parts);
  }

  /** @param {string} method @param {HTMLButtonElement} button */
  async #act(method, button) {
    for (const b of this.#actions.querySelectorAll("button")) b.disabled = true;
    button.textContent = method.endsWith("reconnect") ? "Reconnecting…" : "Disconnecting…";
    try {
      const r = await this.#ctx.rpc.request(method, { server: this.name });
      if (r?.server) this.setState(r.server);
      else this.#renderActions(String(this.state.status));
    } catch (err) {
      this.#renderActions(String(this.state.status));
      this.#error.hidden = false;
      this.#error.textContent = describeError(err);
    }
  }

  loadAll() {
    const caps = this.state.capabilities ?? {};
    this.load("tools");
    if (caps.resources) { this.load("resources"); this.load("templates"); }
    if (caps.prompts) this.load("prompts");
  }

  /** @param {"tools" | "resources" | "templates" | "prompts"} which @param {boolean} [refresh] */
  async load(which, refresh = false) {
    const gen = this.#gen;
    const spec = {
      tools: ["tools/list", "tools"],
      resources: ["resources/list", "resources"],
      templates: ["resources/templates/list", "resourceTemplates"],
      prompts: ["prompts/list", "prompts"],
    }[which];
    if (this.lists[which].state !== "ok") this.lists[which] = { state: "loading", items: [] };
    this.#renderPanels();
    /** @type {ListState} */
    let next;
    try {
      const params = which === "tools" && refresh ? { server: this.name, refresh: true } : { server: this.name };
      const result = await this.#ctx.rpc.request(spec[0], params);
      next = { state: "ok", items: Array.isArray(result?.[spec[1]]) ? result[spec[1]] : [], cacheHint: result?.cacheHint ?? null };
    } catch (err) {
      next = { state: "error", items: [], error: describeError(err) };
    }
    if (gen !== this.#gen) return;
    this.lists[which] = next;
    this.#renderPanels();
    this.#ctx.changed(this);
  }

  /** @param {any} params a server/log notification */
  addLog(params) {
    this.#logSeq += 1;
    this.logs.push({ ...params, receivedAt: Date.now(), seq: this.#logSeq });
    if (this.logs.length > LOG_CAP) this.logs.splice(0, this.logs.length - LOG_CAP);
    this.#ctx.changed(this);
  }

  /** @param {TabName} tab */
  selectTab(tab, focus = false) {
    this.#tab = tab;
    for (const t of TABS) {
      const selected = t === tab;
      this.#tabButtons[t].setAttribute("aria-selected", String(selected));
      this.#tabButtons[t].tabIndex = selected ? 0 : -1;
      if (!this.#query) this.#panels[t].hidden = !selected;
    }
    if (focus) this.#tabButtons[tab].focus();
  }

  /** @param {KeyboardEvent} ev @param {TabName} tab */
  #tabKeys(ev, tab) {
    const visible = TABS.filter((t) => !this.#tabButtons[t].hidden);
    const i = visible.indexOf(tab);
    const next = ev.key === "ArrowRight" ? visible[(i + 1) % visible.length]
      : ev.key === "ArrowLeft" ? visible[(i - 1 + visible.length) % visible.length]
        : ev.key === "Home" ? visible[0] : ev.key === "End" ? visible[visible.length - 1] : null;
    if (next) {
      ev.preventDefault();
      this.selectTab(next, true);
    }
  }

  /** Mark the open item. @param {string | null} kind @param {string | null} key */
  setActive(kind, key) {
    this.#active = { kind, key };
    for (const el of this.el.querySelectorAll("[aria-current]")) el.removeAttribute("aria-current");
    if (!kind || key === null) return;
    const attr = { tool: "data-tool", resource: "data-resource", template: "data-template", prompt: "data-prompt" }[kind];
    if (!attr) return;
    for (const el of this.el.querySelectorAll(`[${attr}="${CSS.escape(key)}"]`)) el.setAttribute("aria-current", "true");
  }

  #renderPanels() {
    const caps = this.state.capabilities ?? {};
    const connected = this.state.status === "connected";
    const tools = this.lists.tools.items;
    const appTools = tools.filter((t) => t?.webhost?.resourceUri);
    const counts = {
      tools: this.lists.tools.state === "ok" ? tools.length : null,
      resources: this.lists.resources.state === "ok" ? this.lists.resources.items.length + this.lists.templates.items.length : null,
      prompts: this.lists.prompts.state === "ok" ? this.lists.prompts.items.length : null,
      apps: appTools.length || null,
    };
    const show = { tools: true, resources: !connected || Boolean(caps.resources), prompts: !connected || Boolean(caps.prompts), apps: appTools.length > 0 };
    for (const tab of TABS) {
      const b = this.#tabButtons[tab];
      b.hidden = !show[tab];
      replaceChildren(b, TAB_LABELS[tab], counts[tab] !== null ? h("span", { class: "count", text: String(counts[tab]) }) : null);
    }
    if (!show[this.#tab]) this.selectTab("tools");
    // Nothing to browse while disconnected: one "Not connected." line instead of empty tabs.
    this.#tablist.hidden = !connected;
    const notConnected = () => h("p", { class: "empty muted",
      text: this.state.status === "connecting" ? "Connecting…" : this.state.status === "needs-input" ? "Waiting for the values above." : this.state.status === "auth-required" ? "Sign in above to connect." : this.state.status === "error" ? "Not connected (see the error above)." : "Not connected." });
    replaceChildren(this.#panels.tools, connected ? this.#listView("tools", tools, (t) => this.#toolItem(t, "data-tool"), "No tools.") : notConnected());
    replaceChildren(this.#panels.apps, connected ? this.#listView("tools", appTools, (t) => this.#toolItem(t, "data-app-tool"), "No apps.") : notConnected());
    replaceChildren(this.#panels.prompts, connected ? this.#listView("prompts", this.lists.prompts.items, (p) => this.#item("prompt", p, String(p.name), String(p.title ?? p.name), p.description), "No prompts.") : notConnected());
    replaceChildren(this.#panels.resources, connected ? [
      this.#listView("resources", this.lists.resources.items, (r) => this.#item("resource", r, String(r.uri), String(r.title ?? r.name ?? r.uri), r.uri), "No resources."),
      this.lists.templates.items.length || this.lists.templates.state === "error" ? h("h3", { class: "list-heading", text: "Templates" }) : null,
      this.lists.templates.items.length || this.lists.templates.state === "error"
        ? this.#listView("templates", this.lists.templates.items, (t) => this.#item("template", t, String(t.uriTemplate), String(t.title ?? t.name ?? t.uriTemplate), t.uriTemplate), "") : null,
    ] : notConnected());
    this.setActive(this.#active.kind, this.#active.key);
    this.#applyFilter();
  }

  /**
   * @param {"tools" | "resources" | "templates" | "prompts"} which @param {any[]} items
   * @param {(item: any) => HTMLElement} render @param {string} emptyText
   */
  #listView(which, items, render, emptyText) {
    const list = this.lists[which];
    if (list.state === "loading" || list.state === "idle") return h("p", { class: "empty muted", text: "Loading…" });
    if (list.state === "error") {
      const retry = h("button", { type: "button", class: "small", text: "Retry" });
      retry.addEventListener("click", () => this.load(which));
      return h("div", { class: "inline-error" }, h("span", { text: `Could not list ${which}: ${list.error}` }), " ", retry);
    }
    if (!items.length) return emptyText ? h("p", { class: "empty muted", text: emptyText }) : h("span");
    return h("ul", { class: "item-list" }, items.map((it) => h("li", {}, render(it))));
  }

  /** @param {any} tool @param {string} attr */
  #toolItem(tool, attr) {
    const wh = tool.webhost ?? {};
    const b = this.#item("tool", tool, String(tool.name), String(tool.name), tool.description, attr);
    const badges = b.querySelector(".item-badges");
    if (wh.resourceUri) badges?.append(h("span", { class: "badge app", text: "App" }));
    if (wh.appOnly) badges?.append(h("span", { class: "badge app-only", text: "app-only" }));
    if (wh.appOnly) b.classList.add("app-only");
    return b;
  }

  /**
   * @param {"tool" | "resource" | "template" | "prompt"} kind @param {any} item @param {string} key
   * @param {string} label @param {unknown} sub @param {string} [attr]
   */
  #item(kind, item, key, label, sub, attr) {
    // A malformed item (the backend validated the list item by item): its error in place of its description.
    const invalid = typeof item?.webhost?.invalid === "string" ? item.webhost.invalid : null;
    // A tool the protocol makes clients drop (2026-07-28: an invalid x-mcp-header), listed with the reason.
    const dropped = invalid && typeof item?.webhost?.dropped === "string";
    const icon = iconFor(item?.icons, getTheme());
    const b = h("button", { type: "button", class: invalid ? "item item-invalid" : "item", title: invalid ?? label,
      "aria-disabled": invalid ? "true" : null },
      h("span", { class: "item-row" }, icon.el, h("span", { class: "item-name", text: label }), h("span", { class: "item-badges" },
        invalid ? h("span", { class: "badge invalid", text: dropped ? "dropped" : "invalid" }) : null)),
      invalid ? h("span", { class: "item-sub item-error", dataset: { itemError: "" },
        text: dropped ? `Dropped ${kind}: ${invalid.replace(/^dropped: /, "")}` : `Malformed ${kind}: ${invalid}` })
        : sub ? h("span", { class: "item-sub", text: String(sub).split("\n")[0] }) : null);
    b.setAttribute(attr ?? `data-${kind}`, key);
    if (invalid) b.dataset.invalid = "true";
    if (dropped) b.dataset.dropped = String(item.webhost.dropped);
    if (icon.el || icon.skipped) b.dataset.icon = icon.el ? "drawn" : "skipped";
    b.dataset.search = [key, label, item?.name, item?.title, item?.description].filter(Boolean).join("\n").toLowerCase();
    b.addEventListener("click", () => { if (!invalid) this.#ctx.open(kind, this.name, item); });
    return b;
  }
}

function idle() { return /** @type {ListState} */ ({ state: "idle", items: [] }); }

/** @param {string} s */
function cssId(s) { return s.replace(/[^\w-]/g, "_"); }
