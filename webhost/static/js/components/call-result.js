// @ts-check
// The result area of one tool call: pending (progress, elapsed time, Cancel), then the
// CallToolResult or the JSON-RPC error. data-status is what automation waits on.

import { h, replaceChildren, prettyJson } from "../html.js";
import { RpcError, describeError } from "../rpc.js";
import { contentBlock, jsonDetails } from "./content-view.js";
import { ERRORS } from "../constants.js";
import { copyButton, resultText } from "./copy.js";
import { matchParking } from "../park.js";

/**
 * @typedef {object} CallResultOptions
 * @property {string} callId
 * @property {() => Promise<unknown>} onCancel
 * @property {boolean} withAppSlot reserve a container for the tool's MCP App
 * @property {import("./content-view.js").ContentContext} ctx
 * @property {{method: string, params: Record<string, unknown>}} [request] what was sent (Copy request)
 * @property {number} [startedAt] when the call started (epoch seconds), for one this page did not start
 */

export class CallResult {
  #started = performance.now();
  /** @type {ReturnType<typeof setInterval> | null} */
  #timer = null;
  #opts;
  #status = h("span", { class: "status-pill pending", text: "Running…" });
  #elapsed = h("span", { class: "elapsed muted", "aria-live": "off" });
  #cancel = h("button", { type: "button", class: "small danger-outline", text: "Cancel", dataset: { action: "cancel-call" } });
  #progressBar = h("progress", { class: "call-progress", dataset: { testid: "call-progress" } });
  #progressText = h("span", { class: "progress-text muted" });
  #progressRow = h("div", { class: "progress-row" }, this.#progressBar, this.#progressText);
  #body = h("div", { class: "result-body", "aria-live": "polite" });
  #copies = h("span", { class: "copy-actions" });
  /** The element the MCP Apps bridge renders the tool's app into. */
  appSlot = h("div", { class: "app-slot" });
  el;

  /** @param {CallResultOptions} opts */
  constructor(opts) {
    this.#opts = opts;
    if (typeof opts.startedAt === "number") this.#started = performance.now() - Math.max(0, Date.now() - opts.startedAt * 1000);
    this.el = h("section", { class: "tool-result", "aria-label": "Tool result",
      dataset: { testid: "tool-result", status: "pending", callId: opts.callId } },
    h("div", { class: "result-head" }, this.#status, this.#elapsed, h("span", { class: "spacer" }), this.#copies, this.#cancel),
    this.#progressRow,
    opts.withAppSlot ? this.appSlot : null,
    this.#body);
    this.#cancel.addEventListener("click", () => this.#doCancel());
    if (opts.request) {
      const request = opts.request;
      this.#copies.append(copyButton("Copy request", "copy-request", () => prettyJson(request)));
    }
    this.#timer = setInterval(() => this.#tick(), 200);
    this.#tick();
  }

  async #doCancel() {
    this.#cancel.disabled = true;
    this.#cancel.textContent = "Cancelling…";
    try {
      const r = /** @type {any} */ (await this.#opts.onCancel());
      if (r && r.cancelled === false && this.el.dataset.status === "pending") {
        this.#cancel.textContent = "Cancel";
        this.#cancel.disabled = false;
        this.#progressText.textContent = "The call could not be cancelled.";
      }
    } catch (err) {
      this.#cancel.disabled = false;
      this.#cancel.textContent = "Cancel";
      this.#progressText.textContent = `Cancel failed: ${describeError(err)}`;
    }
  }

  #tick() {
    const ms = performance.now() - this.#started;
    this.#elapsed.textContent = ms < 1000 && !this.pending ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
  }

  #finish() {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    this.#cancel.remove();
    this.#progressRow.remove();
  }

  get pending() { return this.el.dataset.status === "pending"; }

  /** @param {{progress: number, total?: number, message?: string}} p */
  progress(p) {
    if (!this.pending) return;
    this.#progressRow.classList.add("active");
    if (typeof p.total === "number" && p.total > 0) {
      this.#progressBar.max = p.total;
      this.#progressBar.value = Math.min(Number(p.progress) || 0, p.total);
    } else {
      this.#progressBar.removeAttribute("value");
    }
    const pct = typeof p.total === "number" && p.total > 0 ? ` (${Math.round((p.progress / p.total) * 100)}%)` : "";
    const count = typeof p.total === "number" ? `${p.progress}/${p.total}` : String(p.progress);
    this.#progressText.textContent = `${p.message ? `${p.message} · ` : ""}${count}${pct}`;
  }

  /** A line above the result saying where it came from. @param {string} text */
  note(text) {
    this.#progressRow.after(h("p", { class: "notice result-note", text }));
  }

  /** @param {any} result a CallToolResult */
  ok(result) {
    if (!this.pending) return;
    this.#finish();
    const isError = result?.isError === true;
    this.el.dataset.status = isError ? "error" : "ok";
    this.#copies.prepend(copyButton("Copy text", "copy-text", () => resultText(result)),
      copyButton("Copy JSON", "copy-json", () => prettyJson(result)));
    this.#tick();
    this.#status.className = `status-pill ${isError ? "error" : "ok"}`;
    this.#status.textContent = isError ? "Tool error" : "Done";
    const blocks = Array.isArray(result?.content) ? result.content : [];
    const parts = blocks.map((/** @type {any} */ b) => contentBlock(b, this.#opts.ctx));
    if (!blocks.length && result?.structuredContent === undefined) {
      parts.push(h("p", { class: "muted", text: "The tool returned no content." }));
    }
    if (result?.structuredContent !== undefined) {
      const structured = jsonDetails(result.structuredContent, "Structured content", true);
      structured.dataset.testid = "structured-content";
      parts.push(structured);
    }
    // The structured content breaks the tool's outputSchema: shown anyway, with the validator's message.
    const schemaError = result?.webhost?.outputSchemaError;
    if (typeof schemaError === "string") {
      this.el.dataset.outputSchemaError = "true";
      parts.unshift(h("p", { class: "inline-error", role: "status", dataset: { testid: "output-schema-error" },
        text: `Does not match the tool's output schema: ${schemaError}` }));
    }
    if (result?._meta) parts.push(jsonDetails(result._meta, "_meta", false));
    this.#body.classList.toggle("is-error", isError);
    this.#body.replaceChildren(...parts);
    matchParking(this.el); // a call can end while its tool view is parked
  }

  /** @param {unknown} err */
  error(err) {
    if (!this.pending) return;
    this.#finish();
    this.el.dataset.status = "error";
    this.#tick();
    const code = err instanceof RpcError ? err.code : null;
    const cancelled = code === ERRORS.CANCELLED;
    this.#status.className = `status-pill ${cancelled ? "cancelled" : "error"}`;
    this.#status.textContent = cancelled ? "Cancelled" : "Failed";
    const data = err instanceof RpcError ? /** @type {any} */ (err.data) : null;
    this.#copies.prepend(copyButton("Copy JSON", "copy-json", () => prettyJson({ code, message: describeError(err), data })));
    const upstream = data && typeof data === "object" && "upstreamCode" in data ? ` (server code ${data.upstreamCode})` : "";
    if (cancelled) this.el.dataset.cancelled = "true"; // asked for: shown calm, not as a failure (results.css)
    this.#body.classList.toggle("is-error", !cancelled);
    replaceChildren(this.#body,
      h("p", { class: "error-message" },
        code !== null ? h("code", { class: "error-code", text: String(code) }) : null,
        " ", `${describeError(err)}${upstream}`),
      data !== null && data !== undefined ? jsonDetails(data, "error data", false) : null);
    matchParking(this.el);
  }
}
