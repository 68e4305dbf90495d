// @ts-check
// The host side of one MCP App frame (mcp-apps §4, §5, §10, §13.3): the frame's state (status,
// display mode, server status) and lifecycle (loading, ready, teardown), wiring the concerns that
// each own one part of it:
//   loading.js        where the frame comes from: prepared, a warm proxy frame, or new
//   messages.js       which window and origin a message is from, and its JSON-RPC shape
//   inbound.js        every message from the App, routed to its owner
//   handshake.js      ui/initialize, and what may come before it
//   channel.js        every message to the frame, held back until the App is initialized; host→App requests
//   notifications.js  every host→App notification (tool input and outcome, context, progress, lists)
//   host-context.js   the context the App is given, then its changes
//   relay.js          App requests answered by the backend (which enforces every policy)
//   diagnostics.js    trace, the App's logs, violations and reports to the backend
//   csp-compat.js     which cspCompat flag (an administrator's) would allow what the App's CSP blocked
//   teardown.js       ui/resource-teardown before the frame goes
// Visual work lives in stage.js. Everything from the sandbox origin is untrusted: the App can script
// its own proxy.

import { createAppIframe } from "./frame.js";
import { HostContextSync } from "./host-context.js";
import { onThemeChange } from "../theme.js";
import { AppChannel } from "./channel.js";
import { Diagnostics } from "./diagnostics.js";
import { appIdentity, initializeResult } from "./handshake.js";
import { InboundRouter } from "./inbound.js";
import { placeFrame } from "./loading.js";
import { messageSource, short } from "./messages.js";
import { AppNotifications } from "./notifications.js";
import { RequestRelay } from "./relay.js";
import { askToTearDown } from "./teardown.js";

export { AppRequestError } from "./channel.js";
export { PROTOCOL_VERSION } from "./handshake.js";
export { TEARDOWN_GRACE_MS, TEARDOWN_WAIT_MS } from "./teardown.js";

const PROXY_TIMEOUT_MS = 15000;
const LOAD_TIMEOUT_MS = 30000;

/**
 * @typedef {object} BridgeOptions
 * @property {import("../rpc.js").RpcClient} rpc
 * @property {import("./stage.js").Stage} stage
 * @property {Record<string, unknown> | null} [toolInput] arguments of the tool call (tool frames); null: they
 *   are still being written (the chat), given later with setToolInput and partial ones with setPartialInput
 * @property {import("./warm-frames.js").WarmFrames} [warmFrames] warm proxy frames to take one from
 * @property {import("./warm-frames.js").TakenApp | null} [prepared] the frame this App was prepared in, if any
 */

export class AppBridge extends EventTarget {
  /** @type {import("./frame.js").AppFrameDescriptor} */
  descriptor;
  frameId;
  server;
  resourceUri;
  /** @type {"tool" | "elicitation"} */
  purpose;
  iframe;
  stage;
  /** "new" → "loading" → "ready"; "closing" during teardown; "closed" at the end. */
  phase = "new";
  /** data-app-status: "loading" | "ready" | "error". */
  status = "loading";
  statusMessage = "";
  /** @type {any} */
  appInfo = null;
  /** The App's capabilities exactly as received (unknown keys such as elicitation kept). @type {Record<string, any> | null} */
  appCapabilities = null;
  /** @type {string | null} */
  appProtocolVersion = null;
  initializeCount = 0;
  initialized = false;
  /** @type {string | null} */
  closeReason = null;
  /** Whether the frame was in the document when it started loading (a later removal kills it). */
  startedConnected = false;
  /** Whether the App opened in a warm proxy frame (warm-frames.js). */
  warm = false;
  /** Whether the App was prepared before its open (its frame adopted with the App already booted). */
  prepared = false;
  /** Why the frame's server cannot serve requests (status error/disconnected), or null. @type {string | null} */
  serverDown = null;

  #rpc;
  #proxyReady = false;
  #diagnostics;
  #channel;
  #notifications;
  #relay;
  #context;
  #inbound;
  /** @type {(() => void)[]} */
  #cleanups = [];
  /** @type {Set<ReturnType<typeof setTimeout>>} */
  #timers = new Set();
  /** @type {Promise<void> | null} */
  #teardown = null;
  /** @type {import("./warm-frames.js").WarmFrames | null} */
  #warmFrames;
  /** The frame this App was prepared in, until start() adopts or drops it. @type {import("./warm-frames.js").TakenApp | null} */
  #preparedFrame;

