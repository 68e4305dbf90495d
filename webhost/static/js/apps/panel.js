// @ts-check
// The panel around one App: header (server, resource URI, status, Info / Conversation /
// Fullscreen / Close), notices and errors, the stage holding the frame, and the Info and
// Conversation views (between the header and the app, so they open where the button is). A panel outlives its frame: it can show why the app closed and reopen it
// (a new frame that gets the same tool input and result).
//
//   <section data-app-panel data-app-status="loading|ready|error|closing|closed"
//            data-app-server="…" data-resource-uri="…" data-frame-id="…" data-purpose="tool|elicitation">
//     <header> … <button data-app-action="info|conversation|fullscreen|close|reopen"> </header>
//     <p data-app-error>…</p>                         (only on error)
//     <div class="wh-app-stage"> <iframe data-app-frame …> </div>

import { APP_MAX_MESSAGES, APP_MESSAGES_MAX_BYTES } from "../constants.js";
import { h } from "../html.js";
import { describeError } from "../rpc.js";
import { AppBridge } from "./bridge.js";
import { compatHint, compatTrouble } from "./csp-compat.js";
import { descriptorProblem } from "./frame.js";
import { Stage } from "./stage.js";
import { renderInfo } from "./info-view.js";
import { renderConversation } from "./conversation-view.js";

const STATUS_TEXT = { loading: "Loading…", ready: "Running", error: "Error", closing: "Closing…", closed: "Closed" };

/**
 * The newest messages, as many as the backend keeps for a frame (by count and by bytes of JSON: apps/instances.py).
 * @param {any[]} messages oldest first
 */
function keptMessages(messages) {
  const kept = messages.slice(-APP_MAX_MESSAGES);
  let bytes = 0;
  for (let i = kept.length - 1; i >= 0; i--) {
    bytes += JSON.stringify(kept[i] ?? null).length;
    if (bytes > APP_MESSAGES_MAX_BYTES) return kept.slice(i + 1);
  }
  return kept;
}

/**
 * @typedef {object} PanelOptions
 * @property {import("../rpc.js").RpcClient} rpc
 * @property {string} server
 * @property {string} resourceUri
 * @property {"tool" | "elicitation"} purpose
 * @property {string} [toolName]
 * @property {Record<string, unknown> | null} [args] the tool call's arguments; null: not known yet (the chat gives
 *   them with setToolInput, and partial ones meanwhile with setPartialInput)
 * @property {(() => Promise<any>) | null} open loads a descriptor (apps/open); null when it cannot be reopened
 * @property {(panel: AppPanel) => void} onChange registry hook: frame, status or mode changed
 * @property {string} [closeLabel]
 * @property {import("./warm-frames.js").WarmFrames} [warmFrames] warm proxy frames the App may open in
 * @property {() => import("./warm-frames.js").TakenApp | null} [prepared] the frame this App was prepared in, once
 */

export class AppPanel {
  server;
  resourceUri;
  purpose;
  toolName;
  /** @type {any} */
  descriptor = null;
  /** @type {AppBridge | null} */
  bridge = null;
  /** "loading" | "ready" | "error" | "closing" | "closed" */
  status = "loading";
  statusMessage = "";
  /** @type {{messages: any[], modelContext: any}} */
  conversation = { messages: [], modelContext: null };
  /** A panel the person dismissed, or one replaced by a re-run: never reopened automatically. */
  retired = false;
  el;

