// @ts-check
// The host side of one MCP App frame (mcp-apps §4, §5, §10, §13.3): origin and source checks,
// the sandbox handshake, ui/initialize, queueing host→App traffic until the App is initialized,
// tool-input/result, host-context diffs, display modes, relaying App requests to the backend
// (which enforces every policy), flood limits and teardown. Visual work lives in stage.js.
//
// Everything from the sandbox origin is untrusted: the App can script its own proxy.

import { createAppIframe, decorateAppIframe, warmEligible } from "./frame.js";
import { buildHostContext, contextDiff, themeContext } from "./host-context.js";
import { MAX_IN_FLIGHT, MAX_MESSAGES_PER_SECOND, RateWindow, Reporter } from "./limits.js";
import { onThemeChange } from "../theme.js";
import { APP_RELAYED_METHODS, ERRORS } from "../constants.js";

/** The MCP Apps protocol version webhost speaks (answered whatever the App sent). */
export const PROTOCOL_VERSION = "2026-01-26";

const PROXY_READY = new Set(["ui/notifications/sandbox-proxy-ready", "ui/sandbox-ready", "ui/notifications/sandbox-ready"]);
const SIZE_CHANGED = new Set(["ui/notifications/size-changed", "ui/size-change", "ui/notifications/size-change"]);
const CSP_VIOLATION = "ui/notifications/sandbox-csp-violation";
const DROPPED = "ui/notifications/sandbox-dropped";
/** App requests answered by the backend (docs/api.md `apps/request`; the list is apps/policy.py's). */
const RELAYED = new Set(APP_RELAYED_METHODS);
/** App notifications that need nothing from the host. */
const IGNORED_NOTIFICATIONS = new Set(["notifications/tools/list_changed",
  "notifications/progress", "notifications/roots/list_changed"]);
/** Requests an App may send before ui/notifications/initialized (everything else is refused). */
const BEFORE_INITIALIZED = new Set(["ui/initialize", "initialize", "ping"]);

export const TEARDOWN_WAIT_MS = 800;
export const TEARDOWN_GRACE_MS = 250;
const PROXY_TIMEOUT_MS = 15000;
const LOAD_TIMEOUT_MS = 30000;
const MAX_QUEUE = 1000;
const TRACE_SIZE = 300;
const LOG_SIZE = 100;
const LOGS_TO_BACKEND_PER_SECOND = 20;
const MAX_ID_LENGTH = 200;

/** A host→App request that failed: the App's JSON-RPC error, a timeout or the frame closing. */
export class AppRequestError extends Error {
  /** @param {string} message @param {number} code @param {unknown} [data] */
  constructor(message, code, data) {
    super(message);
    this.name = "AppRequestError";
    this.code = code;
    this.data = data;
  }
}

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** @param {unknown} id */
function validId(id) {
  return (typeof id === "string" && id.length <= MAX_ID_LENGTH) || (typeof id === "number" && Number.isFinite(id));
}

/**
 * What a postMessage payload is. Non-JSON-RPC data is "ignore" (silently dropped, ext-apps #448);
 * JSON-RPC-looking data with a bad shape is "malformed" (reported).
 * @param {any} msg
 * @returns {{kind: "ignore" | "request" | "notification" | "response"} | {kind: "malformed", reason: string}}
 */
export function classify(msg) {
  if (!msg || typeof msg !== "object" || Array.isArray(msg) || msg.jsonrpc !== "2.0") return { kind: "ignore" };
  const hasParams = "params" in msg && msg.params !== undefined;
  if ("method" in msg) {
    if (typeof msg.method !== "string" || !msg.method || msg.method.length > 200) {
      return { kind: "malformed", reason: "method is not a non-empty string" };
    }
    if (hasParams && (msg.params === null || typeof msg.params !== "object" || Array.isArray(msg.params))) {
      return { kind: "malformed", reason: `params of ${msg.method} is not an object` };
    }
    if ("id" in msg && msg.id !== undefined) {
      return validId(msg.id) ? { kind: "request" } : { kind: "malformed", reason: "request id is not a string or number" };
    }
    return { kind: "notification" };
  }
  if ("id" in msg && ("result" in msg) !== ("error" in msg)) {
    if ("error" in msg && (!msg.error || typeof msg.error !== "object")) {
      return { kind: "malformed", reason: "error response without an error object" };
    }
    return { kind: "response" };
  }
  return { kind: "malformed", reason: "neither a request, a notification nor a response" };
}

