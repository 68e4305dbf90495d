// @ts-check
// One message of a conversation: [data-chat-message] with data-role and data-status (contract §8). A
// person's message is its text (and, when an app sent it, data-from-app and the app's name); an
// answer is the model's text, as markdown drawn while it streams, and its tool calls as cards, in the
// order they came, with Retry when it failed and "What the model saw" once it is done. Contract §8.1: a
// person's message has Edit, an answer Regenerate (and a stopped one, data-status="stopped", says so); a
// message with other versions has [data-branch] (data-index/data-count) with branch-prev / branch-next.

import { h } from "../html.js";
import { StreamingMarkdown } from "./stream-markdown.js";
import { ToolCallCard } from "./tool-call-card.js";
import { sentAttachments } from "./composer-attachments.js";

/**
 * @typedef {object} MessageHost
 * @property {import("./tool-call-card.js").AppHost} apps
 * @property {(message: any) => void} retry
 * @property {(message: any) => void} showRequest
 * @property {(message: any) => void} edit its text back in the composer; sending makes a new version
 * @property {(message: any) => void} regenerate
 * @property {(message: any, index: number) => void} showVersion show version `index` (1-based) of the message
 */

export class MessageView {
  /** @type {any} */
  message;
  el;
  #body = h("div", { class: "chat-body" });
  #footer = h("div", { class: "chat-message-footer" });
  #error = h("p", { class: "chat-error", role: "alert", hidden: true });
  #stopped = h("p", { class: "chat-stopped muted", text: "Stopped: the answer ends here.", hidden: true });
  /** Edit or Regenerate, and the versions of the message. */
  #actions = h("div", { class: "chat-message-actions" });
  /** @type {{index: number, count: number} | null} */
  #branch = null;
  /** The markdown of the last text part (the one that grows), and the part it draws. */
  /** @type {{text: StreamingMarkdown, index: number} | null} */
  #growing = null;
  /** @type {Map<string, ToolCallCard>} */
  cards = new Map();
  #host;