  #opts;
  /** The tool call's arguments as known now (null: still being written); a reopened frame gets them. */
  /** @type {Record<string, unknown> | null} */
  #input;
  /** @type {Record<string, unknown> | null} */
  #partial = null;
  /** @type {{kind: "result", value: any} | {kind: "cancelled", reason: string} | null} */
  #toolOutcome = null;
  #statusPill = h("span", { class: "status-pill pending wh-app-status", text: STATUS_TEXT.loading });
  #errorSlot = h("div", { class: "wh-app-error-slot" });
  #notices = h("div", { class: "wh-app-notices", role: "status", "aria-live": "polite" });
  #stageSlot = h("div", { class: "wh-stage-slot" });
  #awayNote = h("p", { class: "wh-away muted", hidden: true, dataset: { appAway: "" } });
  // Scrolling regions (max-height): focusable, so a keyboard can scroll them.
  #infoEl = h("div", { class: "wh-app-view wh-app-info-view", hidden: true, tabindex: "0", role: "region",
    "aria-label": "App info", dataset: { appView: "info" } });
  #convEl = h("div", { class: "wh-app-view wh-app-conv-view", hidden: true, tabindex: "0", role: "region",
    "aria-label": "App conversation", dataset: { appView: "conversation" } });
  #buttons;
  /** @type {string | null} */
  #permissionBusy = null;
  #loadSeq = 0;
  /** The frame's server status (`servers/status`), applied to every frame this panel builds. */
  #serverStatus = { status: "connected", error: /** @type {string | null} */ (null) };
  #serverNote = h("p", { class: "inline-error", hidden: true, dataset: { appServerDown: "" } });
  /** Who can allow what the App's CSP blocked (an administrator, with cspCompat): shown while the frame lives, as
   * information, and as a warning once the App failed or logged an error (csp-compat.js, compatTrouble). */
  #cspHint = h("p", { class: "wh-note wh-note-info wh-csp-hint", hidden: true, dataset: { appCspHint: "" } });

  /** @param {PanelOptions} opts */
  constructor(opts) {
    this.#opts = opts;
    this.#input = opts.args === null ? null : opts.args ?? {};
    this.server = opts.server;
    this.resourceUri = opts.resourceUri;
    this.purpose = opts.purpose;
    this.toolName = opts.toolName ?? "";
    const btn = (/** @type {string} */ action, /** @type {string} */ text, /** @type {() => void} */ fn, extra = {}) =>
      h("button", { type: "button", class: "small ghost", text, dataset: { appAction: action }, onclick: fn, ...extra });
    this.#buttons = {
      info: btn("info", "Info", () => this.#toggleView(this.#infoEl), { "aria-expanded": "false" }),
      conversation: btn("conversation", "Conversation", () => this.#toggleView(this.#convEl), { "aria-expanded": "false" }),
      fullscreen: btn("fullscreen", "Fullscreen", () => this.#userFullscreen()),
      reopen: btn("reopen", "Reopen", () => { void this.reopen(); }, { hidden: true }),
      close: btn("close", opts.closeLabel ?? "Close", () => { void this.close("closed by the person"); }),
    };
    const title = h("span", { class: "wh-app-title" },
      h("span", { class: "badge app", text: "App" }), " ",
      h("strong", { class: "wh-app-server", text: this.server }), " ",
      h("code", { class: "wh-app-uri", text: this.resourceUri, title: this.resourceUri }));
    this.el = h("section", {
      class: "wh-app-panel", "aria-label": `MCP App ${this.resourceUri} from ${this.server}`,
      dataset: { appPanel: "", appStatus: "loading", appServer: this.server, resourceUri: this.resourceUri, purpose: this.purpose },
    },
    h("header", { class: "wh-app-head" }, title, this.#statusPill,
      h("span", { class: "wh-app-actions" }, this.#buttons.info, this.#buttons.conversation, this.#buttons.fullscreen,
        this.#buttons.reopen, this.#buttons.close)),
    this.#errorSlot, this.#serverNote, this.#notices, this.#cspHint, this.#awayNote, this.#infoEl, this.#convEl, this.#stageSlot);
  }

  get frameId() { return this.bridge?.frameId ?? this.descriptor?.frameId ?? null; }

  /**
   * Load (or reload) the app: ask the backend for a frame descriptor, then build the frame.
   * Never rejects: failures are shown in the panel.
   */
  async load() {
    const open = this.#opts.open;
    if (!open) return;
    const seq = ++this.#loadSeq;
    this.#setStatus("loading", "");
    let descriptor;
    try {
      descriptor = await open();
    } catch (err) {
      if (seq !== this.#loadSeq || this.retired) return;
      this.fail(`The app could not be opened: ${describeError(err)}`);
      return;
    }
    if (seq !== this.#loadSeq || this.retired) {
      // Superseded while loading (closed, re-run): the backend instance is not wanted.
      if (descriptor?.frameId) this.#opts.rpc.request("apps/close", { frameId: descriptor.frameId, reason: "superseded" }).catch(() => {});
      return;
    }
    this.attach(descriptor);
  }

  /**
   * Build the frame for a descriptor (from apps/open, or pushed by the backend for elicitation).
   * @param {any} descriptor
   * @returns {AppBridge | null}
   */
  attach(descriptor) {
    const problem = descriptorProblem(descriptor);
    this.descriptor = descriptor && typeof descriptor === "object" ? descriptor : null;
    if (problem) {
      this.fail(`The app cannot be shown: ${problem}.`);
      return null;
    }
    this.#errorSlot.replaceChildren();
    this.el.dataset.frameId = descriptor.frameId;
    this.el.classList.toggle("wh-border", descriptor.prefersBorder !== false);
    /** @type {AppBridge} */
    let bridge;
    const stage = new Stage({
      title: `${this.server} · ${this.resourceUri}`,
      onUserMode: (mode) => { bridge.setDisplayMode(mode, "user"); },
      onClose: () => { void this.close("closed by the person"); },
      declaredModes: () => bridge?.declaredDisplayModes() ?? null,
    });
    bridge = new AppBridge(descriptor, { rpc: this.#opts.rpc, stage, toolInput: this.#input, warmFrames: this.#opts.warmFrames,
      prepared: this.#opts.prepared?.() ?? null });
    this.bridge = bridge;
    const refresh = () => { if (this.bridge === bridge) this.#fromBridge(); };
    for (const type of ["status", "displaymode", "appinfo", "serverstatus"]) bridge.addEventListener(type, refresh);
    bridge.addEventListener("downloaded", (ev) => {
      const d = /** @type {CustomEvent} */ (ev).detail;
      this.notice(`Saved ${d.name} (${d.size} bytes) from the app.`);
    });
    bridge.setServerStatus(this.#serverStatus.status, this.#serverStatus.error);
    bridge.addEventListener("log", () => {
      this.#refreshView(this.#infoEl);
      this.#showCompatHint(bridge);
    });
    bridge.addEventListener("problem", () => {
      this.#refreshView(this.#infoEl);
      this.#showCompatHint(bridge);
    });
    this.#showCompatHint(bridge);
    bridge.addEventListener("linkopened", (ev) => this.#linkNotice(/** @type {CustomEvent} */ (ev).detail.url, true));
    bridge.addEventListener("linkblocked", (ev) => this.#linkNotice(/** @type {CustomEvent} */ (ev).detail.url, false));
    bridge.addEventListener("closed", () => { if (this.bridge === bridge) this.#closed(bridge.closeReason ?? "closed"); });
    this.#stageSlot.replaceChildren(stage.el);
    this.#buttons.reopen.hidden = true;
    this.#buttons.close.hidden = false;
    this.#buttons.fullscreen.hidden = false;
    this.#buttons.info.hidden = false;
    this.#buttons.conversation.hidden = false;
    bridge.start();
    if (this.#input === null && this.#partial) bridge.setPartialInput(this.#partial);
    const outcome = this.#toolOutcome;
    if (outcome?.kind === "result") bridge.setToolResult(outcome.value);
    else if (outcome?.kind === "cancelled") bridge.setToolCancelled(outcome.reason);
    this.#fromBridge();
    this.#refreshView(this.#infoEl);
    return bridge;
  }

  /**
   * The server of this panel's app changed status (`servers/status`).
   * @param {string} status @param {string | null} [error]
   */
  setServerStatus(status, error) {
    this.#serverStatus = { status: String(status), error: error ?? null };
    if (this.bridge) this.bridge.setServerStatus(this.#serverStatus.status, this.#serverStatus.error);
    else this.#fromBridge();
  }

  /** The arguments so far, while the model writes them. @param {Record<string, unknown>} partial */
  setPartialInput(partial) {
    if (this.#input !== null) return;
    this.#partial = partial;
    this.bridge?.setPartialInput(partial);
  }

  /** The complete arguments (a frame opened before them). @param {Record<string, unknown>} input */
  setToolInput(input) {
    if (this.#input !== null) return;
    this.#input = input;
    this.#partial = null;
    this.bridge?.setToolInput(input);
  }

  /** @param {any} result */
  setToolResult(result) {
    if (this.#toolOutcome) return;
    this.#toolOutcome = { kind: "result", value: result };
    this.bridge?.setToolResult(result);
  }

  /** @param {string} reason */
  setToolCancelled(reason) {
    if (this.#toolOutcome) return;
    this.#toolOutcome = { kind: "cancelled", reason };
    this.bridge?.setToolCancelled(reason);
  }

  /**
   * What changed in the app's conversation: one new message, or the new model context (the backend
   * sends deltas; `apps/conversation` as a request returns the whole).
   * @param {{message?: any, modelContext?: any}} p
   */
  updateConversation(p) {
    const messages = p.message ? keptMessages([...this.conversation.messages, p.message]) : this.conversation.messages;
    const modelContext = "modelContext" in p ? (p.modelContext ?? null) : this.conversation.modelContext;
    this.conversation = { messages, modelContext };
    const n = this.conversation.messages.length + (this.conversation.modelContext ? 1 : 0);
    this.#buttons.conversation.textContent = n ? `Conversation (${this.conversation.messages.length})` : "Conversation";
    this.#refreshView(this.#convEl);
  }

  /**
   * Tear the app down and keep the panel with a note (and Reopen, for tool apps).
   * @param {string} reason
   */
  async close(reason) {
    this.#loadSeq += 1; // cancels a load in progress
    const bridge = this.bridge;
    if (bridge && bridge.phase !== "closed") await bridge.teardown(reason);
    else this.#closed(reason);
  }

  /** Close for good (re-run, removal): no Reopen offered. @param {string} reason */
  async retire(reason) {
    this.retired = true;
    const bridge = this.bridge;
    if (bridge && !bridge.iframe.isConnected && bridge.phase !== "new") bridge.abandon(reason);
    await this.close(reason);
  }

  /** A new frame for the same app (after a permission change, or after it closed). */
  async reopen() {
    if (!this.#opts.open) return;
    this.retired = false;
    const bridge = this.bridge;
    if (bridge && bridge.phase !== "closed") await bridge.teardown("reopened");
    this.bridge = null;
    await this.load();
  }

  /** Show an error instead of the app. @param {string} message */
  fail(message) {
    this.#setStatus("error", message);
    this.#errorSlot.replaceChildren(h("p", { class: "inline-error", dataset: { appError: "" }, text: message }));
    this.#buttons.reopen.hidden = !this.#opts.open;
    this.#buttons.fullscreen.hidden = true;
    this.#buttons.info.hidden = !this.descriptor;
    this.#buttons.conversation.hidden = !this.descriptor;
    this.#buttons.close.hidden = !this.bridge || this.bridge.phase === "closed";
  }

  /** Bring the panel into view. */
  focus() {
    this.el.scrollIntoView({ behavior: "smooth", block: "nearest" });
    this.el.tabIndex = -1;
    this.el.focus({ preventScroll: true });
  }

  /** @param {string} message @param {string} [kind] */
  notice(message, kind = "info") {
    const note = h("p", { class: `wh-note wh-note-${kind}`, text: message });
    this.#notices.append(note);
    setTimeout(() => note.remove(), 8000);
  }

  // -- internals -------------------------------------------------------------------------------

  #fromBridge() {
    const b = this.bridge;
    const down = b?.serverDown ?? null;
    this.#serverNote.hidden = !down || b?.phase === "closed";
    if (down) this.#serverNote.textContent = `The app cannot reach its server: ${down}. Its requests fail until the server is connected again.`;
    if (down && b && b.phase !== "closed") this.el.dataset.serverStatus = this.#serverStatus.status;
    else delete this.el.dataset.serverStatus;
    if (!b) return;
    if (b.phase === "closing") this.#setStatus("closing", "");
    else if (b.phase !== "closed") {
      this.#setStatus(b.status, b.statusMessage);
      this.#showCompatHint(b);  // an App that failed to start after a block gets the hint now
      if (down && b.status === "ready") {
        this.#statusPill.textContent = this.#serverStatus.status === "error" ? "Server error" : "Server disconnected";
        this.#statusPill.className = "status-pill wh-app-status error";
        this.#statusPill.title = down;
      }
      if (b.status === "error") {
        this.#errorSlot.replaceChildren(h("p", { class: "inline-error", dataset: { appError: "" }, text: b.statusMessage }));
      } else {
        this.#errorSlot.replaceChildren();
      }
    }
    this.el.dataset.displayMode = b.stage.mode;
    const away = b.phase !== "closed" && b.stage.mode !== "inline";
    this.#awayNote.hidden = !away;
    if (away) {
      this.#awayNote.replaceChildren(
        b.stage.mode === "fullscreen" ? "The app is shown fullscreen. " : "The app is shown in a floating window. ",
        h("button", { type: "button", class: "link-button", text: "Back to the page", dataset: { appAction: "inline" },
          onclick: () => { b.setDisplayMode("inline", "user"); } }));
    }
    this.#buttons.fullscreen.textContent = b.stage.mode === "fullscreen" ? "Exit fullscreen" : "Fullscreen";
    const declared = b.declaredDisplayModes();
    this.#buttons.fullscreen.disabled = b.phase === "closed" || (declared !== null && !declared.includes("fullscreen"));
    this.#buttons.fullscreen.title = this.#buttons.fullscreen.disabled ? "This app does not support fullscreen" : "";
    this.#refreshView(this.#infoEl);
    this.#opts.onChange(this);
  }

  /** @param {string} reason */
  #closed(reason) {
    this.#setStatus("closed", reason);
    this.#awayNote.hidden = true;
    this.el.dataset.displayMode = "inline";
    this.#stageSlot.replaceChildren(h("p", { class: "wh-closed muted", dataset: { appClosed: "" },
      text: `The app was closed (${reason}).` }));
    this.#buttons.fullscreen.hidden = true;
    this.#buttons.close.hidden = true;
    this.#buttons.reopen.hidden = !this.#opts.open || this.retired;
    this.#opts.onChange(this);
  }

  /** @param {string} status @param {string} message */
  #setStatus(status, message) {
    this.status = status;
    this.statusMessage = message;
    this.el.dataset.appStatus = status;
    this.#statusPill.textContent = /** @type {Record<string, string>} */ (STATUS_TEXT)[status] ?? status;
    this.#statusPill.className = `status-pill wh-app-status ${status === "ready" ? "ok" : status === "error" ? "error" : status === "loading" ? "pending" : ""}`;
    this.#statusPill.title = message;
  }

  #userFullscreen() {
    const b = this.bridge;
    if (!b || b.phase === "closed") return;
    const mode = b.setDisplayMode(b.stage.mode === "fullscreen" ? "inline" : "fullscreen", "user");
    if (mode !== "fullscreen" && b.stage.mode !== "inline") this.notice("This app cannot be shown fullscreen.");
  }

  /** @param {HTMLElement} view */
  #toggleView(view) {
    const open = view.hidden;
    for (const [el, button] of /** @type {const} */ ([[this.#infoEl, this.#buttons.info], [this.#convEl, this.#buttons.conversation]])) {
      const show = el === view && open;
      el.hidden = !show;
      button.setAttribute("aria-expanded", String(show));
      button.classList.toggle("is-active", show);
    }
    if (open) {
      this.#refreshView(view);
      // Under the header it opened from, above the app (which may be taller than the window): in view.
      view.scrollIntoView({ block: "nearest" });
    }
  }

  /** @param {HTMLElement} view */
  #refreshView(view) {
    if (view.hidden) return;
    if (view === this.#infoEl) {
      if (!this.descriptor) {
        view.replaceChildren(h("p", { class: "muted", text: "No frame yet." }));
        return;
      }
      view.replaceChildren(renderInfo(this.descriptor, this.bridge, {
        busy: this.#permissionBusy,
        onPermission: (p, granted) => { void this.#setPermission(p, granted); },
      }));
    } else {
      view.replaceChildren(renderConversation(this.conversation));
    }
  }

  /** @param {string} permission @param {boolean} granted */
  async #setPermission(permission, granted) {
    this.#permissionBusy = permission;
    this.#refreshView(this.#infoEl);
    try {
      await this.#opts.rpc.request("apps/permission", { server: this.server, permission, granted });
      this.notice(`${granted ? "Allowed" : "Revoked"} ${permission} for the apps of ${this.server}.`);
      this.#permissionBusy = null;
      if (this.#opts.open) await this.reopen();
      else this.notice("It takes effect the next time this app opens.");
    } catch (err) {
      this.#permissionBusy = null;
      this.notice(`Could not change ${permission}: ${describeError(err)}`, "error");
    }
    this.#refreshView(this.#infoEl);
  }

  /** @param {AppBridge} bridge */
  #showCompatHint(bridge) {
    if (this.bridge !== bridge) return;
    const flags = bridge.compatFlags;
    const trouble = compatTrouble(bridge);
    this.#cspHint.hidden = !flags.length;
    this.#cspHint.dataset.cspCompat = flags.join(" ");
    this.#cspHint.dataset.cspSeverity = trouble ? "warning" : "info";
    this.#cspHint.className = `wh-note wh-note-${trouble ? "warning" : "info"} wh-csp-hint`;
    this.#cspHint.textContent = flags.length ? compatHint(this.server, flags, trouble) : "";
  }

  /**
   * A link the app asked for: opened in a new tab, or not (the browser's popup blocker), when the person can
   * open it with a click of their own; that notice stays until they do or close it.
   * @param {string} url @param {boolean} opened
   */
  #linkNotice(url, opened) {
    const link = h("a", { href: url, target: "_blank", rel: "noopener noreferrer", text: url });
    if (opened) {
      const note = h("p", { class: "wh-note wh-note-info", dataset: { appLinkOpened: url } }, "Opened ", link, " in a new tab.");
      this.#notices.append(note);
      setTimeout(() => note.remove(), 15000);
      return;
    }
    const note = h("p", { class: "wh-note wh-note-warning", dataset: { appLinkBlocked: url } },
      "The app asked to open ", link, ", but your browser did not open a new tab (a popup blocker?); the app was told. "
      + "Click the link to open it.");
    link.addEventListener("click", () => note.remove());
    this.#notices.append(note);
  }
}
