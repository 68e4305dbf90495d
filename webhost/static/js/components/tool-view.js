// @ts-check
// The open tool: its description, the argument form, and the result of its last call.
// Instances are kept per tool by the workspace, so switching tools keeps values and results
// (and the tool's MCP App keeps running: see workspace.js).

import { h, prettyJson } from "../html.js";
import { describeError, RpcError } from "../rpc.js";
import { isParked, matchParking, releaseThenRemove } from "../park.js";
import { createArgsForm } from "./args-form.js";
import { CallResult } from "./call-result.js";
import { jsonDetails } from "./content-view.js";
import { metaEditor } from "./meta-editor.js";

let callCounter = 0;
const newCallId = () => `c-${Date.now().toString(36)}-${++callCounter}`;

/**
 * @typedef {object} ToolContext
 * @property {import("../rpc.js").RpcClient} rpc
 * @property {import("../apps/index.js").Apps} apps
 * @property {(callId: string) => void} onCallDone the call ended (whatever its outcome)
 * @property {Map<string, CallResult>} calls running calls by callId, for progress routing
 * @property {(server: string, uri: string) => Promise<any>} readResource
 * @property {() => void} [close] close the view for good (its app included)
 */

export class ToolView {
  #server;
  /** @type {any} */
  #tool;
  #ctx;
  #toolJson = "";
  #formSlot = h("div", { class: "form-slot" });
  #resultSlot = h("div", { class: "result-slot" },
    h("p", { class: "result-placeholder muted", text: "Call the tool to see its result here." }));
  #headSlot = h("div", { class: "view-head-slot" });
  /** @type {ReturnType<typeof createArgsForm> | null} */
  #form = null;
  /** @type {CallResult | null} */
  #current = null;
  /** Results this tab did not start itself, by callId (their ending finds them). @type {Map<string, CallResult>} */
  #shown = new Map();
  #meta = metaEditor("tools/call");
  #asTask = h("input", { type: "checkbox", name: "asTask", dataset: { testid: "as-task" } });
  el = h("article", { class: "view tool-view" });

  /** @param {string} server @param {any} tool @param {ToolContext} ctx */
  constructor(server, tool, ctx) {
    this.#server = server;
    this.#ctx = ctx;
    // Which tool this view shows, for automation (not [data-server]/[data-tool]: those are the sidebar's).
    this.el.dataset.openServer = server;
    this.el.dataset.openTool = String(tool?.name ?? "");
    this.el.append(this.#headSlot, this.#formSlot, this.#resultSlot);
    this.update(tool);
  }

  /** Show these arguments in the form (History's Edit). @param {Record<string, unknown>} args */
  edit(args) { this.#form?.setValues(args); }

  /** Show these arguments and call the tool with exactly them (History's Replay). @param {Record<string, unknown>} args */
  run(args) {
    this.#form?.setValues(args);
    void this.#call(args);
  }

  /** The arguments the form would send now (null while it is invalid): kept across a reload. */
  values() { return this.#form?.values() ?? null; }

  /** The tool's definition (the MCP Tool plus its webhost key). */
  get tool() { return this.#tool; }

  /** Re-render if the tool's definition changed (list/changed). @param {any} tool */
  update(tool) {
    const json = prettyJson(tool);
    if (json === this.#toolJson) return;
    this.#toolJson = json;
    this.#tool = tool;
    this.#headSlot.replaceChildren(this.#head());
    this.#formSlot.replaceChildren(this.#body());
    matchParking(this.#formSlot);
  }

  #head() {
    const t = this.#tool;
    const wh = t.webhost ?? {};
    const ann = t.annotations ?? {};
    const title = String(t.title ?? ann.title ?? t.name);
    const close = this.#ctx.close ? h("button", { type: "button", class: "small ghost view-close", text: "Close",
      title: "Close this tool (its app is closed too)", dataset: { viewAction: "close" } }) : null;
    close?.addEventListener("click", () => this.#ctx.close?.());
    const badges = [
      wh.resourceUri ? h("span", { class: "badge app", text: "App", title: String(wh.resourceUri) }) : null,
      wh.appOnly ? h("span", { class: "badge app-only", text: "app-only" }) : null,
      ann.readOnlyHint ? h("span", { class: "badge", text: "read-only" }) : null,
      ann.destructiveHint ? h("span", { class: "badge danger", text: "destructive" }) : null,
      ann.idempotentHint ? h("span", { class: "badge", text: "idempotent" }) : null,
      ann.openWorldHint ? h("span", { class: "badge", text: "open world" }) : null,
    ];
    return h("header", { class: "view-head" },
      h("div", { class: "view-title-row" },
        h("h2", { class: "view-title", text: title }),
        title !== t.name ? h("code", { class: "muted", text: String(t.name) }) : null,
        ...badges, h("span", { class: "spacer" }), close),
      h("p", { class: "view-sub muted" }, "Tool on ", h("strong", { text: this.#server })),
      t.description ? h("p", { class: "description", text: String(t.description) }) : null);
  }

  #body() {
    const t = this.#tool;
    const schemas = h("div", { class: "schema-details" },
      jsonDetails(t.inputSchema ?? {}, "Input schema", false),
      t.outputSchema ? jsonDetails(t.outputSchema, "Output schema", false) : null,
      t._meta ? jsonDetails(t._meta, "_meta", false) : null);
    if (t.webhost?.appOnly) {
      this.#form = null;
      return h("div", {},
        h("p", { class: "notice", text: "This tool is app-only: only its MCP App can call it, so there is no form here." }),
        schemas);
    }
    if (t.webhost?.resourceUri) this.#ctx.apps.warm(this.#server, String(t.name)); // apps/open will find it read
    this.#form = createArgsForm(t.inputSchema, {
      submitLabel: "Call tool",
      submitAttrs: { "data-testid": "call-tool" },
      emptyText: "This tool takes no arguments.",
      onSubmit: (args) => { this.#call(args); },
    });
    if (this.#current?.pending) this.#form.setBusy(true);
    // 2025-11-25 task support: "required" runs as a task anyway; "optional" lets the person choose. (A
    // 2026-07-28 server decides per call.) A task is followed in Tasks and this call answers with its end.
    const support = t.execution?.taskSupport;
    const taskNote = support === "required"
      ? h("p", { class: "muted small", dataset: { testid: "task-note" }, text: "This tool runs as a task: follow it in Tasks; its result shows here when it ends." })
      : support === "optional"
        ? h("label", { class: "muted small task-choice" }, this.#asTask, " Run as a task (follow it in Tasks)")
        : null;
    return h("div", {}, this.#form.el, taskNote, this.#meta.el, schemas);
  }

  /**
   * A call of this tool still running that this tab did not start (`calls/running`, `calls/left`: the tab that
   * started it went away, as a reload does): shown as the tool's latest result, pending, with its progress and
   * a Cancel that reaches it; its ending comes as `calls/outcome` (`showOutcome`).
   * @param {any} c {callId, tab, server, name, arguments, startedAt, progress?}
   */
  showRunning(c) {
    const callId = String(c.callId ?? "");
    if (!callId || this.#resultOf(callId)) return;
    const { rpc, calls } = this.#ctx;
    const result = new CallResult({
      callId,
      onCancel: () => rpc.request("tools/cancel", { callId, tab: String(c.tab ?? "") }),
      withAppSlot: false,
      request: { method: "tools/call", params: { server: this.#server, name: this.#tool.name, arguments: c.arguments ?? {} } },
      startedAt: typeof c.startedAt === "number" ? c.startedAt : undefined,
      ctx: { server: this.#server, readResource: this.#ctx.readResource },
    });
    result.el.dataset.reattached = "true";
    result.note("Started before this page was loaded, and still running.");
    this.#showResult(result, "replaced by a call still running");
    calls.set(callId, result);
    if (c.progress) result.progress(c.progress);
  }

  /**
   * The ending of a call this tab did not run itself (`calls/outcome`): one started before a reload
   * (`reattached`: its pending result gets it), or one another webhost process ran (`resumed` or
   * `interrupted`), as the tool's latest result.
   * @param {any} p
   */
  showOutcome(p) {
    const callId = String(p.callId ?? "");
    let result = callId ? this.#resultOf(callId) : null;
    if (!result || !result.pending) {
      result = new CallResult({
        callId,
        onCancel: async () => ({ cancelled: false }),
        withAppSlot: false,
        startedAt: typeof p.startedAt === "number" ? p.startedAt : undefined,
        ctx: { server: this.#server, readResource: this.#ctx.readResource },
      });
      const how = p.reattached ? "reattached" : p.resumed ? "resumed" : "interrupted";
      result.el.dataset[how] = "true";
      result.note(p.reattached ? "Started before this page was loaded."
        : p.resumed ? "Resumed here after the webhost process running this call stopped."
          : "This call was running when its webhost process stopped.");
      this.#showResult(result, "replaced by a resumed call");
    }
    this.#ctx.calls.delete(callId);
    this.#ctx.onCallDone(callId);
    if (p.error) {
      const e = p.error;
      result.error(new RpcError(String(e.message ?? "Error"), Number(e.code ?? 0), e.data));
    } else {
      result.ok(p.result);
    }
  }

  /** The result area of call `callId`, still in this view. @param {string} callId @returns {CallResult | null} */
  #resultOf(callId) {
    const shown = this.#shown.get(callId);
    return shown && shown.el.isConnected ? shown : null;
  }

  /**
   * Make `result` the tool's latest result: the previous ones leave (after their apps' teardown).
   * @param {CallResult} result @param {string} why
   */
  #showResult(result, why) {
    const previous = [...this.#resultSlot.children].filter((c) => !isParked(c));
    this.#resultSlot.append(result.el);
    matchParking(result.el); // this tool's view may be parked now
    for (const old of previous) void releaseThenRemove(/** @type {HTMLElement} */ (old), why, this.#ctx.apps);
    for (const [id, shown] of this.#shown) if (!shown.el.isConnected) this.#shown.delete(id);
    this.#shown.set(result.el.dataset.callId ?? "", result);
    if (!this.#current?.pending) this.#current = result;
  }

  /** @param {Record<string, unknown>} args */
  async #call(args) {
    const { rpc, apps, calls, readResource } = this.#ctx;
    const server = this.#server;
    const tool = this.#tool;
    /** @type {Record<string, unknown> | null} */
    let meta;
    try {
      meta = this.#meta.value();
    } catch {
      return; // the editor says what is wrong
    }
    const callId = newCallId();
    const resourceUri = tool.webhost?.resourceUri;
    const result = new CallResult({
      callId,
      onCancel: () => rpc.request("tools/cancel", { callId }),
      withAppSlot: Boolean(resourceUri),
      request: { method: "tools/call", params: { server, name: tool.name, arguments: args, ...(meta ? { _meta: meta } : {}) } },
      ctx: { server, readResource },
    });
    this.#current = result;
    calls.set(callId, result);
    // The previous result (and the app frame inside it) stays in the page, parked, until its app
    // has had ui/resource-teardown: a removed iframe cannot receive it. Then it is removed.
    const previous = [...this.#resultSlot.children].filter((c) => !isParked(c));
    this.#resultSlot.append(result.el);
    for (const old of previous) void releaseThenRemove(/** @type {HTMLElement} */ (old), "re-run", apps);
    result.el.scrollIntoView({ block: "nearest", behavior: "smooth" });
    this.#form?.setBusy(true);
    const asTask = tool.execution?.taskSupport === "optional" && this.#asTask.checked;
    const promise = rpc.request("tools/call", { server, name: tool.name, arguments: args, callId,
      ...(meta ? { _meta: meta } : {}), ...(asTask ? { asTask: true } : {}) });
    if (resourceUri) openToolApp(apps, { server, tool, args, callId, resultPromise: promise, container: result.appSlot });
    try {
      result.ok(await promise);
    } catch (err) {
      result.error(err);
    } finally {
      calls.delete(callId);
      this.#ctx.onCallDone(callId);
      if (this.#current === result) this.#form?.setBusy(false);
    }
  }
}

/**
 * Hand a tool app to the MCP Apps host side (see static/js/apps/).
 * @param {import("../apps/index.js").Apps} apps
 * @param {{server: string, tool: any, args: Record<string, unknown>, callId: string,
 *   resultPromise: Promise<any>, container: HTMLElement}} params
 */
function openToolApp(apps, params) {
  try {
    const r = apps.openToolApp(params);
    if (r && typeof r.catch === "function") {
      r.catch((/** @type {unknown} */ err) => showAppError(params.container, err));
    }
  } catch (err) {
    showAppError(params.container, err);
  }
}

/** @param {HTMLElement} container @param {unknown} err */
function showAppError(container, err) {
  container.append(h("p", { class: "inline-error", text: `The app could not be opened: ${describeError(err)}` }));
}
