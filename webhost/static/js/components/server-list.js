// @ts-check
// The sidebar: one ServerCard per configured server, kept in step with servers/list,
// servers/status, list/changed and server/log.

import { h, replaceChildren } from "../html.js";
import { describeError } from "../rpc.js";
import { ServerCard } from "./server-card.js";

export class ServerList {
  /** @type {Map<string, ServerCard>} */
  cards = new Map();
  #rpc;
  #cardCtx;
  #status = h("p", { class: "empty muted", text: "Loading servers…" });
  el = h("div", { class: "server-list" });

  /**
   * @param {import("../rpc.js").RpcClient} rpc
   * @param {{open: import("./server-card.js").CardContext["open"], changed: (card: ServerCard) => void,
   *   removed: (name: string) => void}} hooks
   */
  constructor(rpc, hooks) {
    this.#rpc = rpc;
    this.hooks = hooks;
    this.#cardCtx = { rpc, open: hooks.open, changed: hooks.changed };
    this.el.append(this.#status);
  }

  async refresh() {
    try {
      const result = await this.#rpc.request("servers/list", {});
      this.setServers(Array.isArray(result?.servers) ? result.servers : []);
    } catch (err) {
      const retry = h("button", { type: "button", class: "small", text: "Retry" });
      retry.addEventListener("click", () => this.refresh());
      replaceChildren(this.#status, `Could not list servers: ${describeError(err)} `, retry);
      this.#status.className = "inline-error";
      this.#status.hidden = false;
      if (!this.#status.isConnected) this.el.prepend(this.#status);
    }
  }

  /** @param {any[]} servers */
  setServers(servers) {
    const names = new Set(servers.map((s) => String(s.name)));
    for (const [name, card] of this.cards) {
      if (!names.has(name)) {
        card.el.remove();
        this.cards.delete(name);
        this.hooks.removed(name);
      }
    }
    for (const state of servers) {
      const existing = this.cards.get(String(state.name));
      if (existing) {
        // A new session: lists must be fetched again even if the status did not change.
        existing.state = { ...existing.state, status: "__stale" };
        existing.setState(state);
      } else {
        const card = new ServerCard(state, this.#cardCtx);
        this.cards.set(card.name, card);
      }
    }
    // Keep the configuration's order.
    replaceChildren(this.el, servers.map((s) => this.cards.get(String(s.name))?.el));
    if (!servers.length) {
      this.#status.className = "empty muted";
      this.#status.textContent = "No servers are configured. Add some to the mcpServers file and restart webhost.";
      this.el.append(this.#status);
    }
  }

  /** @param {any} state */
  updateStatus(state) {
    const card = this.cards.get(String(state?.name));
    if (card) card.setState(state);
    else this.refresh();
  }

  /** @param {{server: string, list: string}} p */
  listChanged(p) {
    const card = this.cards.get(String(p.server));
    if (!card || card.state.status !== "connected") return;
    if (p.list === "tools") card.load("tools", true);
    else if (p.list === "prompts") card.load("prompts");
    else if (p.list === "resources") { card.load("resources"); card.load("templates"); }
  }

  /** @param {any} p server/log params */
  log(p) {
    this.cards.get(String(p.server))?.addLog(p);
  }

  /** @param {string | null} server @param {string | null} kind @param {string | null} key */
  setActive(server, kind, key) {
    for (const card of this.cards.values()) {
      if (card.name === server) card.setActive(kind, key);
      else card.setActive(null, null);
    }
  }
}
