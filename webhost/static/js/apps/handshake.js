// @ts-check
// The App's handshake (mcp-apps §5): what it may send before ui/initialize, what it
// says about itself in ui/initialize, and the host's answer.

/** The MCP Apps protocol version webhost speaks (answered whatever the App sent). */
export const PROTOCOL_VERSION = "2026-01-26";

/** The App's initialize request (the spec's name, and MCP's own, which some Apps send). */
export const INITIALIZE = new Set(["ui/initialize", "initialize"]);

/** Requests an App may send before its ui/initialize (everything else is refused until then). */
export const BEFORE_INITIALIZED = new Set([...INITIALIZE, "ping"]);

/**
 * What the App says about itself: its info, its capabilities exactly as received (unknown keys such
 * as elicitation kept) and the protocol version it asked for.
 * @param {any} params
 * @returns {{appInfo: any, appCapabilities: Record<string, any>, protocolVersion: string | null}}
 */
export function appIdentity(params) {
  const caps = params.appCapabilities ?? params.capabilities;
  return {
    appInfo: params.appInfo ?? params.clientInfo ?? null,
    appCapabilities: caps && typeof caps === "object" && !Array.isArray(caps) ? caps : {},
    protocolVersion: typeof params.protocolVersion === "string" ? params.protocolVersion : null,
  };
}

/**
 * The host's answer to ui/initialize, from what the backend put in the frame's descriptor.
 * @param {import("./frame.js").AppFrameDescriptor} d @param {Record<string, unknown>} hostContext
 */
export function initializeResult(d, hostContext) {
  return {
    protocolVersion: PROTOCOL_VERSION,
    hostInfo: d.hostInfo && typeof d.hostInfo.name === "string" ? d.hostInfo : { name: "webhost", version: "0" },
    hostCapabilities: d.hostCapabilities && typeof d.hostCapabilities === "object" ? d.hostCapabilities : {},
    hostContext,
  };
}
