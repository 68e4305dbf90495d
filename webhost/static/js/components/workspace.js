// @ts-check
// The main area: shows one open item (tool, resource, template, prompt, server details).
// Tool views are cached per tool so their form values and last result survive switching.

import { h, replaceChildren } from "../html.js";
import { ToolView } from "./tool-view.js";
import { resourceView, templateView } from "./resource-view.js";
import { promptView } from "./prompt-view.js";
import { ServerDetails } from "./server-details.js";

/**
 * @typedef {object} WorkspaceContext
 * @property {import("../rpc.js").RpcClient} rpc
 * @property {Map<string, import("./call-result.js").CallResult>} calls
 * @property {(name: string) => import("./server-card.js").ServerCard | undefined} card
 * @property {(server: string | null, kind: string | null, key: string | null) => void} onActive
 */

export class Workspace {
  #ctx;
  /** @type {Map<string, ToolView>} */
  #tools = new Map();
  /** @type {{kind: string, server: string, key: string, view?: any} | null} */
  #open = null;
  el = h("div", { class: "workspace-inner" });

  /** @param {WorkspaceContext} ctx */
  constructor(ctx) {
    this.#ctx = ctx;
    this.readResource = (/** @type {string} */ server, /** @type {string} */ uri) =>
      ctx.rpc.request("resources/read", { server, uri });
    this.showWelcome();
  }

  showWelcome() {
    this.#open = null;
    this.#ctx.onActive(null, null, null);
    replaceChildren(this.el, h("div", { class: "welcome" },
      h("h2", { text: "Welcome to webhost" }),
      h("p", { class: "muted", text: "Pick a tool, resource or prompt from a server on the left. Calls, server requests and everything on the wire show up in the activity log below." })));
  }

  /**
   * @param {"tool" | "resource" | "template" | "prompt" | "server"} kind
   * @param {string} server @param {any} [item]
   */
  open(kind, server, item) {
    const ctx = this.#ctx;
    /** @type {HTMLElement} */
    let el;
    let key = "";
    let view = null;
    if (kind === "tool") {
      key = String(item.name);
      const id = `${server}\n${key}`;
      let tv = this.#tools.get(id);
      if (tv) tv.update(item);
      else {
        tv = new ToolView(server, item, { rpc: ctx.rpc, calls: ctx.calls, readResource: this.readResource });
        this.#tools.set(id, tv);
      }
      el = tv.el;
      view = tv;
    } else if (kind === "resource") {
      key = String(item.uri);
      view = resourceView(server, item, this.readResource);
      el = view.el;
    } else if (kind === "template") {
      key = String(item.uriTemplate);
      el = templateView(server, item, this.readResource);
    } else if (kind === "prompt") {
      key = String(item.name);
      el = promptView(server, item, { rpc: ctx.rpc, readResource: this.readResource });
    } else {
      const card = ctx.card(server);
      if (!card) return;
      view = new ServerDetails(card);
      el = view.el;
    }
    this.#open = { kind, server, key, view };
    replaceChildren(this.el, el);
    ctx.onActive(server, kind, key);
    this.el.parentElement?.scrollTo({ top: 0 });
    // Stacked layout: the sidebar sits above the workspace, so bring the opened item into view.
    if (matchMedia("(max-width: 900px)").matches) this.el.scrollIntoView({ block: "start" });
    const heading = /** @type {HTMLElement | null} */ (el.querySelector("h2"));
    if (heading) {
      heading.tabIndex = -1;
      heading.focus({ preventScroll: true });
    }
  }

  /** A server's state or lists changed. @param {import("./server-card.js").ServerCard} card */
  cardChanged(card) {
    const open = this.#open;
    if (!open || open.server !== card.name) return;
    if (open.kind === "server") open.view.refresh();
    if (open.kind === "tool") {
      const tool = card.lists.tools.items.find((t) => t?.name === open.key);
      if (tool) open.view.update(tool);
    }
  }

  /** @param {{server: string, uri: string}} p */
  resourceUpdated(p) {
    const open = this.#open;
    if (open?.kind === "resource" && open.server === p.server && open.key === p.uri) open.view.reload();
  }

  /** @param {string} server */
  forgetServer(server) {
    for (const id of [...this.#tools.keys()]) if (id.startsWith(`${server}\n`)) this.#tools.delete(id);
    if (this.#open?.server === server) this.showWelcome();
  }
}
