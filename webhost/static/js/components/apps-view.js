// @ts-check
// The Apps overview: every app tool (a tool whose webhost.resourceUri is set) of every connected
// server, with a button that opens it like clicking it in its server; and the app frames open now
// (apps.list(), kept current with onChange), each with Focus and Close.
//
// Its own selectors (never [data-server]/[data-tool], which stay the sidebar's):
//   [data-testid="apps-view"]
//   [data-apps-tool="TOOL"][data-apps-server="SERVER"]  button [data-apps-action="open"]
//   [data-apps-frame="FRAME_ID"][data-apps-server][data-frame-status]  buttons [data-apps-action="focus" | "close"]

import { h, replaceChildren } from "../html.js";

/**
 * @typedef {object} AppsViewContext
 * @property {import("../apps/index.js").Apps} apps
 * @property {() => import("./server-card.js").ServerCard[]} cards
 * @property {(server: string, tool: any) => void} openTool
 * @property {(app: any) => void} showApp bring an open app (an AppHandle) into view
 */

const STATUS_TEXT = /** @type {Record<string, string>} */ ({
  loading: "Loading…", ready: "Running", error: "Error", closing: "Closing…", closed: "Closed",
});

export class AppsView {
  #ctx;
  #tools = h("div", { class: "apps-section-body" });
  #frames = h("div", { class: "apps-section-body" });
  /** @type {(() => void) | null} */
  #unsubscribe = null;
  #toolsKey = "";
  el;

  /** @param {AppsViewContext} ctx */
  constructor(ctx) {
    this.#ctx = ctx;
    this.el = h("article", { class: "view apps-view", dataset: { testid: "apps-view" } },
      h("header", { class: "view-head" },
        h("h2", { class: "view-title", text: "Apps" }),
        h("p", { class: "view-sub muted", text: "The MCP Apps of every connected server, and the app frames open now." })),
      h("section", { class: "apps-section", "aria-labelledby": "apps-open-heading" },
        h("h3", { id: "apps-open-heading", text: "Open now" }), this.#frames),
      h("section", { class: "apps-section", "aria-labelledby": "apps-tools-heading" },
        h("h3", { id: "apps-tools-heading", text: "App tools" }), this.#tools));
    this.#unsubscribe = ctx.apps.onChange(() => this.#renderFrames());
    this.refresh();
  }

  /** The servers or their tool lists changed. */
  refresh() {
    this.#renderTools();
    this.#renderFrames();
  }

  dispose() {
    this.#unsubscribe?.();
    this.#unsubscribe = null;
  }

  #renderTools() {
    // Cards report every change (server log lines too): re-render only when the app tools changed.
    const cards = this.#ctx.cards().filter((c) => c.state.status === "connected");
    const key = JSON.stringify(cards.map((c) => [c.name, c.lists.tools.state, c.lists.tools.error ?? null,
      c.lists.tools.items.filter((t) => t?.webhost?.resourceUri)]));
    if (key === this.#toolsKey) return;
    this.#toolsKey = key;
    const rows = [];
    const notes = [];
    for (const card of cards) {
      const list = card.lists.tools;
      if (list.state === "loading" || list.state === "idle") notes.push(`Loading the tools of ${card.name}…`);
      else if (list.state === "error") notes.push(`Could not list the tools of ${card.name}: ${list.error ?? "error"}`);
      for (const tool of list.items) {
        if (tool?.webhost?.resourceUri) rows.push(this.#toolRow(card.name, tool));
      }
    }
    replaceChildren(this.#tools,
      rows.length
        ? h("table", { class: "apps-table" },
          h("thead", {}, h("tr", {}, ["Tool", "Server", "Resource", ""].map((t) => h("th", { scope: "col", text: t })))),
          h("tbody", {}, rows))
        : h("p", { class: "empty muted", text: "No connected server offers an app." }),
      notes.map((n) => h("p", { class: "muted apps-note", text: n })));
  }

  /** @param {string} server @param {any} tool */
  #toolRow(server, tool) {
    const wh = tool.webhost ?? {};
    const name = String(tool.name ?? "");
    const title = String(tool.title ?? tool.annotations?.title ?? name);
    const open = h("button", { type: "button", class: "small", text: "Open", title: `Open ${name} on ${server}`,
      dataset: { appsAction: "open" } });
    open.addEventListener("click", () => this.#ctx.openTool(server, tool));
    return h("tr", { dataset: { appsTool: name, appsServer: server } },
      h("td", {},
        h("span", { class: "apps-tool-name", text: title }),
        title !== name ? h("code", { class: "muted apps-tool-id", text: name }) : null,
        wh.appOnly ? h("span", { class: "badge app-only", text: "app-only", title: "Only its app can call this tool" }) : null,
        tool.description ? h("span", { class: "apps-sub muted", text: String(tool.description).split("\n")[0] }) : null),
      h("td", { text: server }),
      h("td", {}, h("code", { class: "uri", text: String(wh.resourceUri) })),
      h("td", { class: "apps-open-cell" }, open));
  }

  #renderFrames() {
    const open = this.#ctx.apps.list();
    if (!open.length) {
      replaceChildren(this.#frames, h("p", { class: "empty muted", text: "No app is open. Call an app tool to open one." }));
      return;
    }
    replaceChildren(this.#frames, h("ul", { class: "apps-frames" }, open.map((app) => this.#frameRow(app))));
  }

  /** @param {any} app an AppHandle */
  #frameRow(app) {
    const status = String(app.status ?? "");
    const focus = h("button", { type: "button", class: "small", text: "Focus", dataset: { appsAction: "focus" } });
    focus.addEventListener("click", () => this.#ctx.showApp(app));
    const close = h("button", { type: "button", class: "small ghost", text: "Close", dataset: { appsAction: "close" },
      disabled: status === "closing" });
    close.addEventListener("click", () => {
      close.disabled = true;
      void Promise.resolve(app.close("closed from the Apps view")).finally(() => this.#renderFrames());
    });
    const pill = status === "ready" ? "ok" : status === "error" ? "error" : status === "loading" ? "pending" : "";
    return h("li", { class: "apps-frame",
      dataset: { appsFrame: String(app.frameId ?? ""), appsServer: String(app.server ?? ""), frameStatus: status } },
    h("span", { class: `status-pill ${pill}`, text: STATUS_TEXT[status] ?? status, title: String(app.statusMessage ?? "") }),
    h("span", { class: "apps-frame-main" },
      h("span", {}, h("strong", { text: String(app.server ?? "") }), " · ",
        app.purpose === "elicitation" ? "input request" : h("span", { text: String(app.tool ?? "tool") }),
        app.displayMode && app.displayMode !== "inline" ? h("span", { class: "muted", text: ` · ${app.displayMode}` }) : null),
      h("code", { class: "uri", text: String(app.resourceUri ?? "") })),
    h("span", { class: "apps-actions" }, focus, close));
  }
}
