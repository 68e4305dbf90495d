// @ts-check
// One tool call the model made, as a card in its answer: [data-chat-tool-call] with the tool's server and
// name (the MCP tool, not the name the model saw), its status, the arguments, the result, and the tool's
// MCP App when it has one. The app opens at the call (contract §8): as soon as the model names the tool
// when the call is allowed without asking, so it receives the arguments while they stream
// (tool-input-partial); after the person's approval otherwise; and again from the stored call when a
// conversation is reopened, without calling the tool again.

import { h, prettyJson } from "../html.js";
import { contentBlock } from "../components/content-view.js";
import { matchParking } from "../park.js";

/** Statuses the contract names; "streaming" (arguments still being written) shows as running. */
const SHOWN_STATUS = /** @type {Record<string, string>} */ ({
  streaming: "running", approval: "approval", running: "running", ok: "ok", error: "error", denied: "denied",
});
const LABEL = /** @type {Record<string, string>} */ ({
  streaming: "writing the arguments…", approval: "waiting for your approval", running: "running…",
  ok: "done", error: "failed", denied: "denied",
});

/**
 * @typedef {object} AppHost what a card needs to show the tool's app
 * @property {(p: {server: string, tool: string, resourceUri: string, callId: string, container: HTMLElement,
 *   args?: Record<string, unknown> | null}) => Promise<import("../apps/index.js").ChatAppHandle | null>} open
 * @property {(server: string, uri: string) => Promise<any>} readResource a resource link in a result
 */

export class ToolCallCard {
  /** @type {any} */
  call;
  el;
  /** Where requests about this call (approval, input requests) are shown: the inbox places them here. */
  slot = h("div", { class: "chat-tool-slot" });
  #status = h("span", { class: "chat-tool-status" });
  #args = h("pre", { class: "text-content json chat-tool-args" });
  #argsBox = h("details", { class: "chat-tool-section" }, h("summary", { text: "Arguments" }), this.#args);
  #appBox = h("div", { class: "chat-tool-app" });
  #result = h("div", { class: "chat-tool-result" });
  #resultBox = h("details", { class: "chat-tool-section", hidden: true }, h("summary", { text: "Result" }), this.#result);
  #progress = h("p", { class: "chat-tool-progress muted", hidden: true });
  #error = h("p", { class: "chat-tool-error", hidden: true });
  /** @type {AppHost} */
  #apps;
  /** @type {Promise<import("../apps/index.js").ChatAppHandle | null> | null} */
  #app = null;
  #inputSent = false;
  #outcomeSent = false;

  /** @param {any} call @param {AppHost} apps */
  constructor(call, apps) {
    this.#apps = apps;
    this.call = call;
    const name = call.tool ?? call.modelName;
    this.el = h("div", { class: "chat-tool", dataset: { chatToolCall: "", callId: String(call.id) } },
      h("div", { class: "chat-tool-head" },
        h("span", { class: "chat-tool-dot", "aria-hidden": "true" }),
        h("strong", { class: "chat-tool-name", text: String(name) }),
        call.server ? h("span", { class: "muted", text: `on ${call.server}` }) : null,
        h("span", { class: "spacer" }), this.#status),
      this.slot, this.#appBox, this.#progress, this.#argsBox, this.#resultBox, this.#error);
    if (call.server) this.el.dataset.server = String(call.server);
    this.el.dataset.tool = String(name);
    this.update(call);
  }

  /** The call changed (a status, its arguments, its result). @param {any} call */
  update(call) {
    this.call = call;
    const status = String(call.status ?? "running");
    this.el.dataset.status = SHOWN_STATUS[status] ?? "running";
    this.#status.textContent = LABEL[status] ?? status;
    if (call.arguments && typeof call.arguments === "object") this.#args.textContent = prettyJson(call.arguments);
    else this.#args.textContent = String(call.argumentsText ?? "");
    this.#argsBox.open = status === "approval";
    if (status !== "running" && status !== "streaming") this.#progress.hidden = true;
    if (call.result) {
      this.#resultBox.hidden = false;
      const ctx = { server: String(call.server ?? ""), readResource: this.#apps.readResource };
      const blocks = Array.isArray(call.result.content) ? call.result.content : [];
      this.#result.replaceChildren(...blocks.map((/** @type {any} */ b) => contentBlock(b, ctx)));
      this.#result.classList.toggle("is-error", call.result.isError === true);
    }
    this.#error.hidden = !call.error || status === "ok";
    this.#error.textContent = call.error ?? "";
    this.#syncApp();
    matchParking(this.el);  // the chat may be parked (the person is elsewhere): what it adds stays unnamed
  }

  /** The model is still writing the arguments: the healed object so far, for the app. @param {Record<string, unknown>} partial */
  partial(partial) {
    this.#args.textContent = prettyJson(partial);
    void this.#syncApp()?.then((app) => { if (!this.#inputSent) app?.partialInput(partial); });
  }

  /** @param {{progress: number, total?: number | null, message?: string | null}} p */
  progress(p) {
    const total = typeof p.total === "number" && p.total > 0 ? ` of ${p.total}` : "";
    this.#progress.hidden = false;
    this.#progress.textContent = `${p.message ? `${p.message} ` : ""}(${p.progress}${total})`;
  }

  /** Open the app when the call may show it, and tell it what it may know now. */
  #syncApp() {
    const call = this.call;
    const status = String(call.status);
    if (!call.resourceUri || !call.server || !call.tool || status === "approval" || status === "denied") return this.#app;
    // The arguments are whole once the model finished writing them; a call stopped (or failed) while they were
    // being written has none, and its app is told it was cancelled, never given an empty input.
    const whole = status !== "streaming" && call.arguments !== null && typeof call.arguments === "object";
    if (!this.#app) {
      this.#app = this.#apps.open({
        server: call.server, tool: call.tool, resourceUri: call.resourceUri, callId: call.id, container: this.#appBox,
        args: whole ? call.arguments : null,
      });
      if (whole) this.#inputSent = true;
      // Opened from a snapshot while the model writes (a page that opened the conversation meanwhile).
      const partial = call.partial;
      if (status === "streaming" && partial && typeof partial === "object") {
        void this.#app.then((app) => { if (!this.#inputSent) app?.partialInput(partial); });
      }
    }
    void this.#app.then((app) => {
      if (!app) return;
      if (!this.#inputSent && whole) {
        this.#inputSent = true;
        app.toolInput(call.arguments);
      }
      if (this.#outcomeSent) return;
      if ((status === "ok" || status === "error") && call.result) {
        this.#outcomeSent = true;
        app.toolResult(call.result);
      } else if (status === "error") {
        this.#outcomeSent = true;
        app.toolCancelled(String(call.error ?? "the call failed"));
      }
    });
    return this.#app;
  }
}
