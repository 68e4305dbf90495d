// @ts-check
// The page's entry to MCP Apps: createApps({rpc, limits}) returns the object the page's
// components use to show apps (main.js creates one and hands it to them). Importing this module
// does nothing; createApps adds the apps stylesheet and the pagehide teardown.
//
//   apps.openToolApp({server, tool, args, callId, resultPromise, container}) → Promise<AppHandle>
//   apps.openChatApp({server, tool, resourceUri, conversationId, callId, container, args}) → Promise<ChatAppHandle>
//   apps.warm(server, toolName) → void   read the tool's ui:// resource ahead of the next open (apps/warm),
//                                        and keep a warm proxy frame ready on the server's origin
//   apps.mountElicitation(container, request, {fallbackToForm?, descriptor?, onResult?}) → Promise<AppHandle | null>
//   apps.unmountElicitation(requestId, reason?) → Promise<void>
//   apps.release(element, reason?) → Promise<void>   tear down every app inside element
//   apps.list() → AppHandle[]      apps.get(frameId) → AppHandle | null
//   apps.close(frameId, reason?) → Promise<void>
//   apps.onChange(listener) → unsubscribe

import { AppPanel } from "./panel.js";
import { mountElicitationFrame } from "./elicitation.js";
import { ERRORS } from "../constants.js";
import { CAN_MOVE, WarmFrames } from "./warm-frames.js";

/**
 * @typedef {object} AppHandle
 * @property {string | null} frameId
 * @property {string} server
 * @property {string} resourceUri
 * @property {"tool" | "elicitation"} purpose
 * @property {string | null} tool
 * @property {string} status "loading" | "ready" | "error" | "closing" | "closed"
 * @property {string} statusMessage
 * @property {string} displayMode
 * @property {any} appInfo
 * @property {HTMLElement} element the [data-app-panel]
 * @property {() => void} focus
 * @property {(reason?: string) => Promise<void>} close
 * @property {() => Promise<void>} reopen
 * @property {(mode: "inline" | "fullscreen" | "pip") => string} setDisplayMode
 */

/**
 * An App opened at a tool call the model made (the chat): it is told the arguments while the model writes
 * them, then once whole, then the outcome.
 * @typedef {object} ChatAppHandle
 * @property {string | null} frameId
 * @property {HTMLElement} element
 * @property {(partial: Record<string, unknown>) => void} partialInput
 * @property {(input: Record<string, unknown>) => void} toolInput
 * @property {(result: any) => void} toolResult
 * @property {(reason: string) => void} toolCancelled
 */

/**
 * What the backend's configuration says about waiting (session/info `limits`).
 * @typedef {{humanTimeoutSeconds: number, callTimeoutSeconds: number, appHandshakeTimeoutSeconds: number}} Limits
 */

/** The last bridges seen, closed ones included, kept for debug.trace() after a frame is gone. */
const RECENT_MAX = 50;

/** @param {unknown} err */
function cancelReason(err) {
  const e = /** @type {any} */ (err);
  if (e?.code === ERRORS.CANCELLED) return "cancelled";
  const message = e instanceof Error ? e.message : String(e ?? "failed");
  return `error${typeof e?.code === "number" ? ` ${e.code}` : ""}: ${message}`.slice(0, 500);
}

/** @param {AppPanel} panel @returns {AppHandle} */
function handle(panel) {
  return {
    frameId: panel.frameId,
    server: panel.server,
    resourceUri: panel.resourceUri,
    purpose: panel.purpose,
    tool: panel.toolName || null,
    status: panel.status,
    statusMessage: panel.statusMessage,
    displayMode: panel.bridge?.stage.mode ?? "inline",
    appInfo: panel.bridge?.appInfo ?? null,
    element: panel.el,
    focus: () => panel.focus(),
    close: (reason) => panel.close(reason ?? "closed by the person"),
    reopen: () => panel.reopen(),
    setDisplayMode: (mode) => panel.bridge?.setDisplayMode(mode, "user") ?? "inline",
  };
}

function installStylesheet() {
  const href = new URL("./apps.css", import.meta.url).href;
  if (document.querySelector(`link[data-webhost-apps-css]`)) return;
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = href;
  link.dataset.webhostAppsCss = "";
  document.head.append(link);
}

/**
 * The MCP Apps host side of one page, bound to its RPC client.
 * @param {{rpc: import("../rpc.js").RpcClient, limits: () => Limits}} host
 */
