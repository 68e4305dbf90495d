// @ts-check
// One message of a conversation: [data-chat-message] with data-role and data-status (contract §8). A
// person's message is its text (and, when an app sent it, data-from-app and the app's name); an
// answer is the model's text, as markdown drawn while it streams, and its tool calls as cards, in the
// order they came, with Retry when it failed and "What the model saw" once it is done.

import { h } from "../html.js";
import { StreamingMarkdown } from "./stream-markdown.js";
import { ToolCallCard } from "./tool-call-card.js";

/**
 * @typedef {object} MessageHost
 * @property {import("./tool-call-card.js").AppHost} apps
 * @property {(message: any) => void} retry
 * @property {(message: any) => void} showRequest
 */

export class MessageView {
  /** @type {any} */
  message;
  el;
  #body = h("div", { class: "chat-body" });
  #footer = h("div", { class: "chat-message-footer" });
  #error = h("p", { class: "chat-error", role: "alert", hidden: true });
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
    if (role === "user") {
      const from = message.fromApp;
      if (from?.server) {
        this.el.dataset.fromApp = String(from.server);
        this.el.append(h("p", { class: "chat-from-app" }, "Sent by the app ", h("strong", { text: String(from.name ?? from.server) }),
          ` (${from.server})`));
      }
      this.el.append(h("div", { class: "chat-user-text", text: String(message.text ?? "") }));
      this.el.dataset.status = "done";
      return;
    }
    this.el.append(this.#body, this.#error, this.#footer);
    this.update(message);
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
