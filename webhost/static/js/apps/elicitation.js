// @ts-check
// App-rendered elicitation (SEP-3118, mcp-apps §14): a frame bound to one input request. After
// ui/notifications/initialized, and only if the App's raw appCapabilities declare `elicitation`,
// the request goes to the App as `elicitation/create`; its ElicitResult goes to the backend
// (`elicitation/respond` with the bound frameId), which validates it before anything reaches the
// server. Any failure (no frame, load failure, no capability, bad or rejected answer, timeout)
// tears the App down and hands the request back for the native form (the inbox then sends
// `elicitation/fallback`): a failure is never turned into decline or cancel.

import { describeError } from "../rpc.js";
import { AppPanel } from "./panel.js";

const ACTIONS = new Set(["accept", "decline", "cancel"]);

/**
 * @typedef {object} ElicitationOptions
 * @property {(request: any, reason: string) => void} [fallbackToForm] the App cannot serve (it is torn
 *   down by then): show the native form instead. For a request from the backend that means asking the
 *   backend (`elicitation/fallback`, sent by the caller: components/inbox.js), which sends it again as a form
 * @property {any} [descriptor] the AppFrame (else request.app)
 * @property {(result: {action: string, content?: Record<string, unknown>}) => Promise<unknown>} [onResult]
 *   deliver the App's answer yourself; the request is then not treated as a backend input request
 *   (no `elicitation/respond` is sent)
 */

/**
 * The params forwarded unchanged to the App: the original request's, as the backend kept them.
 * @param {any} request @param {any} descriptor
 */
export function elicitationParams(request, descriptor) {
  const original = request.request?.method === "elicitation/create" ? request.request.params : request.params;
  if (original && typeof original === "object" && !Array.isArray(original)) return original;
  /** @type {Record<string, unknown>} */
  const params = { mode: "form", message: String(request.message ?? ""), requestedSchema: request.requestedSchema ?? { type: "object", properties: {} } };
  const meta = request._meta ?? request.meta;
  params._meta = meta && typeof meta === "object" ? meta : { ui: { resourceUri: descriptor.resourceUri } };
  return params;
}

/** @param {any} result */
function isElicitResult(result) {
  if (!result || typeof result !== "object" || !ACTIONS.has(result.action)) return false;
  const c = result.content;
  return c === undefined || c === null || (typeof c === "object" && !Array.isArray(c));
}

/**
 * Mount an App for one input request.
 * @param {{rpc: import("../rpc.js").RpcClient, onChange: (panel: AppPanel) => void,
 *   limits: import("./index.js").Limits}} ctx the backend's limits: the handshake budget (when the
 *   request names none) and how long the person may take inside the App (the backend's human timeout)
 * @param {HTMLElement} container
 * @param {any} request an InputRequest with mode "app": `app` (the AppFrame), `request` ({method:
 *   "elicitation/create", params}: forwarded unchanged), `appTimeoutSeconds` (handshake limit)
 * @param {ElicitationOptions} [opts]
 * @returns {Promise<{panel: AppPanel | null, done: Promise<string>, unmount: (reason: string) => Promise<void>}>}
 */
export async function mountElicitationFrame(ctx, container, request, opts = {}) {
  if (!request || typeof request !== "object" || request.id === undefined) throw new Error("mountElicitation needs an input request");
  const descriptor = opts.descriptor ?? request.app ?? null;
  const backendBound = !opts.onResult;
  /** @type {(outcome: string) => void} */
  let settle = () => {};
  const done = new Promise((resolve) => { settle = resolve; });
  let finished = false;
  /** @type {AppPanel | null} */
  let panel = null;

  /**
   * Give the request back to the native form: tear the App down first (it must get
   * ui/resource-teardown while it is still on the page), then hand it to the caller, which asks the
   * backend to re-send the request as mode "form" (or, with onResult, shows its own form).
   * @param {string} why
   */
  const fallback = async (why) => {
    if (finished) return;
    finished = true;
    settle(`fallback: ${why}`);
    console.info(`webhost apps: input request ${request.id} falls back to the form: ${why}`);
    if (panel) await panel.close(`fell back to the form: ${why}`.slice(0, 100));
    opts.fallbackToForm?.(request, why);
  };

  if (!descriptor || descriptor.purpose !== "elicitation") {
    const why = descriptor ? "the frame is not bound to an elicitation" : "no app frame came with this request";
    if (!opts.fallbackToForm && !backendBound) throw new Error(why);
    void fallback(why);
    return { panel: null, done, unmount: async () => {} };
  }

  panel = new AppPanel({
    rpc: ctx.rpc, server: String(descriptor.server), resourceUri: String(descriptor.resourceUri), purpose: "elicitation",
    open: null, onChange: ctx.onChange, closeLabel: "Use the form instead",
  });
  container.append(panel.el);
  const bridge = panel.attach(descriptor);
  if (!bridge) {
    void fallback(panel.statusMessage || "the frame could not be built");
    return { panel, done, unmount: async () => {} };
  }

  const readyMs = typeof request.appTimeoutSeconds === "number" && request.appTimeoutSeconds > 0
    ? request.appTimeoutSeconds * 1000 : ctx.limits.appHandshakeTimeoutSeconds * 1000;
  const readyTimer = setTimeout(() => { void fallback(`the app did not initialize within ${readyMs / 1000} s`); }, readyMs);
  bridge.addEventListener("closed", () => {
    clearTimeout(readyTimer);
    if (!finished) void fallback(bridge.closeReason ?? "the app closed");
  });
  bridge.addEventListener("ready", async () => {
    clearTimeout(readyTimer);
    if (!bridge.appCapabilities || !("elicitation" in bridge.appCapabilities)) {
      void fallback("the app did not declare appCapabilities.elicitation");
      return;
    }
    let result;
    try {
      result = await bridge.requestApp("elicitation/create", elicitationParams(request, descriptor),
        ctx.limits.humanTimeoutSeconds * 1000);
    } catch (err) {
      if (!finished) void fallback(`the app did not answer: ${describeError(err)}`);
      return;
    }
    if (finished) return;
    if (!isElicitResult(result)) {
      void fallback("the app's answer is not an ElicitResult");
      return;
    }
    /** @type {{action: string, content?: Record<string, unknown>}} */
    const answer = { action: result.action };
    if (result.action === "accept" && result.content) answer.content = result.content;
    try {
      if (opts.onResult) await opts.onResult(answer);
      else await ctx.rpc.request("elicitation/respond", { id: request.id, ...answer, frameId: descriptor.frameId });
    } catch (err) {
      // The backend validates against requestedSchema; an answer that fails goes to the form instead
      // (the backend has then already re-sent the request as a form, and elicitation/fallback changes nothing).
      void fallback(`the answer was not accepted: ${describeError(err)}`);
      return;
    }
    finished = true;
    settle(answer.action);
    void panel?.close(`input request answered (${answer.action})`);
  });

  /** The request ended elsewhere (answered, timed out, released): tear the App down. @param {string} reason */
  const unmount = async (reason) => {
    clearTimeout(readyTimer);
    if (!finished) {
      finished = true;
      settle(`ended: ${reason}`);
    }
    await panel?.close(reason);
  };
  return { panel, done, unmount };
}