export function createApps({ rpc, limits }) {
  /** @type {Set<AppPanel>} */
  const panels = new Set();
  const warmFrames = new WarmFrames();
  /** The latest panel of each tool ("server\ntool"): a re-run retires it. @type {Map<string, AppPanel>} */
  const byTool = new Map();
  /** @type {Map<string, {panel: AppPanel | null, unmount: (reason: string) => Promise<void>}>} */
  const elicitations = new Map();
  /** @type {Set<(apps: AppHandle[]) => void>} */
  const listeners = new Set();
  /** @type {MutationObserver | null} */
  let observer = null;
  /** @type {Map<string, import("./bridge.js").AppBridge>} */
  const recent = new Map();
  /** Frames that have been in the document (a detached one is dead: its browsing context is gone). */
  const seenConnected = new WeakSet();
  let changeQueued = false;

  rpc.on("apps/progress", (p) => findByFrame(String(p?.frameId))?.bridge?.progress(p));
  rpc.on("apps/conversation", (p) => findByFrame(String(p?.frameId))?.updateConversation(p));
  /** Each server's last status (`servers/status`), given to every panel of that server. @type {Map<string, {status: string, error: string | null}>} */
  const serverStates = new Map();
  rpc.on("servers/status", (p) => {
    const name = p?.server?.name;
    if (typeof name !== "string") return;
    const state = { status: String(p.server.status ?? ""), error: typeof p.server.error === "string" ? p.server.error : null };
    serverStates.set(name, state);
    for (const panel of panels) if (panel.server === name) panel.setServerStatus(state.status, state.error);
  });
  // A server's tools or resources changed: its open app frames are told (when promised listChanged).
  rpc.on("list/changed", (p) => {
    for (const panel of panels) if (panel.server === p?.server) panel.bridge?.listChanged(String(p?.list));
  });
  let previous = rpc.state;
  rpc.onState((state) => {
    // A new socket is a new backend session: every open frame lost its backend instance.
    if (previous === "open" && state !== "open") {
      for (const panel of panels) {
        if (panel.bridge && panel.bridge.phase !== "closed") void panel.close("connection to webhost lost");
      }
    }
    previous = state;
  });
  installStylesheet();
  // Leaving the page: every App gets ui/resource-teardown (no wait is possible) and the backend apps/close.
  window.addEventListener("pagehide", () => {
    for (const panel of panels) panel.bridge?.abandon("the page was closed");
  });

  /** @param {string} frameId */
  function findByFrame(frameId) {
    for (const panel of panels) if (panel.frameId === frameId) return panel;
    return null;
  }

  /** @param {AppPanel} panel */
  function track(panel) {
    panels.add(panel);
    const state = serverStates.get(panel.server);
    if (state) panel.setServerStatus(state.status, state.error);
    watchDocument();
    changed();
  }

  function changed() {
    if (changeQueued) return;
    changeQueued = true;
    queueMicrotask(() => {
      changeQueued = false;
      for (const panel of [...panels]) {
        const bridge = panel.bridge;
        if (bridge && !recent.has(bridge.frameId)) {
          recent.set(bridge.frameId, bridge);
          if (recent.size > RECENT_MAX) recent.delete(/** @type {string} */ (recent.keys().next().value));
        }
        if (panel.status === "closed" && !panel.el.isConnected) panels.delete(panel);
      }
      const apps = list();
      for (const l of listeners) {
        try { l(apps); } catch (err) { console.warn("webhost apps: change listener failed", err); }
      }
    });
  }

  /** Notice frames that left the document (a page re-render): they are gone, so clean up. */
  function watchDocument() {
    if (observer) return;
    observer = new MutationObserver(() => {
      for (const panel of panels) {
        const bridge = panel.bridge;
        if (!bridge || bridge.phase === "closed" || bridge.phase === "new") continue;
        if (bridge.iframe.isConnected) seenConnected.add(bridge.iframe);
        else if (bridge.startedConnected || seenConnected.has(bridge.iframe)) bridge.abandon("removed from the page");
      }
    });
    observer.observe(document.documentElement, { childList: true, subtree: true });
  }

  /**
   * Ask the backend to read a tool's app resource ahead of its next `apps/open` (docs/api.md
   * `apps/warm`). Fire and forget: a failed read ahead only means the open reads itself.
   * @param {string} server @param {string} toolName
   */
  function warm(server, toolName) {
    if (typeof server !== "string" || !server || typeof toolName !== "string" || !toolName) return;
    // The App's HTML comes with a preparable answer: asked for only where it can be used.
    const prepare = warmFrames.preparing && CAN_MOVE;
    const have = prepare ? warmFrames.preparedKey(server) : null;
    rpc.request("apps/warm", { server, tool: toolName, prepare, ...(have ? { have } : {}) }).then((answer) => {
      // When the page is idle, so a warm frame loading never competes with an App booting.
      const offer = () => {
        if (answer?.prepared?.unchanged === true) return;  // that App is prepared here already
        if (answer?.prepared) warmFrames.prepare(answer.frame, answer.prepared);
        else warmFrames.offer(answer?.frame);
      };
      if (typeof requestIdleCallback === "function") requestIdleCallback(offer, { timeout: 2000 });
      else setTimeout(offer, 200);
    }, () => {});
  }

  /**
   * The person called a tool that has an app: show it in `container`, in parallel with the call.
   * Resolves once the frame exists or the error is shown (never rejects for an app failure).
   * @param {{server: string, tool: any, args?: Record<string, unknown>, callId?: string,
   *   resultPromise?: Promise<any>, container: HTMLElement}} params
   * @returns {Promise<AppHandle>}
   */
  async function openToolApp(params) {
    const { server, tool, args, resultPromise, container } = params ?? /** @type {any} */ ({});
    if (!(container instanceof Element)) throw new Error("openToolApp needs a container element");
    const toolName = typeof tool === "string" ? tool : String(tool?.name ?? "");
    if (typeof server !== "string" || !server || !toolName) throw new Error("openToolApp needs a server and a tool");
    const resourceUri = String(tool?.webhost?.resourceUri ?? tool?._meta?.ui?.resourceUri ?? tool?._meta?.["ui/resourceUri"] ?? "");
    const key = `${server}\n${toolName}`;
    const previous = byTool.get(key);
    if (previous) void previous.retire("the tool was run again");
    // An App prepared ahead (warm-frames.js) is offered to the first open only; the backend says whether
    // it is still the App this open describes (`prepared: true`, the HTML left out), else it is dropped.
    let preparedFrame = warmFrames.takePrepared(server, resourceUri);
    /** @type {import("./warm-frames.js").TakenApp | null} */
    let adoptable = null;
    const open = async () => {
      const taken = preparedFrame;
      preparedFrame = null;
      let descriptor;
      try {
        descriptor = await rpc.request("apps/open", taken ? { server, tool: toolName, prepared: taken.key } : { server, tool: toolName });
      } catch (err) {
        taken?.discard();
        throw err;
      }
      // (A descriptor with HTML of its own is opened from that HTML: the prepared frame is not it.)
      if (taken && descriptor?.prepared === true && descriptor.html === "") {
        descriptor.html = taken.html;
        adoptable = taken;
      } else {
        taken?.discard();
      }
      return descriptor;
    };
    const panel = new AppPanel({
      rpc, server, resourceUri, purpose: "tool", toolName, args: args ?? {}, open,
      onChange: changed, warmFrames,
      prepared: () => { const t = adoptable; adoptable = null; return t; },
    });
    byTool.set(key, panel);
    container.append(panel.el);
    track(panel);
    if (resultPromise && typeof resultPromise.then === "function") {
      resultPromise.then((result) => panel.setToolResult(result), (err) => panel.setToolCancelled(cancelReason(err)));
    }
    await panel.load();
    /** @type {import("./warm-frames.js").TakenApp | null} */ (adoptable)?.discard();  // no bridge took it (the load failed)
    adoptable = null;
    warm(server, toolName); // the next run of this tool opens from a read made ahead
    changed();
    return handle(panel);
  }

  /**
   * The model called a tool that has an app (the chat): show it in `container`, bound to that call of that
   * conversation (the backend checks the call is the person's, and not waiting for their approval). `args`
   * null: the model is still writing them. Unlike openToolApp, another call of the same tool keeps its app.
   * @param {{server: string, tool: string, resourceUri: string, conversationId: string, callId: string,
   *   container: HTMLElement, args?: Record<string, unknown> | null}} params
   * @returns {Promise<ChatAppHandle>}
   */
  async function openChatApp(params) {
    const { server, tool, resourceUri, conversationId, callId, container } = params;
    const open = () => rpc.request("apps/open", { server, tool, conversationId, callId });
    const panel = new AppPanel({
      rpc, server, resourceUri, purpose: "tool", toolName: tool, args: params.args ?? null, open,
      onChange: changed, warmFrames,
    });
    container.append(panel.el);
    track(panel);
    await panel.load();
    changed();
    return {
      frameId: panel.frameId,
      element: panel.el,
      partialInput: (partial) => panel.setPartialInput(partial),
      toolInput: (input) => panel.setToolInput(input),
      toolResult: (result) => panel.setToolResult(result),
      toolCancelled: (reason) => panel.setToolCancelled(reason),
    };
  }

  /**
   * App-rendered elicitation: mount the App bound to `request` in `container`.
   * @param {HTMLElement} container
   * @param {any} request an InputRequest (mode "app") carrying its AppFrame as `app`
   * @param {import("./elicitation.js").ElicitationOptions} [opts]
   * @returns {Promise<AppHandle | null>}
   */
  async function mountElicitation(container, request, opts = {}) {
    if (!(container instanceof Element)) throw new Error("mountElicitation needs a container element");
    const id = String(request?.id ?? "");
    const mounted = await mountElicitationFrame({ rpc, onChange: changed, limits: limits() }, container, request, opts);
    if (mounted.panel) track(mounted.panel);
    elicitations.set(id, mounted);
    void mounted.done.then(() => { if (elicitations.get(id) === mounted) elicitations.delete(id); });
    return mounted.panel ? handle(mounted.panel) : null;
  }

  /**
   * The input request ended (answered elsewhere, timed out, released): tear its App down.
   * Call it before removing the container, so the App gets ui/resource-teardown.
   * @param {string} id @param {string} [reason]
   */
  async function unmountElicitation(id, reason = "the input request ended") {
    const mounted = elicitations.get(String(id));
    elicitations.delete(String(id));
    if (mounted) await mounted.unmount(reason);
  }

  /**
   * Tear down every app inside `element` (which the caller then removes). Use before replacing
   * page content that holds apps: a removed iframe cannot receive ui/resource-teardown.
   * @param {Element} element @param {string} [reason]
   */
  async function release(element, reason = "removed from the page") {
    const inside = [...panels].filter((p) => element === p.el || element.contains(p.el));
    await Promise.all(inside.map((p) => p.retire(reason)));
  }

  /** @returns {AppHandle[]} */
  function list() {
    return [...panels].filter((p) => p.status !== "closed").map(handle);
  }

  /** @param {string} frameId */
  function get(frameId) {
    const panel = findByFrame(String(frameId));
    return panel ? handle(panel) : null;
  }

  /** @param {string} frameId @param {string} [reason] */
  async function close(frameId, reason = "closed by the person") {
    await findByFrame(String(frameId))?.close(reason);
  }

  /** @param {(apps: AppHandle[]) => void} listener */
  function onChange(listener) {
    listeners.add(listener);
    return () => { listeners.delete(listener); };
  }

  /** For tests and debugging: the bridge of a frame and its recent traffic. @param {string} frameId */
  function bridgeOf(frameId) {
    const id = String(frameId);
    const panel = findByFrame(id);
    return panel?.bridge?.frameId === id ? panel.bridge : recent.get(id) ?? null;
  }

  const debug = Object.freeze({
    bridge: (/** @type {string} */ frameId) => bridgeOf(frameId),
    trace: (/** @type {string} */ frameId) => (bridgeOf(frameId)?.trace ?? []).map((t) => ({ ...t })),
    /** Origins with a warm proxy frame ready. */
    warmOrigins: () => warmFrames.readyOrigins(),
    /** Apps prepared ahead of their open, and whether each booted to its ui/initialize. */
    preparedApps: () => warmFrames.preparedApps(),
    /** How long a prepared App waits for its open before it is booted again (tests shorten it). */
    setPreparedMaxAge: (/** @type {number} */ ms) => { warmFrames.preparedMaxAgeMs = Math.max(100, Number(ms) || 0); },
    /** Prepare Apps ahead or not (benchmarks time warm opens without); drops the prepared ones when off. */
    setPreparing: (/** @type {boolean} */ on) => {
      if (on) warmFrames.preparing = true;
      else warmFrames.stopPreparing();
    },
  });

  return Object.freeze({ openToolApp, openChatApp, warm, mountElicitation, unmountElicitation, release, list, get, close, onChange, debug });
}

/** @typedef {ReturnType<typeof createApps>} Apps */