  /**
   * @param {import("./frame.js").AppFrameDescriptor} descriptor (already checked with descriptorProblem)
   * @param {BridgeOptions} options
   */
  constructor(descriptor, options) {
    super();
    this.descriptor = descriptor;
    this.frameId = descriptor.frameId;
    this.server = descriptor.server;
    this.resourceUri = descriptor.resourceUri;
    this.purpose = descriptor.purpose === "elicitation" ? "elicitation" : "tool";
    this.#rpc = options.rpc;
    this.stage = options.stage;
    this.#warmFrames = options.warmFrames ?? null;
    this.#preparedFrame = options.prepared ?? null;
    this.iframe = createAppIframe(descriptor);
    const closed = () => this.phase === "closed";
    this.#diagnostics = new Diagnostics({ rpc: this.#rpc, frameId: this.frameId, events: this,
      closed: () => this.closeReason !== null, later: (ms, fn) => this.#later(ms, fn) });
    this.#channel = new AppChannel({ frame: () => this.iframe, origin: descriptor.origin, closed,
      posted: (msg) => this.#diagnostics.traceOut(msg) });
    const toolInput = options.toolInput === null ? null
      : options.toolInput && typeof options.toolInput === "object" ? options.toolInput : {};
    this.#notifications = new AppNotifications(this.#channel, toolInput, closed);
    this.#relay = new RequestRelay({ rpc: this.#rpc, frameId: this.frameId, channel: this.#channel,
      diagnostics: this.#diagnostics, events: this, serverDown: () => this.serverDown });
    this.#context = new HostContextSync(() => ({
      toolInfo: this.descriptor.toolInfo,
      version: this.descriptor.hostInfo?.version,
      displayMode: this.stage.mode,
      availableDisplayModes: this.stage.availableModes(),
      containerDimensions: this.stage.containerDimensions(),
    }));
    this.#inbound = new InboundRouter({
      frameId: this.frameId,
      initialized: () => this.initialized,
      handshakeStarted: () => this.initializeCount > 0,
      channel: this.#channel,
      diagnostics: this.#diagnostics,
      relay: this.#relay,
      initialize: (id, params) => this.#answerInitialize(id, params),
      onInitialized: () => this.#onInitialized(),
      proxyReady: (method) => this.#onProxyReady(method),
      requestDisplayMode: (id, params) => {
        this.#channel.respond(id, { mode: this.setDisplayMode(params.mode, "app") });
        this.#syncContext();
      },
      sizeChanged: (params) => { if (this.stage.reportHeight(params.height)) this.dispatchEvent(new Event("size")); },
      teardownRequested: () => {
        this.#diagnostics.lifecycle("the app asked to be torn down", {});
        this.dispatchEvent(new Event("teardownrequest"));
        void this.teardown("requested by the app");
      },
    });
  }

  /** The App's log messages (the Info view). */
  get logs() { return this.#diagnostics.logs; }
  /** What went wrong, newest last (the Info view). */
  get problems() { return this.#diagnostics.problems; }
  /** Recent traffic, newest last: {ts, dir: "in" | "out" | "local", msg}. */
  get trace() { return this.#diagnostics.trace; }
  /** The cspCompat flags that would allow what the App's CSP blocked, in the order first seen. */
  get compatFlags() { return [...this.#diagnostics.compatFlags]; }
  /** Whether the App logged an error (notifications/message at level error or worse). */
  get reportedError() { return this.#diagnostics.reportedError; }

  // -- loading ---------------------------------------------------------------------------------

  /** Insert the frame into the stage and load the proxy: the listener is attached first. */
  start() {
    if (this.phase !== "new") return;
    this.phase = "loading";
    window.addEventListener("message", this.#onMessage);
    this.#cleanups.push(() => window.removeEventListener("message", this.#onMessage));
    this.#cleanups.push(onThemeChange(() => {
      this.#context.themeChanged();
      this.#syncContext();
    }));
    const onLayout = () => this.#syncContext();
    this.stage.addEventListener("layout", onLayout);
    this.#cleanups.push(() => this.stage.removeEventListener("layout", onLayout));
    this.#place();
    this.startedConnected = this.iframe.isConnected;
    this.#later(PROXY_TIMEOUT_MS, () => {
      if (!this.#proxyReady) {
        this.#fail(`The sandbox proxy at ${this.descriptor.origin} did not start within ${PROXY_TIMEOUT_MS / 1000} s `
          + "(is the sandbox listener reachable, and does it accept this page's origin?).");
      }
    });
    this.#later(LOAD_TIMEOUT_MS, () => {
      if (this.#proxyReady && !this.initialized) {
        this.#fail(`The app did not finish its handshake (no ui/notifications/initialized within ${LOAD_TIMEOUT_MS / 1000} s).`);
      }
    });
  }

  /** Put the frame on the stage; a warm or prepared one has its proxy loaded already. */
  #place() {
    const placed = placeFrame({ descriptor: this.descriptor, stage: this.stage, cold: this.iframe,
      warmFrames: this.#warmFrames, prepared: this.#preparedFrame });
    this.#preparedFrame = null;
    this.iframe = placed.iframe;
    if (placed.how === "cold") return;
    this.warm = true;
    this.prepared = placed.how === "prepared";
    this.#proxyReady = true;
    const serial = placed.iframe.dataset.warmFrame;
    this.#diagnostics.pushTrace("local", { method: `webhost/${placed.how}-frame`, params: { serial } });
    if (placed.how === "warm") {
      this.#notifications.appDocument(this.descriptor);
      this.#notifications.resourceReady(this.descriptor, true);
    }
    for (const msg of placed.held) this.#receive(msg);
  }

  // -- what the page tells the App -------------------------------------------------------------

  /** The tool call finished. @param {any} result a CallToolResult */
  setToolResult(result) { this.#notifications.setToolResult(result); }

  /** The model is writing the arguments: the healed object so far. @param {Record<string, unknown>} partial */
  setPartialInput(partial) { this.#notifications.setPartialInput(partial); }

  /** The complete arguments (when the frame was opened before them). @param {Record<string, unknown>} input */
  setToolInput(input) { this.#notifications.setToolInput(input); }

  /** The tool call failed or was cancelled. @param {string} reason */
  setToolCancelled(reason) { this.#notifications.setToolCancelled(reason); }

  /** Backend progress for an App-initiated tools/call (`apps/progress`). @param {any} p */
  progress(p) { this.#notifications.progress(p); }

  /**
   * The server's tools or resources changed (`list/changed`): forward it to the App when its
   * hostCapabilities promised listChanged for that list (queued until it is initialized).
   * @param {string} list "tools" | "resources" | "prompts"
   */
  listChanged(list) { this.#notifications.listChanged(list, this.descriptor.hostCapabilities); }

  /**
   * The frame's server changed status (`servers/status`): while it is not connected, the App's
   * requests fail at once with a clear error and the panel says so.
   * @param {string} status @param {string | null} [error]
   */
  setServerStatus(status, error) {
    const down = status === "error" || status === "disconnected";
    const reason = down ? `the server ${this.server} is ${status === "error" ? `in error${error ? ` (${short(error, 200)})` : ""}` : "disconnected"}` : null;
    if (reason === this.serverDown) return;
    this.serverDown = reason;
    if (reason) this.#diagnostics.lifecycle(`server ${status}`, { status });
    this.dispatchEvent(new Event("serverstatus"));
  }

  /**
   * Change the display mode; returns the mode in effect afterwards (mcp-apps §8). App requests are
   * limited to the App's declared modes; the person's own choice of "inline" always works.
   * @param {unknown} mode @param {"app" | "user"} source
   * @returns {import("./stage.js").DisplayMode}
   */
  setDisplayMode(mode, source) {
    const current = this.stage.mode;
    if (mode !== "inline" && mode !== "fullscreen" && mode !== "pip") return current;
    if (this.phase === "closed") return current;
    const declared = this.declaredDisplayModes();
    const allowed = this.stage.availableModes().includes(mode)
      && (!declared || declared.includes(mode) || (source === "user" && mode === "inline"));
    if (allowed && mode !== current) {
      this.stage.setMode(mode);
      this.#diagnostics.event("display-mode", { summary: `${current} → ${mode} (${source})`, from: current, to: mode, source });
      this.dispatchEvent(new Event("displaymode"));
    }
    return this.stage.mode;
  }

  /** The App's declared availableDisplayModes, or null when it declared none. */
  declaredDisplayModes() {
    const modes = this.appCapabilities?.availableDisplayModes;
    return Array.isArray(modes) ? modes.filter((m) => typeof m === "string") : null;
  }

  /**
   * Send a request to the App (queued until it is initialized).
   * @param {string} method @param {Record<string, unknown>} params @param {number} timeoutMs
   * @returns {Promise<any>}
   */
  requestApp(method, params, timeoutMs) {
    return this.#channel.request(method, params, timeoutMs);
  }

  /**
   * Tear the App down (mcp-apps §10.2): ui/resource-teardown with a bounded wait, a grace window
   * with the listener still attached, then remove the frame and tell the backend. Idempotent.
   * @param {string} reason
   * @returns {Promise<void>}
   */
  teardown(reason) {
    if (this.#teardown) return this.#teardown;
    this.#teardown = (async () => {
      if (this.phase === "closed") return;
      this.phase = "closing";
      this.dispatchEvent(new Event("status"));
      const outcome = await askToTearDown(this);
      this.#diagnostics.lifecycle(`teardown (${reason}): ${outcome}`, { reason, outcome });
      this.#destroy(reason);
    })();
    return this.#teardown;
  }

  /**
   * The frame left the page (or the page is going away): it cannot answer any more, so drop it
   * without a teardown request (pagehide sends one without waiting).
   * @param {string} reason
   */
  abandon(reason) {
    if (this.phase === "closed") return;
    if (this.initialized && this.iframe.isConnected) this.#channel.requestNoWait("ui/resource-teardown", {});
    this.#destroy(reason);
  }

  // -- what the App sends ----------------------------------------------------------------------

  #onMessage = (/** @type {MessageEvent} */ event) => {
    if (this.phase === "closed") return;
    const from = messageSource(event, this.iframe.contentWindow, this.descriptor.origin);
    if (from === "bypass") {
      this.#diagnostics.violation("bypassed-proxy", "a message from inside the app bypassed its sandbox proxy (dropped)");
    }
    if (from === "frame") this.#receive(event.data);
  };

  /** One message from the App's frame (already known to come from it). @param {any} msg */
  #receive(msg) {
    if (this.phase !== "closed") this.#inbound.receive(msg);
  }

  /** @param {string | number} id @param {any} params */
  #answerInitialize(id, params) {
    this.initializeCount += 1;
    if (this.initializeCount > 1) {
      // React StrictMode double mounts do this (ext-apps #450): answer again, overwrite, log.
      console.warn(`webhost apps: ${this.frameId} sent ui/initialize again (#${this.initializeCount})`);
      this.#diagnostics.lifecycle(`repeated ui/initialize (#${this.initializeCount})`, {});
    }
    const identity = appIdentity(params);
    this.appInfo = identity.appInfo;
    this.appCapabilities = identity.appCapabilities;
    this.appProtocolVersion = identity.protocolVersion;
    this.#channel.respond(id, initializeResult(this.descriptor, this.#context.initial()));
    this.dispatchEvent(new Event("appinfo"));
  }

  /** The sandbox proxy is loaded: it gets the App (once). @param {string} method */
  #onProxyReady(method) {
    if (this.#proxyReady) {
      this.#diagnostics.violation("sandbox-message", `a second ${method} from the frame (dropped)`, { method });
      return;
    }
    this.#proxyReady = true;
    this.#notifications.resourceReady(this.descriptor, this.warm);
  }

  #onInitialized() {
    if (this.initialized) {
      this.#diagnostics.lifecycle("repeated ui/notifications/initialized (ignored)", {});
      return;
    }
    this.initialized = true;
    this.phase = this.phase === "closing" ? "closing" : "ready";
    this.#setStatus("ready", "");
    if (this.purpose === "tool") this.#notifications.sendToolInput();
    this.#channel.open();
    this.#syncContext();
    this.#diagnostics.lifecycle("initialized", { appInfo: this.appInfo, protocolVersion: this.appProtocolVersion });
    this.dispatchEvent(new Event("ready"));
  }

  /** Send the changed context keys, once the App is initialized. */
  #syncContext() {
    if (!this.initialized || this.phase === "closed") return;
    const diff = this.#context.changes();
    if (Object.keys(diff).length) this.#notifications.hostContextChanged(diff);
  }

  // -- state and ending ------------------------------------------------------------------------

  /** @param {string} status @param {string} message */
  #setStatus(status, message) {
    this.status = status;
    this.statusMessage = message;
    this.iframe.dataset.appStatus = status;
    this.dispatchEvent(new Event("status"));
  }

  /** @param {string} message */
  #fail(message) {
    if (this.phase === "closed" || this.initialized) return;
    this.#setStatus("error", message);
    this.#diagnostics.event("error", { summary: message });
  }

  /** @param {number} ms @param {() => void} fn */
  #later(ms, fn) {
    const t = setTimeout(() => { this.#timers.delete(t); fn(); }, ms);
    this.#timers.add(t);
  }

  /** @param {string} reason */
  #destroy(reason) {
    if (this.phase === "closed") return;
    this.phase = "closed";
    this.closeReason = reason;
    for (const fn of this.#cleanups.splice(0)) {
      try { fn(); } catch { /* keep going */ }
    }
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    this.#diagnostics.close();
    this.#channel.close(reason);
    this.stage.destroy();
    this.iframe.remove();
    this.#rpc.request("apps/close", { frameId: this.frameId, reason: reason.slice(0, 100) }).catch(() => { /* session gone */ });
    this.dispatchEvent(new Event("status"));
    this.dispatchEvent(new Event("closed"));
  }
}
