// @ts-check
// What arrives from an App frame, judged before anything acts on it (mcp-apps §4, §13.3): which
// window and origin a message comes from, and whether it is JSON-RPC of the right shape. Everything
// from the sandbox origin is untrusted: the App can script its own proxy.

const MAX_ID_LENGTH = 200;

/** The sandbox proxy is loaded (the spec's name, and older drafts' ones). */
export const PROXY_READY = new Set(["ui/notifications/sandbox-proxy-ready", "ui/sandbox-ready", "ui/notifications/sandbox-ready"]);
/** The App reports its content height (the spec's name, and older drafts' ones). */
export const SIZE_CHANGED = new Set(["ui/notifications/size-changed", "ui/size-change", "ui/notifications/size-change"]);
/** The proxy saw the App's CSP refuse something. */
export const CSP_VIOLATION = "ui/notifications/sandbox-csp-violation";
/** The proxy dropped a reserved message the App sent. */
export const DROPPED = "ui/notifications/sandbox-dropped";
/** App notifications that need nothing from the host. */
export const IGNORED_NOTIFICATIONS = new Set(["notifications/tools/list_changed",
  "notifications/progress", "notifications/roots/list_changed"]);

/** A JSON-RPC id the host accepts: a short string or a finite number. @param {unknown} id */
export function validId(id) {
  return (typeof id === "string" && id.length <= MAX_ID_LENGTH) || (typeof id === "number" && Number.isFinite(id));
}

/** Whether `msg` looks like a request (dropped ones still get an answer). @param {any} msg */
export function looksLikeRequest(msg) {
  return Boolean(msg) && typeof msg === "object" && msg.jsonrpc === "2.0" && typeof msg.method === "string"
    && validId(msg.id);
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

/**
 * Where a message event comes from, for the App frame whose window is `win` on `origin`: "frame" (the
 * frame itself: handle it), "bypass" (a window inside the App posting to the top past its proxy: a
 * violation) or "other" (not ours: ignore).
 * @param {MessageEvent} event @param {Window | null} win @param {string} origin
 * @returns {"frame" | "bypass" | "other"}
 */
export function messageSource(event, win, origin) {
  if (!win || event.origin !== origin) return "other";
  if (event.source === win) return "frame";
  return isInside(event.source, win) ? "bypass" : "other";
}

/** Is `source` a window nested inside our frame? @param {MessageEventSource | null} source @param {Window} win */
function isInside(source, win) {
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

/** A short text for logs and reports. @param {unknown} value */
export function short(value, max = 300) {
  let text;
  try { text = typeof value === "string" ? value : JSON.stringify(value); } catch { text = String(value); }
  text = String(text ?? "");
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
