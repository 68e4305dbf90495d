// @ts-check
// The outer (sandbox proxy) iframe of one MCP App, built from an AppFrame descriptor
// (docs/api.md "MCP Apps"; mcp-apps §13.1). The src is NOT set here: the bridge attaches its
// message listener first and only then points the frame at descriptor.proxyUrl.

import { DEFAULT_SANDBOX, PERMISSION_TOKENS } from "../constants.js";

/** Fixed by host policy; never allow-top-navigation, allow-popups, allow-downloads or allow-modals. */
export const OUTER_SANDBOX = DEFAULT_SANDBOX;
/** The only Permissions Policy tokens a descriptor may grant (mcp-apps §7). @type {Set<string>} */
const ALLOW_TOKENS = new Set(Object.values(PERMISSION_TOKENS));

/**
 * @typedef {object} AppFrameDescriptor
 * @property {string} frameId
 * @property {string} server
 * @property {string} resourceUri
 * @property {"tool" | "elicitation"} [purpose]
 * @property {string} origin
 * @property {string} proxyUrl
 * @property {string} [appUrl] the App's own document on the origin, for a warm proxy frame
 * @property {boolean} [prepared] the App prepared ahead (apps/warm) is this one: its frame may be adopted
 * @property {string} html
 * @property {Record<string, unknown>} [csp]
 * @property {string} [cspHeader]
 * @property {boolean} [cspDefault]
 * @property {{directive?: string, value?: string, reason?: string}[]} [cspRejected]
 * @property {string[]} [requestedPermissions]
 * @property {Record<string, unknown>} [permissions]
 * @property {string} [allow]
 * @property {string} [sandbox]
 * @property {boolean | null} [prefersBorder]
 * @property {string[]} [warnings]
 * @property {{name: string, version: string}} [hostInfo]
 * @property {Record<string, unknown>} [hostCapabilities]
 * @property {{tool: any, id?: string | number} | null} [toolInfo]
 */

/**
 * Check a descriptor before anything is built from it; returns a reason when it must not be
 * rendered (mcp-apps §15 lesson 1: never fall back to the host origin).
 * @param {any} d
 * @returns {string | null}
 */
export function descriptorProblem(d) {
  if (!d || typeof d !== "object") return "the backend sent no app frame description";
  for (const key of ["frameId", "server", "resourceUri", "origin", "proxyUrl", "html"]) {
    if (typeof d[key] !== "string" || !d[key]) return `the app frame description lacks ${key}`;
  }
  let origin;
  let proxy;
  try {
    origin = new URL(d.origin);
    proxy = new URL(d.proxyUrl);
  } catch {
    return "the sandbox origin or proxy URL is not a valid URL";
  }
  if (origin.protocol !== "http:" && origin.protocol !== "https:") return "the sandbox origin is not http(s)";
  if (origin.origin !== d.origin) return "the sandbox origin is not a bare origin";
  if (proxy.origin !== origin.origin) return "the proxy URL is not on the sandbox origin";
  if (origin.origin === location.origin) {
    return "the sandbox origin is the host page's own origin; refusing to render the app";
  }
  return null;
}

/** Keep only known permission tokens from a descriptor's allow string. @param {unknown} allow */
export function sanitizeAllow(allow) {
  if (typeof allow !== "string") return "";
  return allow.split(";").map((t) => t.trim()).filter((t) => ALLOW_TOKENS.has(t))
    .filter((t, i, all) => all.indexOf(t) === i).join("; ");
}

/**
 * The outer iframe, with every attribute fixed before it is inserted or given a src.
 * @param {AppFrameDescriptor} d
 */
export function createAppIframe(d) {
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", OUTER_SANDBOX);
  const allow = sanitizeAllow(d.allow);
  if (allow) frame.setAttribute("allow", allow);
  // The proxy checks its embedder via ancestorOrigins or, in Firefox, the referrer: send the origin
  // (the page itself uses no-referrer).
  frame.setAttribute("referrerpolicy", "strict-origin");
  return decorateAppIframe(frame, d);
}

/**
 * Can this App open in a warm proxy frame (warm-frames.js)? Only one with no permissions (a warm frame
 * was made before any were granted, and `allow` applies only to a frame's next document) and a
 * same-origin inner sandbox (the warm proxy writes the App into its /app document).
 * @param {AppFrameDescriptor} d
 */
export function warmEligible(d) {
  if (sanitizeAllow(d.allow) !== "" || typeof d.appUrl !== "string") return false;
  const tokens = String(d.sandbox ?? "").split(/\s+/);
  return tokens.includes("allow-scripts") && tokens.includes("allow-same-origin");
}

/**
 * What marks a frame as this App's: the data attributes, title and style (none of it reloads the frame,
 * so a warm frame gets the same).
 * @param {HTMLIFrameElement} frame @param {AppFrameDescriptor} d
 */
export function decorateAppIframe(frame, d) {
  frame.removeAttribute("tabindex");
  frame.removeAttribute("aria-hidden");
  frame.setAttribute("data-app-frame", "");
  frame.dataset.appStatus = "loading";
  frame.dataset.server = d.server;
  frame.dataset.resourceUri = d.resourceUri;
  frame.dataset.frameId = d.frameId;
  frame.title = `MCP App ${d.resourceUri} from ${d.server}`;
  // CSSOM (allowed by the page CSP, unlike a style attribute). overflow hidden: never size from
  // the App's scroll height (mcp-apps §9). color-scheme normal matches the proxy document, so the
  // frame stays transparent in the dark theme instead of getting an opaque canvas.
  frame.style.overflow = "hidden";
  frame.style.border = "0";
  frame.style.display = "block";
  frame.style.width = "100%";
  frame.style.colorScheme = "normal";
  return frame;
}
