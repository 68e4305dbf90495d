// @ts-check
// What the model may use in the open conversation (contract §8.1): [data-testid="chat-tools"], one
// input[type="checkbox"][data-server] per connected server and one [data-tool] (with data-tool-server) per tool
// the model may be offered. The backend keeps the choice with the conversation and offers only what is checked
// (webhost/chat/tool_choice.py); a new conversation starts from `chat.defaultServers`, and what the person picks
// before sending goes with its first message (`draft`).

import { h } from "../html.js";
import { describeError } from "../rpc.js";

/**
 * @typedef {{servers: string[] | null, toolsOff: {server: string, tool: string}[]}} Choice
 * @typedef {{name: string, checked: boolean, tools: {name: string, title: string | null, checked: boolean}[]}} PickerServer
 */

export class ToolPicker {
  el;
  #rpc;
  #conversation;
  #summary = h("summary", { text: "Tools" });
  #body = h("div", { class: "chat-tools-body" });
  /** The choice for a conversation not sent yet (null: the configured default). @type {Choice | null} */
  draft = null;
  /** The request for the latest load: an older answer arriving later is dropped. */
  #loads = 0;

  /**
   * @param {import("../rpc.js").RpcClient} rpc
   * @param {() => string | null} conversation the open conversation (null: a new one)
   */
  constructor(rpc, conversation) {
    this.#rpc = rpc;
    this.#conversation = conversation;
    this.el = h("details", { class: "chat-tools", dataset: { testid: "chat-tools" } }, this.#summary, this.#body);
    this.el.addEventListener("toggle", () => { if (this.el.open) void this.load(); });
    this.#body.addEventListener("change", () => { void this.#changed(); });
  }

  /** Fetch the servers, tools and choice of the open conversation (or a new one's default) and draw them. */
  async load() {
    const load = ++this.#loads;
    const conversationId = this.#conversation();
    try {
      const answer = await this.#rpc.request("chat/tools", conversationId ? { conversationId } : {});
      if (load !== this.#loads) return;
      this.#draw(Array.isArray(answer?.servers) ? answer.servers : [], conversationId === null ? this.draft : null);
    } catch (err) {
      if (load === this.#loads) this.#body.replaceChildren(h("p", { class: "inline-error", text: describeError(err) }));
    }
  }

  /** A new conversation: back to the configured default. */
  reset() {
    this.draft = null;
    this.el.open = false;
    this.#summary.textContent = "Tools";
  }

  /** @param {PickerServer[]} servers @param {Choice | null} draft */
  #draw(servers, draft) {
    if (!servers.length) {
      this.#body.replaceChildren(h("p", { class: "muted", text: "No server is connected: the model has no tools." }));
      this.#count();
      return;
    }
    const off = new Set((draft?.toolsOff ?? []).map((t) => `${t.server}\n${t.tool}`));
    this.#body.replaceChildren(...servers.map((server) => {
      const on = draft ? draft.servers === null || draft.servers.includes(server.name) : server.checked;
      const box = h("input", { type: "checkbox", checked: on, dataset: { server: server.name } });
      const tools = server.tools.map((tool) => {
        const checked = draft ? !off.has(`${server.name}\n${tool.name}`) : tool.checked;
        return h("label", { class: "check chat-tools-tool" },
          h("input", { type: "checkbox", checked, disabled: !on, dataset: { tool: tool.name, toolServer: server.name } }),
          h("span", { text: tool.title ? `${tool.title} (${tool.name})` : tool.name }));
      });
      return h("fieldset", { class: "chat-tools-server" },
        h("legend", {}, h("label", { class: "check" }, box, h("span", { text: server.name }))),
        tools.length ? tools : h("p", { class: "muted", text: "No tool the model may call." }));
    }));
    this.#count();
  }

  /** @returns {Choice} what the checkboxes say */
  #choice() {
    const boxes = (/** @type {string} */ selector) => /** @type {HTMLInputElement[]} */ ([...this.#body.querySelectorAll(selector)]);
    return {
      servers: boxes("input[data-server]").filter((b) => b.checked).map((b) => String(b.dataset.server)),
      toolsOff: boxes("input[data-tool]").filter((b) => !b.checked)
        .map((b) => ({ server: String(b.dataset.toolServer), tool: String(b.dataset.tool) })),
    };
  }

  #count() {
    const servers = /** @type {HTMLInputElement[]} */ ([...this.#body.querySelectorAll("input[data-server]")]);
    const on = servers.filter((b) => b.checked).map((b) => b.dataset.server);
    const tools = /** @type {HTMLInputElement[]} */ ([...this.#body.querySelectorAll("input[data-tool]")])
      .filter((b) => b.checked && on.includes(b.dataset.toolServer));
    for (const box of servers) {
      for (const tool of /** @type {NodeListOf<HTMLInputElement>} */ (box.closest("fieldset")?.querySelectorAll("input[data-tool]") ?? [])) {
        tool.disabled = !box.checked;
      }
    }
    this.#summary.textContent = `Tools (${tools.length})`;
  }

  async #changed() {
    this.#count();
    const choice = this.#choice();
    const conversationId = this.#conversation();
    if (conversationId === null) {
      this.draft = choice;
      return;
    }
    try {
      await this.#rpc.request("chat/tools/set", { conversationId, tools: choice });
    } catch (err) {
      this.#body.append(h("p", { class: "inline-error", role: "alert", text: describeError(err) }));
    }
  }
}
