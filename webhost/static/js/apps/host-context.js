// @ts-check
// hostContext for ui/initialize and the diffs sent as ui/notifications/host-context-changed
// (mcp-apps §5.2): only changed top-level keys are sent, and the View merges them.

import { getTheme } from "../theme.js";
import { styleVariables } from "./styles.js";

/** Keys of an MCP Tool that McpUiHostContext.toolInfo.tool admits (the schema is closed). */
const TOOL_KEYS = ["name", "title", "icons", "description", "inputSchema", "outputSchema", "annotations",
  "execution", "_meta"];

/** @param {any} tool */
function publicTool(tool) {
  /** @type {Record<string, unknown>} */
  const out = {};
  for (const key of TOOL_KEYS) if (tool && tool[key] !== undefined) out[key] = tool[key];
  if (typeof out.name !== "string") out.name = String(out.name ?? "");
  if (!out.inputSchema || typeof out.inputSchema !== "object") out.inputSchema = { type: "object" };
  return out;
}

/** @param {any} toolInfo */
export function toolInfoFor(toolInfo) {
  if (!toolInfo || typeof toolInfo !== "object" || !toolInfo.tool) return undefined;
  /** @type {{tool: Record<string, unknown>, id?: string | number}} */
  const out = { tool: publicTool(toolInfo.tool) };
  if (typeof toolInfo.id === "string" || typeof toolInfo.id === "number") out.id = toolInfo.id;
  return out;
}

function timeZone() {
  try { return Intl.DateTimeFormat().resolvedOptions().timeZone || undefined; } catch { return undefined; }
}

function deviceCapabilities() {
  const mq = (/** @type {string} */ q) => { try { return matchMedia(q).matches; } catch { return false; } };
  return { touch: mq("(pointer: coarse)") || (navigator.maxTouchPoints ?? 0) > 0, hover: mq("(hover: hover)") };
}

/**
 * The theme-dependent part of the context.
 * @returns {{theme: "light" | "dark", styles: {variables: Record<string, string>}}}
 */
export function themeContext() {
  const theme = getTheme();
  return { theme, styles: { variables: styleVariables(theme) } };
}

/**
 * The complete context for one frame (`themed` is themeContext(), cached by the caller until the theme changes).
 * @param {{toolInfo?: any, version?: string, displayMode: string, availableDisplayModes: string[],
 *   containerDimensions: Record<string, number>}} frame
 * @param {ReturnType<typeof themeContext>} themed
 */
export function buildHostContext(frame, themed) {
  /** @type {Record<string, unknown>} */
  const ctx = {
    ...themed,
    displayMode: frame.displayMode,
    availableDisplayModes: frame.availableDisplayModes,
    containerDimensions: frame.containerDimensions,
    locale: navigator.language || "en",
    timeZone: timeZone(),
    platform: "web",
    userAgent: `webhost/${frame.version || "0"}`,
    deviceCapabilities: deviceCapabilities(),
  };
  const toolInfo = toolInfoFor(frame.toolInfo);
  if (toolInfo) ctx.toolInfo = toolInfo;
  for (const key of Object.keys(ctx)) if (ctx[key] === undefined) delete ctx[key];
  return ctx;
}

/**
 * Top-level keys whose JSON differs between two contexts, with their new values.
 * @param {Record<string, unknown> | null} before @param {Record<string, unknown>} after
 */
export function contextDiff(before, after) {
  /** @type {Record<string, unknown>} */
  const diff = {};
  for (const [key, value] of Object.entries(after)) {
    if (!before || JSON.stringify(before[key]) !== JSON.stringify(value)) diff[key] = value;
  }
  return diff;
}

/**
 * One frame's context as the App last heard it: the whole context for its ui/initialize answer,
 * then only what changed. The theme part is cached until themeChanged().
 */
export class HostContextSync {
  /** @type {Record<string, unknown> | null} */
  #last = null;
  /** @type {ReturnType<typeof themeContext> | null} */
  #themed = null;
  #read;

  /** @param {() => Parameters<typeof buildHostContext>[0]} read the frame's part, now */
  constructor(read) {
    this.#read = read;
  }

  themeChanged() {
    this.#themed = null;
  }

  /** The whole context, which the App now has (its ui/initialize answer). */
  initial() {
    this.#last = this.#current();
    return this.#last;
  }

  /** The keys that changed since the App last heard (empty when none); it has them now. */
  changes() {
    const ctx = this.#current();
    const diff = contextDiff(this.#last, ctx);
    this.#last = ctx;
    return diff;
  }

  #current() {
    if (!this.#themed) this.#themed = themeContext();
    return buildHostContext(this.#read(), this.#themed);
  }
}
