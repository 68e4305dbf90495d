// @ts-check
// App-rendered elicitation (SEP-3118, mcp-apps §14): a frame bound to one input request. After
// ui/notifications/initialized, and only if the App's raw appCapabilities declare `elicitation`,
// the request goes to the App as `elicitation/create`; its ElicitResult goes to the backend
// (`elicitation/respond`), which validates it before anything reaches the server. Any failure
// (no frame, load failure, no capability, bad or rejected answer, timeout) falls back to the
// native form: a failure is never turned into decline or cancel.

import { describeError } from "../rpc.js";
import { AppPanel } from "./panel.js";

/** How long the person may take inside the App (the MCP Inspector allows 10 minutes). */
export const ELICITATION_TIMEOUT_MS = 10 * 60 * 1000;
const READY_TIMEOUT_MS = 30000;
const ACTIONS = new Set(["accept", "decline", "cancel"]);

/**
 * @typedef {object} ElicitationOptions
 * @property {(request: any) => void} [fallbackToForm] show the native form instead
 * @property {any} [descriptor] the AppFrame (else request.app / request.appFrame)
 * @property {(result: {action: string, content?: Record<string, unknown>}) => Promise<unknown>} [onResult]
 *   deliver the App's answer (default: `elicitation/respond {id, action, content}`)
 */

/**
 * The params forwarded unchanged to the App: the original request's when the backend kept them.
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

/**
 * Mount an App for one input request. Resolves to the panel (or null after an immediate fallback);
 * rejects only when there is no way to fall back.
 * @param {{rpc: import("../rpc.js").RpcClient, onChange: (panel: AppPanel) => void}} ctx
 * @param {HTMLElement} container
 * @param {any} request an InputRequest with mode "app": `app` (the AppFrame), `request` ({method:
 *   "elicitation/create", params}: forwarded unchanged), `appTimeoutSeconds` (handshake limit)
 * @param {ElicitationOptions} [opts]
 * @returns {Promise<{panel: AppPanel | null, done: Promise<string>, unmount: (reason: string) => Promise<void>}>}
 */
export async function mountElicitationFrame(ctx, container, request, opts = {}) {
  const descriptor = opts.descriptor ?? request?.app ?? request?.appFrame ?? null;
  /** @type {(outcome: string) => void} */
  let settle = () => {};
  const done = new Promise((resolve) => { settle = resolve; });
  let finished = false;

  /** @param {string} why */
  const fallback = (why) => {
    if (finished) return;
    finished = true;
    console.info(`webhost apps: elicitation ${request?.id} falls back to the form: ${why}`);
    settle(`fallback: ${why}`);
    if (opts.fallbackToForm) opts.fallbackToForm(request);
  };

  if (!request || typeof request !== "object" || request.id === undefined) throw new Error("mountElicitation needs an input request");
  if (!descriptor || descriptor.purpose !== "elicitation") {
    const why = descriptor ? "the frame is not bound to an elicitation" : "the backend sent no app frame for this request";
    if (!opts.fallbackToForm) throw new Error(why);
    fallback(why);
    return { panel: null, done, unmount: async () => {} };
  }

  const panel = new AppPanel({
    rpc: ctx.rpc, server: String(descriptor.server), resourceUri: String(descriptor.resourceUri), purpose: "elicitation",
    open: null, onChange: ctx.onChange, closeLabel: "Use the form instead",
  });
  container.append(panel.el);
  const bridge = panel.attach(descriptor);
  if (!bridge) {
    fallback(panel.statusMessage || "the frame could not be built");
    return { panel, done, unmount: async () => {} };
  }

  /** @param {string} why */
  const fail = (why) => {
    if (finished) return;
    fallback(why);
    void panel.close(`elicitation fell back to the form: ${why}`.slice(0, 100));
  };

  const readyMs = typeof request.appTimeoutSeconds === "number" && request.appTimeoutSeconds > 0
    ? request.appTimeoutSeconds * 1000 : READY_TIMEOUT_MS;
  const readyTimer = setTimeout(() => fail(`the app did not initialize within ${readyMs / 1000} s`), readyMs);
  bridge.addEventListener("closed", () => {
    clearTimeout(readyTimer);
    if (!finished) fallback(bridge.closeReason ?? "the app closed");
  });
  bridge.addEventListener("ready", async () => {
    clearTimeout(readyTimer);
    if (!bridge.appCapabilities || !("elicitation" in bridge.appCapabilities)) {
      fail("the app did not declare appCapabilities.elicitation");
      return;
    }
    let result;
    try {
      result = await bridge.requestApp("elicitation/create", elicitationParams(request, descriptor), ELICITATION_TIMEOUT_MS);
    } catch (err) {
      fail(`the app did not answer: ${describeError(err)}`);
      return;
    }
    if (finished) return;
    if (!result || typeof result !== "object" || !ACTIONS.has(result.action)
      || (result.action === "accept" && result.content !== undefined && (typeof result.content !== "object" || result.content === null || Array.isArray(result.content)))) {
      fail("the app's answer is not an ElicitResult");
      return;
    }
    /** @type {{action: string, content?: Record<string, unknown>}} */
    const answer = { action: result.action };
    if (result.action === "accept" && result.content) answer.content = result.content;
    try {
      if (opts.onResult) await opts.onResult(answer);
      else await ctx.rpc.request("elicitation/respond", { id: request.id, ...answer });
    } catch (err) {
      // The backend validates against requestedSchema; an invalid answer goes to the form instead.
      fail(`the answer was not accepted: ${describeError(err)}`);
      return;
    }
    finished = true;
    settle(answer.action);
    void panel.close(`elicitation answered (${answer.action})`);
  });
  /** The request ended elsewhere (answered, timed out, released): tear the App down. @param {string} reason */
  const unmount = async (reason) => {
    clearTimeout(readyTimer);
    if (!finished) {
      finished = true;
      settle(`ended: ${reason}`);
    }
    await panel.close(reason);
  };
  return { panel, done, unmount };
}
