// @ts-check
// App requests the backend answers (docs/api.md `apps/request`; the list is the backend's own,
// apps/policy.py, served as APP_RELAYED_METHODS): relayed with the frame's id, which the backend
// binds to its server and judges against every policy. The page adds only what must happen in the
// browser once the backend agreed (opening a link, saving a download): `#afterRelay`, where a
// relayed answer can be routed elsewhere (the chat's conversation, for ui/message and
// ui/update-model-context). Bounded: at most MAX_IN_FLIGHT at once per frame, and each request's params in
// size and depth (limits.js requestProblem); whatever is not relayed is answered at once.

import { APP_RELAYED_METHODS, ERRORS } from "../constants.js";
import { MAX_IN_FLIGHT, requestProblem } from "./limits.js";
import { short, validId } from "./messages.js";
import { openInNewTab } from "../open-tab.js";

const RELAYED = new Set(APP_RELAYED_METHODS);
const DOWNLOAD_URL_LIFETIME_MS = 30_000;

/** Whether the backend answers this App request. @param {string} method */
export function isRelayed(method) {
  return RELAYED.has(method);
}

/**
 * @typedef {object} RelayOptions
 * @property {import("../rpc.js").RpcClient} rpc
 * @property {string} frameId
 * @property {import("./channel.js").AppChannel} channel where the App's answers go
 * @property {import("./diagnostics.js").Diagnostics} diagnostics
 * @property {EventTarget} events where "downloaded", "linkopened" and "linkblocked" are dispatched (the bridge)
 * @property {() => string | null} serverDown why the frame's server cannot serve now, or null
 */

export class RequestRelay {
  #opts;
  #inFlight = 0;
  /** App request ids relayed to the backend and not answered yet (for notifications/cancelled). @type {Set<string | number>} */
  #relayed = new Set();

  /** @param {RelayOptions} opts */
  constructor(opts) {
    this.#opts = opts;
  }

  /** @param {string | number} id @param {string} method @param {Record<string, unknown>} params */
  relay(id, method, params) {
    const { rpc, frameId, channel, diagnostics } = this.#opts;
    const problem = requestProblem(params);
    if (problem) {
      diagnostics.violation("oversized", `${method} refused: ${problem}`, { method });
      channel.respondError(id, ERRORS.INVALID_REQUEST, `Invalid Request: ${method} refused: ${problem}`);
      return;
    }
    if (this.#inFlight >= MAX_IN_FLIGHT) {
      diagnostics.violation("in-flight", `more than ${MAX_IN_FLIGHT} app requests in flight; excess refused`);
      channel.respondError(id, ERRORS.UPSTREAM_ERROR, `Too many requests in flight from this app (limit ${MAX_IN_FLIGHT})`);
      return;
    }
    const down = this.#opts.serverDown();
    if (down !== null) {
      channel.respondError(id, ERRORS.NOT_CONNECTED, `${method} failed: ${down}`);
      return;
    }
    const duplicate = this.#relayed.has(id);
    this.#inFlight += 1;
    if (!duplicate) this.#relayed.add(id);
    /** @type {Record<string, unknown>} */
    const request = { frameId, method, params };
    if (!duplicate) request.requestId = id;
    rpc.request("apps/request", request)
      .then((result) => channel.respond(id, this.#afterRelay(method, result)))
      .catch((err) => {
        const code = typeof err?.code === "number" ? err.code : ERRORS.INTERNAL_ERROR;
        channel.respondError(id, code, short(err?.message ?? "request failed", 500));
      })
      .finally(() => {
        this.#inFlight -= 1;
        if (!duplicate) this.#relayed.delete(id);
      });
  }

  /** The App cancelled one of its requests (notifications/cancelled): cancel the backend's work for it. @param {any} params */
  cancel(params) {
    const requestId = params?.requestId;
    if (!validId(requestId) || !this.#relayed.has(requestId)) return;
    this.#opts.rpc.request("apps/cancel", { frameId: this.#opts.frameId, requestId }).catch(() => { /* already finished */ });
  }

  /** What the App gets for a relayed request's backend answer. @param {string} method @param {any} result */
  #afterRelay(method, result) {
    if (method === "ui/open-link") return this.#openLink(result);
    if (method === "ui/download-file") return this.#download(result);
    return result;
  }

  /**
   * The person consented and the backend checked the files ({files: [{name, size, blob}]}): save each
   * as a download. The Blob is always application/octet-stream, so its URL never renders as a document.
   * @param {any} result
   */
  #download(result) {
    const files = Array.isArray(result?.files) ? result.files : [];
    let saved = 0;
    for (const file of files) {
      if (!file || typeof file.blob !== "string") continue;
      let bytes;
      try {
        const bin = atob(file.blob);
        bytes = new Uint8Array(bin.length);
        for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      } catch { continue; }
      const name = String(file.name ?? "download.bin").replace(/[^\w.-]+/g, "_").slice(0, 120) || "download.bin";
      const url = URL.createObjectURL(new Blob([bytes], { type: "application/octet-stream" }));
      const a = document.createElement("a");
      a.href = url;
      a.download = name;
      a.rel = "noopener";
      a.dataset.appDownload = name;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), DOWNLOAD_URL_LIFETIME_MS);
      saved += 1;
      this.#opts.events.dispatchEvent(new CustomEvent("downloaded", { detail: { name, size: bytes.length } }));
    }
    if (!saved) return { isError: true };
    return {};
  }

  /**
   * The backend consented ({open: true, url, opened?}); the scheme is checked again. `opened` is there when the
   * person clicked Allow: the page opened the tab within that click, or the browser did not let it. Without it
   * (links allowed without asking, or a remembered answer) the page opens it now: the person's own click in
   * the app may still let the browser do so. The app is told the truth: `{}`, or `{isError: true}`.
   * @param {any} result
   */
  #openLink(result) {
    const url = result && result.open === true && typeof result.url === "string" ? result.url : null;
    if (!url) throw Object.assign(new Error("Link opening denied"), { code: ERRORS.UPSTREAM_ERROR });
    let parsed;
    try { parsed = new URL(url); } catch { throw Object.assign(new Error("Invalid URL"), { code: ERRORS.INVALID_PARAMS }); }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      throw Object.assign(new Error("only http and https links can be opened"), { code: ERRORS.POLICY_REFUSED });
    }
    if (parsed.username || parsed.password) {
      // https://trusted.example@evil.example/ reads as the trusted site: never open those.
      throw Object.assign(new Error("links with embedded credentials are not opened"), { code: ERRORS.POLICY_REFUSED });
    }
    const opened = typeof result.opened === "boolean" ? result.opened : openInNewTab(parsed);
    this.#opts.events.dispatchEvent(new CustomEvent(opened ? "linkopened" : "linkblocked", { detail: { url: parsed.href } }));
    return opened ? {} : { isError: true };
  }
}
