// @ts-check
// Which administrator flag (`servers.NAME.cspCompat`: README, docs/security.md) would let an App run what
// its CSP blocked, read from the proxy's violation report, so the person can be told who can allow it.
// Nothing here loosens anything: the flags come from the configuration only (webhost/apps/instances.py).

import { CSP_COMPAT_FLAGS } from "../constants.js";

const FLAGS = new Set(CSP_COMPAT_FLAGS);

/**
 * The cspCompat flag that allows what a violation blocked, or null when no flag does (a load from an
 * origin the resource did not declare: the server's `_meta.ui.csp` must declare it).
 * @param {string} blocked the report's blockedURI ("eval", "wasm-eval", "blob", "data", a URL, ...)
 * @param {string} directive the report's effective directive
 * @returns {string | null}
 */
export function compatFlagFor(blocked, directive) {
  const d = directive.replace(/-(elem|attr)$/, "");
  const scheme = (/** @type {string} */ s) => blocked === s || blocked.startsWith(`${s}:`);
  /** @type {string | null} */
  let flag = null;
  if (blocked === "eval") flag = "eval";
  else if (blocked === "wasm-eval") flag = "wasm";
  else if (d === "worker-src") flag = scheme("blob") ? "blobWorkers" : "workers";
  else if (d === "script-src" && scheme("data")) flag = "dataModules";
  else if (d === "script-src" && scheme("blob")) flag = "workers";
  return flag && FLAGS.has(flag) ? flag : null;
}

/**
 * Whether the blocked code may be why the App is in trouble: it failed to start or logged an error. The ext-apps
 * SDK bundles a feature probe that tries `eval` in every App, and most Apps work without it (16 of the 20
 * official examples), so a block alone is information, not a warning.
 * @param {{compatFlags: string[], status: string, reportedError: boolean}} bridge
 */
export function compatTrouble(bridge) {
  return bridge.compatFlags.length > 0 && (bridge.status === "error" || bridge.reportedError);
}

/**
 * What the person is told about the flags an App would need: who can allow them and where; worded as a warning
 * only when the App is in trouble (compatTrouble).
 * @param {string} server @param {string[]} flags @param {boolean} trouble
 */
export function compatHint(server, flags, trouble) {
  const list = flags.map((f) => JSON.stringify(f)).join(", ");
  const what = trouble
    ? `This app failed or reported an error, and the content security policy blocked code it runs `
      + `(${flags.join(", ")}): that may be why.`
    : `The content security policy blocked code this app tried (${flags.join(", ")}). Many apps only probe `
      + `for it and work without it.`;
  return `${what} Only an administrator can allow it, for the apps of ${server}: "cspCompat": [${list}] under `
    + `"webhost": {"servers": {"${server}": …}} in the configuration (docs/security.md, "Apps: CSP").`;
}
