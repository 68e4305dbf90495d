// @ts-check
// Asking an App to tear down (mcp-apps §10.2): ui/resource-teardown with a bounded wait, then a
// grace window with the listener still attached, since an App's last save may still be in flight.
// Removing the frame and telling the backend is the bridge's own ending (AppBridge#destroy).

import { ERRORS } from "../constants.js";
import { AppRequestError } from "./channel.js";
import { short } from "./messages.js";

export const TEARDOWN_WAIT_MS = 800;
export const TEARDOWN_GRACE_MS = 250;

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Ask the App to tear down when it can still answer (initialized, its frame in the page); resolves
 * with what happened, for the lifecycle log. Never rejects.
 * @param {{initialized: boolean, iframe: HTMLIFrameElement,
 *   requestApp: (method: string, params: Record<string, unknown>, timeoutMs: number) => Promise<any>}} app
 * @returns {Promise<string>}
 */
export async function askToTearDown(app) {
  if (!app.initialized || !app.iframe.isConnected) return "not initialized: removed without a request";
  let outcome;
  // Sent directly, never queued: the App is initialized. params is {} (the schema is closed).
  try {
    await app.requestApp("ui/resource-teardown", {}, TEARDOWN_WAIT_MS);
    outcome = "answered";
  } catch (err) {
    outcome = err instanceof AppRequestError && err.code === ERRORS.UPSTREAM_TIMEOUT
      ? `no answer within ${TEARDOWN_WAIT_MS} ms` : `error: ${short(/** @type {Error} */ (err).message, 120)}`;
  }
  await sleep(TEARDOWN_GRACE_MS);
  return outcome;
}
