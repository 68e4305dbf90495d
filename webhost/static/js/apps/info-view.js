// @ts-check
// The "Info" view of an App panel: what the host applied to this App (effective CSP header,
// dropped CSP sources and why, requested vs granted permissions with a way to allow one, the
// frame origin, prefersBorder), what the App told us (appInfo, raw appCapabilities), and its
// recent log and problems. Every value is untrusted text: rendered with textContent only.

import { h, prettyJson } from "../html.js";
import { PERMISSION_TOKENS } from "../constants.js";

export const PERMISSIONS = Object.keys(PERMISSION_TOKENS);

/** @param {string} label @param {unknown} value */
function row(label, value) {
  return h("div", { class: "wh-kv" }, h("dt", { text: label }), h("dd", {}, value instanceof Node ? value : String(value ?? "—")));
}

/** @param {string} title @param {...unknown} children */
function section(title, ...children) {
  return h("section", { class: "wh-info-section" }, h("h4", { text: title }), ...children);
}

/** @param {unknown} value */
function code(value) {
  return h("code", { class: "wh-code", text: String(value ?? "") });
}

/** @param {unknown} value @param {string} [label] */
function jsonBlock(value, label) {
  return h("details", { class: "wh-json" }, h("summary", { text: label ?? "JSON" }),
    h("pre", { class: "wh-pre", text: prettyJson(value) }));
}

/**
 * @param {any} d the AppFrameDescriptor
 * @param {import("./bridge.js").AppBridge | null} bridge
 * @param {{onPermission: (permission: string, granted: boolean) => void, busy?: string | null}} actions
 */
export function renderInfo(d, bridge, actions) {
  const rejected = Array.isArray(d.cspRejected) ? d.cspRejected : [];
  const requested = new Set(Array.isArray(d.requestedPermissions) ? d.requestedPermissions : []);
  const granted = new Set(d.permissions && typeof d.permissions === "object" ? Object.keys(d.permissions) : []);

  const csp = section("Content Security Policy",
    h("p", { class: "muted", text: d.cspDefault
      ? "The resource declares no CSP metadata: the restrictive default applies (no network access)."
      : "Built from the resource's validated _meta.ui.csp. This is the HTTP header of the proxy document, inherited by the app." }),
    h("pre", { class: "wh-pre", dataset: { info: "csp-header" }, text: String(d.cspHeader ?? "(not reported)") }),
    d.csp && Object.keys(d.csp).length ? jsonBlock(d.csp, "Accepted domains") : null,
    rejected.length
      ? h("table", { class: "wh-table", dataset: { info: "csp-rejected" } },
        h("caption", { text: `Dropped CSP sources (${rejected.length})` }),
        h("thead", {}, h("tr", {}, h("th", { text: "Directive" }), h("th", { text: "Value" }), h("th", { text: "Reason" }))),
        h("tbody", {}, rejected.map((/** @type {any} */ r) => h("tr", {},
          h("td", {}, code(r?.directive)), h("td", {}, code(r?.value)), h("td", { text: String(r?.reason ?? "") })))))
      : h("p", { class: "muted", dataset: { info: "csp-rejected" }, text: "No declared CSP source was dropped." }),
    bridge?.compatFlags.length
      ? h("dl", { class: "wh-kvs", dataset: { info: "csp-compat" } },
        row("Blocked code an administrator can allow", code(`"cspCompat": ${JSON.stringify(bridge.compatFlags)}`)))
      : null);

  const permissionRows = PERMISSIONS.map((p) => {
    const isRequested = requested.has(p);
    const isGranted = granted.has(p);
    let action = null;
    const busy = actions.busy === p;
    if (isRequested && !isGranted) {
      action = h("button", { type: "button", class: "small primary", disabled: busy,
        text: busy ? "Allowing…" : "Allow for this server", dataset: { appAction: "allow-permission", permission: p },
        onclick: () => actions.onPermission(p, true) });
    } else if (isGranted) {
      action = h("button", { type: "button", class: "small danger-outline", disabled: busy,
        text: busy ? "Revoking…" : "Revoke", dataset: { appAction: "revoke-permission", permission: p },
        onclick: () => actions.onPermission(p, false) });
    }
    return h("tr", { dataset: { permission: p, requested: String(isRequested), granted: String(isGranted) } },
      h("td", {}, code(p)), h("td", { text: isRequested ? "requested" : "—" }),
      h("td", { text: isGranted ? "granted" : isRequested ? "not granted" : "—" }), h("td", {}, action));
  });
  const permissions = section("Permissions",
    h("table", { class: "wh-table" },
      h("thead", {}, h("tr", {}, h("th", { text: "Permission" }), h("th", { text: "Requested" }),
        h("th", { text: "Granted" }), h("th", { text: "" }))),
      h("tbody", {}, permissionRows)),
    h("p", { class: "muted", text: "Allowing remembers your choice for every app of this server and reopens this app with it." }),
    d.allow ? row("iframe allow", code(d.allow)) : null);

  const frame = section("Frame",
    h("dl", { class: "wh-kvs" },
      row("Server", d.server),
      row("Resource", code(d.resourceUri)),
      row("Frame id", code(d.frameId)),
      row("Frame origin", code(d.origin)),
      row("Inner sandbox", code(d.sandbox ?? "")),
      row("prefersBorder", d.prefersBorder === true ? "true" : d.prefersBorder === false ? "false" : "not set (host decides)"),
      row("Purpose", d.purpose ?? "tool")),
    Array.isArray(d.warnings) && d.warnings.length
      ? h("ul", { class: "wh-warnings" }, d.warnings.map((/** @type {unknown} */ w) => h("li", { text: String(w) })))
      : null,
    d.hostCapabilities ? jsonBlock(d.hostCapabilities, "Host capabilities sent to the app") : null);

  const app = section("App",
    bridge?.appInfo || bridge?.appCapabilities
      ? h("dl", { class: "wh-kvs" },
        row("App", bridge.appInfo ? `${bridge.appInfo.name ?? "?"} ${bridge.appInfo.version ?? ""}` : "—"),
        row("Protocol version", bridge.appProtocolVersion ?? "—"),
        row("Display mode", bridge.stage.mode),
        row("ui/initialize count", bridge.initializeCount))
      : h("p", { class: "muted", text: "The app has not sent ui/initialize yet." }),
    bridge?.appCapabilities ? jsonBlock(bridge.appCapabilities, "appCapabilities (as sent)") : null);

  const logs = bridge?.logs ?? [];
  const problems = bridge?.problems ?? [];
  const activity = section("Log",
    logs.length
      ? h("ol", { class: "wh-log" }, logs.slice(-50).map((l) =>
        h("li", {}, h("span", { class: `wh-level wh-level-${l.level}`, text: l.level }), " ",
          l.logger ? h("span", { class: "muted", text: `${l.logger}: ` }) : null, l.text)))
      : h("p", { class: "muted", text: "No log messages from the app." }),
    problems.length
      ? h("ol", { class: "wh-log wh-problems", dataset: { info: "problems" } },
        problems.slice(-30).map((p) => h("li", {}, h("span", { class: "wh-level wh-level-error", text: p.kind }), " ", p.summary)))
      : null);

  return h("div", { class: "wh-info" }, frame, csp, permissions, app, activity);
}