/** A short text for logs and reports. @param {unknown} value */
function short(value, max = 300) {
  let text;
  try { text = typeof value === "string" ? value : JSON.stringify(value); } catch { text = String(value); }
  text = String(text ?? "");
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * @typedef {object} BridgeOptions
 * @property {import("../rpc.js").RpcClient} rpc
 * @property {import("./stage.js").Stage} stage
 * @property {Record<string, unknown>} [toolInput] arguments of the tool call (tool frames)
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
  /** @type {{ts: number, level: string, logger?: string, text: string}[]} */
  logs = [];
  /** @type {{ts: number, kind: string, summary: string, count?: number}[]} */
  problems = [];
  /** Recent traffic, newest last: {ts, dir: "in" | "out", msg}. @type {{ts: number, dir: string, msg: any}[]} */
  trace = [];
  /** @type {string | null} */
  closeReason = null;
  /** Whether the frame was in the document when it started loading (a later removal kills it). */
  startedConnected = false;
  /** Whether the App opened in a warm proxy frame (warm-frames.js). */
  warm = false;

  #rpc;
  #rate = new RateWindow(MAX_MESSAGES_PER_SECOND);
  #logRate = new RateWindow(LOGS_TO_BACKEND_PER_SECOND);
  #reporter;
  #cspReporter;
  #proxyReady = false;
  /** @type {any[]} */
  #queue = [];
  #nextId = 1;
  /** @type {Map<number, {resolve: (v: any) => void, reject: (e: Error) => void, timer: ReturnType<typeof setTimeout>, method: string}>} */
  #pending = new Map();
  #inFlight = 0;
  /** App request ids relayed to the backend and not answered yet (for notifications/cancelled). @type {Set<string | number>} */
  #relayed = new Set();
  /** Why the frame's server cannot serve requests (status error/disconnected), or null. @type {string | null} */
  serverDown = null;
  /** @type {Record<string, unknown> | null} */
  #lastContext = null;
  /** @type {ReturnType<typeof themeContext> | null} */
  #themeCtx = null;
  #toolInput;
  /** @type {{kind: "result", value: any} | {kind: "cancelled", reason: string} | null} */
  #toolOutcome = null;
  #toolInputSent = false;
  #toolOutcomeSent = false;
  /** @type {(() => void)[]} */
  #cleanups = [];
  /** @type {Set<ReturnType<typeof setTimeout>>} */
  #timers = new Set();
  /** @type {Promise<void> | null} */
  #teardown = null;
  #earlyLogged = new Set();
  #problemQueued = false;
  /** @type {import("./warm-frames.js").WarmFrames | null} */
  #warmFrames;
  /** The frame this App was prepared in, until start() adopts or drops it. @type {import("./warm-frames.js").TakenApp | null} */
  #prepared;
  /** Whether the App was prepared before its open (its frame adopted with the App already booted). */
  prepared = false;

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
    this.#toolInput = options.toolInput && typeof options.toolInput === "object" ? options.toolInput : {};
    this.#warmFrames = options.warmFrames ?? null;
    this.#prepared = options.prepared ?? null;
    this.iframe = createAppIframe(descriptor);
    this.#reporter = new Reporter((detail) => this.#event("violation", detail));
    this.#cspReporter = new Reporter((detail) => this.#event("csp-violation", detail), { quietMs: 2000, maxReports: 20 });
  }

  /** Insert the frame into the stage and load the proxy: the listener is attached first. */
  start() {
    if (this.phase !== "new") return;
    this.phase = "loading";
    window.addEventListener("message", this.#onMessage);
    this.#cleanups.push(() => window.removeEventListener("message", this.#onMessage));
    this.#cleanups.push(onThemeChange(() => {
      this.#themeCtx = null;
      this.#syncContext();
    }));
    const onLayout = () => this.#syncContext();
    this.stage.addEventListener("layout", onLayout);
    this.#cleanups.push(() => this.stage.removeEventListener("layout", onLayout));
    if (!this.#startWarm()) {
      this.iframe.src = this.descriptor.proxyUrl;
      this.stage.mount(this.iframe);
    }
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

  /**
   * Take a warm proxy frame of this App's origin, if one is ready and the App may open in it; its
   * proxy already said ready, so the App's HTML goes out at once. False: open cold.
   */
  #startWarm() {
    const d = this.descriptor;
    const prepared = this.#prepared;
    this.#prepared = null;
    if (prepared && (d.prepared !== true || !warmEligible(d) || !this.stage.box.isConnected)) prepared.discard();
    else if (prepared) return this.#startPrepared(prepared);
    if (!this.#warmFrames || !warmEligible(d) || !this.stage.box.isConnected) return false;
    const frame = this.#warmFrames.take(d.origin);
    if (!frame) return false;
    try {
      this.stage.mount(decorateAppIframe(frame, d), { move: true });
    } catch {
      frame.remove();  // it cannot move without reloading: never used
      return false;
    }
    this.iframe = frame;
    this.warm = true;
    this.#pushTrace("local", { method: "webhost/warm-frame", params: { serial: frame.dataset.warmFrame } });
    this.#proxyReady = true;
    // The App's own document first (a small message), so its request overlaps the HTML's transfer.
    this.#post({ jsonrpc: "2.0", method: "ui/notifications/sandbox-webhost-app-document",
      params: { appUrl: d.appUrl, sandbox: d.sandbox } });
    this.#sendResource();
    return true;
  }

  /**
   * Adopt the frame this App was prepared in (warm-frames.js): its App already booted there, and what it
   * sent meanwhile (its `ui/initialize`, at least) is handled now, as if it had just arrived.
   * @param {import("./warm-frames.js").TakenApp} prepared
   */
  #startPrepared(prepared) {
    const d = this.descriptor;
    const frame = prepared.iframe;
    try {
      this.stage.mount(decorateAppIframe(frame, d), { move: true });
    } catch {
      prepared.discard();  // it cannot move without reloading: never used
      return false;
    }
    this.iframe = frame;
    this.warm = true;
    this.prepared = true;
    this.#proxyReady = true;
    this.#pushTrace("local", { method: "webhost/prepared-frame", params: { serial: frame.dataset.warmFrame } });
    const held = prepared.claim() ?? [];
    for (const msg of held) this.#receive(msg);
    return true;
  }

  /** The tool call finished. @param {any} result a CallToolResult */
  setToolResult(result) {
    if (this.#toolOutcome) return;
    this.#toolOutcome = { kind: "result", value: result };
    this.#sendToolOutcome();
  }

  /** The tool call failed or was cancelled. @param {string} reason */
  setToolCancelled(reason) {
    if (this.#toolOutcome) return;
    this.#toolOutcome = { kind: "cancelled", reason: String(reason || "cancelled") };
    this.#sendToolOutcome();
  }

  /** Backend progress for an App-initiated tools/call (`apps/progress`). @param {any} p */
  progress(p) {
    if (!p || (typeof p.progressToken !== "string" && typeof p.progressToken !== "number")) return;
    /** @type {Record<string, unknown>} */
    const params = { progressToken: p.progressToken, progress: Number(p.progress) || 0 };
    if (typeof p.total === "number") params.total = p.total;
    if (typeof p.message === "string") params.message = p.message;
    this.#send({ jsonrpc: "2.0", method: "notifications/progress", params });
  }

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
    if (reason) this.#lifecycle(`server ${status}`, { status });
    this.dispatchEvent(new Event("serverstatus"));
  }

  /**
   * The server's tools or resources changed (`list/changed`): forward it to the App when its
   * hostCapabilities promised listChanged for that list (queued until it is initialized).
   * @param {string} list "tools" | "resources" | "prompts"
   */
  listChanged(list) {
    const caps = /** @type {any} */ (this.descriptor.hostCapabilities ?? {});
    if (list === "tools" && caps.serverTools?.listChanged === true) {
      this.#send({ jsonrpc: "2.0", method: "notifications/tools/list_changed", params: {} });
    } else if (list === "resources" && caps.serverResources?.listChanged === true) {
      this.#send({ jsonrpc: "2.0", method: "notifications/resources/list_changed", params: {} });
    }
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
      this.#event("display-mode", { summary: `${current} → ${mode} (${source})`, from: current, to: mode, source });
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
    if (this.phase === "closed") return Promise.reject(new AppRequestError("the app is closed", ERRORS.CANCELLED));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new AppRequestError(`the app did not answer ${method} within ${timeoutMs} ms`, ERRORS.UPSTREAM_TIMEOUT));
      }, timeoutMs);
      this.#pending.set(id, { resolve, reject, timer, method });
      this.#send({ jsonrpc: "2.0", id, method, params });
    });
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
      let outcome = "not initialized: removed without a request";
      if (this.initialized && this.iframe.isConnected) {
        // Sent directly, never queued: the App is initialized. params is {} (the schema is closed).
        const answer = this.requestApp("ui/resource-teardown", {}, TEARDOWN_WAIT_MS);
        try {
          await answer;
          outcome = "answered";
        } catch (err) {
          outcome = err instanceof AppRequestError && err.code === ERRORS.UPSTREAM_TIMEOUT ? `no answer within ${TEARDOWN_WAIT_MS} ms` : `error: ${short(/** @type {Error} */ (err).message, 120)}`;
        }
        await sleep(TEARDOWN_GRACE_MS); // an App's last save may still be in flight
      }
      this.#lifecycle(`teardown (${reason}): ${outcome}`, { reason, outcome });
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
    if (this.initialized && this.iframe.isConnected) {
      this.#post({ jsonrpc: "2.0", id: this.#nextId++, method: "ui/resource-teardown", params: {} });
    }
    this.#destroy(reason);
  }

  // -- inbound ---------------------------------------------------------------------------------

  #onMessage = (/** @type {MessageEvent} */ event) => {
    if (this.phase === "closed") return;
    const win = this.iframe.contentWindow;
    if (!win || event.source !== win || event.origin !== this.descriptor.origin) {
      if (win && event.origin === this.descriptor.origin && this.#isInside(event.source, win)) {
        this.#violation("bypassed-proxy", "a message from inside the app bypassed its sandbox proxy (dropped)");
      }
      return;
    }
    this.#receive(event.data);
  };

  /** One message from the App's frame (already known to come from it), live or held while it was prepared. @param {any} msg */
  #receive(msg) {
    if (this.phase === "closed") return;
    if (!this.#rate.take()) {
      this.#violation("flood", `more than ${MAX_MESSAGES_PER_SECOND} messages per second; excess dropped`,
        { dropped: this.#rate.dropped });
      // A dropped request still gets an answer at once, so the App never waits for a timeout.
      if (msg && typeof msg === "object" && msg.jsonrpc === "2.0" && typeof msg.method === "string" && validId(msg.id)) {
        this.#respondError(msg.id, ERRORS.UPSTREAM_ERROR,
          `Rate limit: more than ${MAX_MESSAGES_PER_SECOND} messages per second from this app; request dropped`);
      }
      return;
    }
    const kind = classify(msg);
    if (kind.kind === "ignore") return;
    if (kind.kind === "malformed") {
      this.#violation("malformed", `malformed JSON-RPC from the app: ${kind.reason}`);
      if (validId(msg.id)) this.#respondError(msg.id, ERRORS.INVALID_REQUEST, `Invalid Request: ${kind.reason}`);
      return;
    }
    this.#traceIn(msg);
    try {
      if (kind.kind === "request") this.#onRequest(msg);
      else if (kind.kind === "notification") this.#onNotification(msg);
      else this.#onResponse(msg);
    } catch (err) {
      console.warn("webhost apps: handling an app message failed", err);
      if (kind.kind === "request") this.#respondError(msg.id, ERRORS.INTERNAL_ERROR, "Internal error in the host");
    }
  }

  /** Is `source` a window nested inside our frame (the App posting to the top directly)? */
  #isInside(/** @type {MessageEventSource | null} */ source, /** @type {Window} */ win) {
    try {
      let w = /** @type {Window | null} */ (source);
      for (let i = 0; i < 4 && w; i++) {
        if (w === win) return true;
        if (w === w.parent) return false;
        w = w.parent;
      }
    } catch { /* cross-origin access beyond parent: not ours */ }
    return false;
  }

  /** @param {any} msg */
  #onRequest(msg) {
    const { id, method } = msg;
    const params = msg.params ?? {};
    if (!this.initialized && !BEFORE_INITIALIZED.has(method)) {
      // Refused, never run: nothing but the handshake (and ping) before ui/notifications/initialized.
      if (!this.#earlyLogged.has(method)) {
        this.#earlyLogged.add(method);
        console.info(`webhost apps: ${this.frameId} sent ${method} before ui/notifications/initialized (refused)`);
        this.#lifecycle(`request before initialized: ${method}`, { method });
      }
      this.#respondError(id, ERRORS.INVALID_REQUEST,
        `${method} refused: the app sent it before ui/notifications/initialized`);
      return;
    }
    if (method === "ui/initialize" || method === "initialize") return this.#answerInitialize(id, params);
    if (method === "ping") return this.#respond(id, {});
    if (method === "ui/request-display-mode") {
      const mode = this.setDisplayMode(params.mode, "app");
      this.#respond(id, { mode });
      this.#syncContext();
      return;
    }
    if (RELAYED.has(method)) return this.#relay(id, method, params);
    this.#respondError(id, ERRORS.METHOD_NOT_FOUND, `Method not found: ${method}`);
  }

  /** @param {string | number} id @param {any} params */
  #answerInitialize(id, params) {
    this.initializeCount += 1;
    if (this.initializeCount > 1) {
      // React StrictMode double mounts do this (ext-apps #450): answer again, overwrite, log.
      console.warn(`webhost apps: ${this.frameId} sent ui/initialize again (#${this.initializeCount})`);
      this.#lifecycle(`repeated ui/initialize (#${this.initializeCount})`, {});
    }
    this.appInfo = params.appInfo ?? params.clientInfo ?? null;
    const caps = params.appCapabilities ?? params.capabilities;
    this.appCapabilities = caps && typeof caps === "object" && !Array.isArray(caps) ? caps : {};
    this.appProtocolVersion = typeof params.protocolVersion === "string" ? params.protocolVersion : null;
    const hostContext = this.#currentContext();
    this.#lastContext = hostContext;
    const d = this.descriptor;
    this.#respond(id, {
      protocolVersion: PROTOCOL_VERSION,
      hostInfo: d.hostInfo && typeof d.hostInfo.name === "string" ? d.hostInfo : { name: "webhost", version: "0" },
      hostCapabilities: d.hostCapabilities && typeof d.hostCapabilities === "object" ? d.hostCapabilities : {},
      hostContext,
    });
    this.dispatchEvent(new Event("appinfo"));
  }

  /** @param {any} msg */
  #onNotification(msg) {
    const { method } = msg;
    const params = msg.params ?? {};
    if (PROXY_READY.has(method)) {
      if (this.#proxyReady) {
        this.#violation("sandbox-message", `a second ${method} from the frame (dropped)`, { method });
        return;
      }
      this.#proxyReady = true;
      this.#sendResource();
      return;
    }
    if (method === CSP_VIOLATION) return this.#onCspViolation(params);
    if (method === DROPPED) {
      // The proxy dropped a reserved message the app sent; advisory (the app shares the proxy's realm).
      const forged = String(params?.method ?? "?").slice(0, 200);
      this.#violation("sandbox-message", `the app sent reserved ${forged} (dropped by the proxy)`, { method: forged });
      return;
    }
    if (method.startsWith("ui/notifications/sandbox-") || method.startsWith("ui/sandbox-")) {
      this.#violation("sandbox-message", `reserved sandbox message ${method} from the frame (dropped)`, { method });
      return;
    }
    if (method === "ui/notifications/initialized") return this.#onInitialized();
    if (SIZE_CHANGED.has(method)) {
      if (this.stage.reportHeight(params.height)) this.dispatchEvent(new Event("size"));
      return;
    }
    if (method === "notifications/message") return this.#onLog(params);
    if (method === "ui/notifications/request-teardown") {
      this.#lifecycle("the app asked to be torn down", {});
      this.dispatchEvent(new Event("teardownrequest"));
      void this.teardown("requested by the app");
      return;
    }
    if (method === "notifications/cancelled") return this.#onCancelled(params);
    if (IGNORED_NOTIFICATIONS.has(method)) return;
    // Unknown notifications are allowed by JSON-RPC; they stay in the trace only.
  }

  /** The App cancelled one of its requests: cancel the backend's work for it. @param {any} params */
  #onCancelled(params) {
    const requestId = params?.requestId;
    if (!validId(requestId) || !this.#relayed.has(requestId)) return;
    this.#rpc.request("apps/cancel", { frameId: this.frameId, requestId }).catch(() => { /* already finished */ });
  }

  /** @param {any} msg */
  #onResponse(msg) {
    const entry = typeof msg.id === "number" ? this.#pending.get(msg.id) : undefined;
    if (!entry) {
      this.#violation("unexpected-response", "a response to a request the host never sent (dropped)");
      return;
    }
    this.#pending.delete(msg.id);
    clearTimeout(entry.timer);
    if ("error" in msg) {
      const e = msg.error;
      entry.reject(new AppRequestError(short(e.message ?? "error", 500), Number(e.code) || ERRORS.INTERNAL_ERROR, e.data));
    } else {
      entry.resolve(msg.result);
    }
  }

  #onInitialized() {
    if (this.initialized) {
      this.#lifecycle("repeated ui/notifications/initialized (ignored)", {});
      return;
    }
    this.initialized = true;
    this.phase = this.phase === "closing" ? "closing" : "ready";
    this.#setStatus("ready", "");
    if (this.purpose === "tool") {
      this.#post({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: this.#toolInput } });
      this.#toolInputSent = true;
      this.#sendToolOutcome();
    }
    const queued = this.#queue;
    this.#queue = [];
    for (const msg of queued) this.#post(msg);
    this.#syncContext();
    this.#lifecycle("initialized", { appInfo: this.appInfo, protocolVersion: this.appProtocolVersion });
    this.dispatchEvent(new Event("ready"));
  }

  /** @param {any} params */
  #onLog(params) {
    const level = typeof params.level === "string" ? params.level.slice(0, 20) : "info";
    const logger = typeof params.logger === "string" ? params.logger.slice(0, 100) : undefined;
    const text = short(params.data, 2000);
    this.logs.push({ ts: Date.now(), level, logger, text });
    if (this.logs.length > LOG_SIZE) this.logs.splice(0, this.logs.length - LOG_SIZE);
    this.dispatchEvent(new Event("log"));
    if (!this.#logRate.take()) {
      this.#violation("log-flood", `more than ${LOGS_TO_BACKEND_PER_SECOND} log messages per second; excess not forwarded`);
      return;
    }
    this.#event("log", { summary: `[${level}] ${logger ? `${logger}: ` : ""}${short(text, 240)}`, level, logger,
      data: short(params.data, 4000) });
  }

  /** @param {any} params */
  #onCspViolation(params) {
    const blocked = short(params.blockedURI ?? "", 300);
    const directive = short(params.effectiveDirective ?? params.violatedDirective ?? "", 80);
    const summary = `CSP blocked ${blocked || "an inline resource"} (${directive})`;
    this.#noteProblem("csp", summary);
    this.#cspReporter.report(`${directive} ${blocked}`, {
      summary, blockedURI: blocked, effectiveDirective: directive,
      sourceFile: short(params.sourceFile ?? "", 300), lineNumber: Number(params.lineNumber) || 0,
    });
  }

  // -- App requests relayed to the backend -------------------------------------------------------

  /** @param {string | number} id @param {string} method @param {Record<string, unknown>} params */
  #relay(id, method, params) {
    if (this.#inFlight >= MAX_IN_FLIGHT) {
      this.#violation("in-flight", `more than ${MAX_IN_FLIGHT} app requests in flight; excess refused`);
      this.#respondError(id, ERRORS.UPSTREAM_ERROR, `Too many requests in flight from this app (limit ${MAX_IN_FLIGHT})`);
      return;
    }
    if (this.serverDown !== null) {
      this.#respondError(id, ERRORS.NOT_CONNECTED, `${method} failed: ${this.serverDown}`);
      return;
    }
    const duplicate = this.#relayed.has(id);
    this.#inFlight += 1;
    if (!duplicate) this.#relayed.add(id);
    /** @type {Record<string, unknown>} */
    const request = { frameId: this.frameId, method, params };
    if (!duplicate) request.requestId = id;
    this.#rpc.request("apps/request", request)
      .then((result) => this.#respond(id, this.#afterRelay(method, result)))
      .catch((err) => {
        const code = typeof err?.code === "number" ? err.code : ERRORS.INTERNAL_ERROR;
        this.#respondError(id, code, short(err?.message ?? "request failed", 500));
      })
      .finally(() => {
        this.#inFlight -= 1;
        if (!duplicate) this.#relayed.delete(id);
      });
  }

  /** What the App gets for a relayed request's backend answer. @param {string} method @param {any} result */
  #afterRelay(method, result) {
    if (method === "ui/open-link") return this.#openLink(result);
    if (method === "ui/download-file") return this.#download(result);
    return result;
  }

  /**
   * The person consented and the backend checked the files ({files: [{name, size, blob}]}): save each
   * as a download. The Blob is always application/octet-stream, so its URL never renders as a document.
   * @param {any} result
   */
  #download(result) {
    const files = Array.isArray(result?.files) ? result.files : [];
    let saved = 0;
    for (const file of files) {
      if (!file || typeof file.blob !== "string") continue;
      let bytes;
      try {
        const bin = atob(file.blob);
        bytes = new Uint8Array(bin.length);
        for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      } catch { continue; }
      const name = String(file.name ?? "download.bin").replace(/[^\w.-]+/g, "_").slice(0, 120) || "download.bin";
      const url = URL.createObjectURL(new Blob([bytes], { type: "application/octet-stream" }));
      const a = document.createElement("a");
      a.href = url;
      a.download = name;
      a.rel = "noopener";
      a.dataset.appDownload = name;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 30_000);
      saved += 1;
      this.dispatchEvent(new CustomEvent("downloaded", { detail: { name, size: bytes.length } }));
    }
    if (!saved) return { isError: true };
    return {};
  }

  /** The backend consented ({open: true, url}); re-check the scheme and open it. @param {any} result */
  #openLink(result) {
    const url = result && result.open === true && typeof result.url === "string" ? result.url : null;
    if (!url) throw Object.assign(new Error("Link opening denied"), { code: ERRORS.UPSTREAM_ERROR });
    let parsed;
    try { parsed = new URL(url); } catch { throw Object.assign(new Error("Invalid URL"), { code: ERRORS.INVALID_PARAMS }); }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      throw Object.assign(new Error("only http and https links can be opened"), { code: ERRORS.POLICY_REFUSED });
    }
    if (parsed.username || parsed.password) {
      // https://trusted.example@evil.example/ reads as the trusted site: never open those.
      throw Object.assign(new Error("links with embedded credentials are not opened"), { code: ERRORS.POLICY_REFUSED });
    }
    window.open(parsed.href, "_blank", "noopener,noreferrer");
    this.dispatchEvent(new CustomEvent("linkopened", { detail: { url: parsed.href } }));
    return {};
  }

  // -- outbound --------------------------------------------------------------------------------

  #sendResource() {
    const d = this.descriptor;
    /** @type {Record<string, unknown>} */
    const params = { html: d.html };
    if (d.csp && typeof d.csp === "object") params.csp = d.csp;
    if (d.permissions && typeof d.permissions === "object") params.permissions = d.permissions;
    if (typeof d.sandbox === "string") params.sandbox = d.sandbox;
    if (this.warm) params.appUrl = d.appUrl;  // a warm proxy loads the App's own document from here
    this.#post({ jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-ready", params });
  }

  #sendToolOutcome() {
    const outcome = this.#toolOutcome;
    if (!outcome || !this.#toolInputSent || this.#toolOutcomeSent || this.phase === "closed") return;
    this.#toolOutcomeSent = true;
    if (outcome.kind === "result") {
      this.#post({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: outcome.value ?? { content: [] } });
    } else {
      this.#post({ jsonrpc: "2.0", method: "ui/notifications/tool-cancelled", params: { reason: outcome.reason } });
    }
  }

  #currentContext() {
    if (!this.#themeCtx) this.#themeCtx = themeContext();
    return buildHostContext({
      toolInfo: this.descriptor.toolInfo,
      version: this.descriptor.hostInfo?.version,
      displayMode: this.stage.mode,
      availableDisplayModes: this.stage.availableModes(),
      containerDimensions: this.stage.containerDimensions(),
    }, this.#themeCtx);
  }

  /** Send the changed context keys, once the App is initialized. */
  #syncContext() {
    if (!this.initialized || this.phase === "closed") return;
    const ctx = this.#currentContext();
    const diff = contextDiff(this.#lastContext, ctx);
    this.#lastContext = ctx;
    if (Object.keys(diff).length) this.#post({ jsonrpc: "2.0", method: "ui/notifications/host-context-changed", params: diff });
  }

  /** Host→App traffic: held back until ui/notifications/initialized. @param {any} msg */
  #send(msg) {
    if (this.phase === "closed") return;
    if (!this.initialized) {
      if (this.#queue.length >= MAX_QUEUE) this.#queue.shift();
      this.#queue.push(msg);
      return;
    }
    this.#post(msg);
  }

  /** @param {string | number} id @param {unknown} result */
  #respond(id, result) {
    this.#post({ jsonrpc: "2.0", id, result });
  }

  /** @param {string | number} id @param {number} code @param {string} message */
  #respondError(id, code, message) {
    this.#post({ jsonrpc: "2.0", id, error: { code, message } });
  }

  /** @param {any} msg */
  #post(msg) {
    if (this.phase === "closed") return;
    const win = this.iframe.contentWindow;
    if (!win) return;
    try {
      win.postMessage(msg, this.descriptor.origin); // never "*"
    } catch (err) {
      console.warn("webhost apps: could not post to the app", err);
      return;
    }
    this.#traceOut(msg);
  }

  // -- bookkeeping -----------------------------------------------------------------------------

  /** @param {any} msg */
  #traceIn(msg) { this.#pushTrace("in", msg); }

  /** @param {any} msg */
  #traceOut(msg) {
    if (msg.method === "ui/notifications/sandbox-resource-ready") {
      msg = { ...msg, params: { ...msg.params, html: `[${msg.params.html.length} characters]` } };
    }
    this.#pushTrace("out", msg);
  }

  /** @param {string} dir @param {any} msg */
  #pushTrace(dir, msg) {
    this.trace.push({ ts: Date.now(), dir, msg });
    if (this.trace.length > TRACE_SIZE) this.trace.splice(0, this.trace.length - TRACE_SIZE);
  }

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
    this.#event("error", { summary: message });
  }

  /** @param {string} key @param {string} summary @param {Record<string, unknown>} [extra] */
  #violation(key, summary, extra = {}) {
    this.#noteProblem(key, summary);
    this.#reporter.report(key, { summary, reason: key, ...extra });
  }

  /** Keep a short local list for the Info view; repeats of the last kind are counted, not added. @param {string} kind @param {string} summary */
  #noteProblem(kind, summary) {
    const last = this.problems[this.problems.length - 1];
    if (last && last.kind === kind && last.summary.startsWith(summary)) {
      last.count = (last.count ?? 1) + 1;
      last.summary = `${summary} (×${last.count})`;
      last.ts = Date.now();
    } else {
      this.problems.push({ ts: Date.now(), kind, summary, count: 1 });
      if (this.problems.length > LOG_SIZE) this.problems.shift();
    }
    if (this.#problemQueued) return;
    this.#problemQueued = true;
    this.#later(250, () => {
      this.#problemQueued = false;
      this.dispatchEvent(new Event("problem"));
    });
  }

  /** @param {string} summary @param {Record<string, unknown>} detail */
  #lifecycle(summary, detail) {
    this.#event("lifecycle", { summary, ...detail });
  }

  /** Report to the backend (activity and audit logs); never awaited, never throws. @param {string} kind @param {Record<string, unknown>} detail */
  #event(kind, detail) {
    if (this.closeReason !== null && kind !== "lifecycle") return;
    this.#rpc.request("apps/event", { frameId: this.frameId, kind, detail }).catch(() => { /* closed or offline */ });
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
    this.#reporter.close();
    this.#cspReporter.close();
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) {
      clearTimeout(p.timer);
      p.reject(new AppRequestError(`the app was closed (${reason})`, ERRORS.CANCELLED));
    }
    this.#queue = [];
    this.stage.destroy();
    this.iframe.remove();
    this.#rpc.request("apps/close", { frameId: this.frameId, reason: reason.slice(0, 100) }).catch(() => { /* session gone */ });
    this.dispatchEvent(new Event("status"));
    this.dispatchEvent(new Event("closed"));
  }
}