  /** @param {any} message @param {MessageHost} host */
  constructor(message, host) {
    this.#host = host;
    this.message = message;
    const role = message.role === "assistant" ? "assistant" : "user";
    this.el = h("article", { class: `chat-message role-${role}`, dataset: { chatMessage: "", role, messageId: String(message.id) } });
    const prompt = message.fromPrompt;
    if (prompt?.server) {  // one of the messages of an MCP prompt run with `/` (composer-mcp.js)
      this.el.dataset.fromPrompt = String(prompt.server);
      this.el.append(h("p", { class: "chat-from-app" }, "From the prompt ", h("strong", { text: String(prompt.name ?? "") }),
        ` (${prompt.server})`));
    }
    if (role === "user") {
      const from = message.fromApp;
      if (from?.server) {
        this.el.dataset.fromApp = String(from.server);
        this.el.append(h("p", { class: "chat-from-app" }, "Sent by the app ", h("strong", { text: String(from.name ?? from.server) }),
          ` (${from.server})`));
      }
      this.el.append(sentAttachments(message.attachments), h("div", { class: "chat-user-text", text: String(message.text ?? "") }), this.#actions);
      this.el.dataset.status = "done";
      this.setBranch(message.branch ?? null);
      return;
    }
    this.el.append(this.#body, this.#stopped, this.#error, this.#footer, this.#actions);
    this.#branch = message.branch ?? null;
    this.update(message);
  }

  /** The message's versions (from a snapshot of the branch shown), or null for a message with one. @param {any} branch */
  setBranch(branch) {
    this.#branch = branch && Number(branch.count) > 1 ? { index: Number(branch.index), count: Number(branch.count) } : null;
    this.#drawActions();
  }

  #drawActions() {
    const role = this.el.dataset.role;
    const status = String(this.message.status ?? "done");
    /** @type {HTMLElement[]} */
    const items = [];
    if (this.#branch) {
      const { index, count } = this.#branch;
      const prev = h("button", { type: "button", class: "small ghost", text: "‹", "aria-label": "Previous version",
        disabled: index <= 1, dataset: { action: "branch-prev" } });
      const next = h("button", { type: "button", class: "small ghost", text: "›", "aria-label": "Next version",
        disabled: index >= count, dataset: { action: "branch-next" } });
      prev.addEventListener("click", () => this.#host.showVersion(this.message, index - 1));
      next.addEventListener("click", () => this.#host.showVersion(this.message, index + 1));
      items.push(h("span", { class: "chat-versions", role: "group", "aria-label": `Version ${index} of ${count}`,
        dataset: { branch: "", index: String(index), count: String(count) } },
      prev, h("span", { class: "muted", text: `${index} / ${count}` }), next));
    }
    if (role === "user") {
      const edit = h("button", { type: "button", class: "small ghost", text: "Edit", dataset: { action: "edit" } });
      edit.addEventListener("click", () => this.#host.edit(this.message));
      items.push(edit);
    } else if (status !== "streaming") {
      const again = h("button", { type: "button", class: "small ghost", text: "Regenerate", dataset: { action: "regenerate" } });
      again.addEventListener("click", () => this.#host.regenerate(this.message));
      items.push(again);
    }
    this.#actions.replaceChildren(...items);
  }

  /** The whole message as stored (a turn's start and end, a reload): parts drawn again only where they differ. @param {any} message */
  update(message) {
    this.message = message;
    if (message.role !== "assistant") return;
    const parts = Array.isArray(message.parts) ? message.parts : [];
    const children = [...this.#body.children];
    parts.forEach((/** @type {any} */ part, /** @type {number} */ index) => {
      if (part.type === "tool") this.#upsertCall(part.call, index);
      else this.#setText(String(part.text ?? ""), index, children[index]);
    });
    this.#setStatus(message);
  }

  /** Text the model is writing now. @param {string} delta */
  appendText(delta) {
    const parts = this.message.parts ?? (this.message.parts = []);
    const last = parts[parts.length - 1];
    if (last?.type === "text" && this.#growing?.index === parts.length - 1) {
      last.text += delta;
      this.#growing.text.append(delta);
      return;
    }
    parts.push({ type: "text", text: delta });
    const text = new StreamingMarkdown();
    text.append(delta);
    this.#growing = { text, index: parts.length - 1 };
    this.#body.append(text.el);
  }

  /** A tool call started or changed. @param {any} call */
  upsertCall(call) {
    const parts = this.message.parts ?? (this.message.parts = []);
    let index = parts.findIndex((/** @type {any} */ p) => p.type === "tool" && p.call?.id === call.id);
    if (index < 0) {
      parts.push({ type: "tool", call });
      index = parts.length - 1;
    } else {
      parts[index].call = call;
    }
    this.#upsertCall(call, index);
  }

  /** @param {string} callId @param {Record<string, unknown>} partial */
  partialArgs(callId, partial) {
    this.cards.get(callId)?.partial(partial);
  }

  /** @param {any} p */
  progress(p) {
    this.cards.get(String(p.callId))?.progress(p);
  }

  /** @param {any} call @param {number} index */
  #upsertCall(call, index) {
    const existing = this.cards.get(String(call.id));
    if (existing) {
      existing.update(call);
      return;
    }
    const card = new ToolCallCard(call, this.#host.apps);
    this.cards.set(String(call.id), card);
    const at = this.#body.children[index];
    if (at && !at.hasAttribute("data-chat-tool-call")) at.before(card.el);
    else this.#body.append(card.el);
    this.#growing = null;
  }

  /** @param {string} text @param {number} index @param {Element | undefined} at */
  #setText(text, index, at) {
    if (this.#growing?.index === index) {
      this.#growing.text.set(text);
      return;
    }
    if (at instanceof HTMLElement && at.dataset.markdown) return;  // drawn already, unchanged since
    const view = new StreamingMarkdown(text);
    if (at) at.before(view.el);
    else this.#body.append(view.el);
    this.#growing = { text: view, index };
  }

  /** @param {any} message */
  #setStatus(message) {
    const status = String(message.status ?? "done");
    this.el.dataset.status = status === "interrupted" ? "error" : status;
    this.el.setAttribute("aria-busy", String(status === "streaming"));
    this.#stopped.hidden = status !== "stopped" || Boolean(message.error);
    this.#drawActions();
    this.#error.hidden = !message.error;
    this.#error.textContent = message.error ?? "";
    this.#footer.replaceChildren();
    if (status === "streaming") return;
    if (message.retryable && (status === "error" || status === "interrupted")) {
      const retry = h("button", { type: "button", class: "small", text: "Retry", dataset: { action: "retry" } });
      retry.addEventListener("click", () => this.#host.retry(this.message));
      this.#footer.append(retry);
    }
    const show = h("button", { type: "button", class: "small ghost", text: "What the model saw", dataset: { action: "show-request" } });
    show.addEventListener("click", () => this.#host.showRequest(this.message));
    const usage = message.usage && (message.usage.input || message.usage.output)
      ? h("span", { class: "muted chat-usage", text: `${message.usage.input} in · ${message.usage.output} out` }) : null;
    this.#footer.append(show, h("span", { class: "spacer" }), usage ?? "");
  }
}
