// @ts-check
// Warm proxy frames: one sandbox proxy document per server origin, loaded before the click, so an App
// open skips loading the proxy page (a new document in a new renderer process). docs/security.md
// "Warm proxy frames" has the rules; in short:
//  - a warm frame is loaded from the backend's `apps/warm` answer (`/warm?p=<token>` on the server's
//    own sandbox origin), under the sandbox's fixed bootstrap policy, with no App and no permissions;
//  - it is bound to that origin: only a descriptor of the same origin can take it, and the proxy loads
//    only its own origin's /app document, whose header carries the App's policy from the open's token;
//  - it serves one App: taking it removes it from the pool (the proxy itself refuses a second App),
//    and a bridge's frame is removed from the page when the App closes, never handed back;
//  - it is moved into place with the state-preserving `moveBefore` (a plain move would reload it);
//    a browser without it, or an App with permissions or an opaque sandbox, opens cold as before.

import { OUTER_SANDBOX } from "./frame.js";

/** Frames kept at most, across origins (each is a renderer process). */
export const MAX_WARM_FRAMES = 3;
/** A warm frame whose proxy did not say ready within this long is dropped. */
const READY_TIMEOUT_MS = 10_000;
const PROXY_READY = "ui/notifications/sandbox-proxy-ready";

/** @typedef {{origin: string, iframe: HTMLIFrameElement, ready: boolean, serial: number, cleanup: () => void}} WarmFrame */

export const CAN_MOVE = typeof Element !== "undefined" && "moveBefore" in Element.prototype;

export class WarmFrames {
  /** Ready and loading frames, oldest first. @type {WarmFrame[]} */
  #frames = [];
  /** @type {HTMLElement | null} */
  #holder = null;
  #serial = 0;

  /**
   * Keep a warm frame loading for `origin` (from `apps/warm`'s `frame`), unless one is already there.
   * @param {unknown} frame `{origin, url}`
   */
  offer(frame) {
    if (!CAN_MOVE || !frame || typeof frame !== "object") return;
    const { origin, url } = /** @type {{origin?: unknown, url?: unknown}} */ (frame);
    if (typeof origin !== "string" || typeof url !== "string") return;
    let parsed;
    try { parsed = new URL(url); } catch { return; }
    if (parsed.origin !== origin || parsed.pathname !== "/warm" || origin === location.origin) return;
    this.#prune();
    if (this.#frames.some((f) => f.origin === origin)) return;
    while (this.#frames.length >= MAX_WARM_FRAMES) this.#drop(/** @type {WarmFrame} */ (this.#frames[0]));
    const iframe = document.createElement("iframe");
    // The same fixed attributes as a cold frame (frame.js), set before the src.
    iframe.setAttribute("sandbox", OUTER_SANDBOX);
    iframe.setAttribute("referrerpolicy", "strict-origin");
    iframe.setAttribute("tabindex", "-1");
    iframe.setAttribute("aria-hidden", "true");
    const serial = ++this.#serial;
    iframe.dataset.warmFrame = String(serial);
    /** @type {WarmFrame} */
    const entry = { origin, iframe, ready: false, serial, cleanup: () => {} };
    const onMessage = (/** @type {MessageEvent} */ event) => {
      if (event.source !== iframe.contentWindow || event.origin !== origin) return;
      if (event.data?.jsonrpc === "2.0" && event.data?.method === PROXY_READY) entry.ready = true;
    };
    const timer = setTimeout(() => { if (!entry.ready) this.#drop(entry); }, READY_TIMEOUT_MS);
    window.addEventListener("message", onMessage);
    entry.cleanup = () => {
      clearTimeout(timer);
      window.removeEventListener("message", onMessage);
    };
    this.#frames.push(entry);
    iframe.src = parsed.href;
    this.#holderEl().append(iframe);
  }

  /**
   * A ready warm frame for `origin`, removed from the pool (it is the caller's now, for one App), or null.
   * @param {string} origin
   * @returns {HTMLIFrameElement | null}
   */
  take(origin) {
    const entry = this.#frames.find((f) => f.origin === origin && f.ready && f.iframe.isConnected);
    if (!entry) return null;
    entry.cleanup();
    this.#frames.splice(this.#frames.indexOf(entry), 1);
    return entry.iframe;
  }

  /** Origins with a ready frame (debugging and tests). */
  readyOrigins() {
    this.#prune();
    return this.#frames.filter((f) => f.ready).map((f) => f.origin);
  }

  /** Forget frames something else removed from the page (a removed frame's document is gone). */
  #prune() {
    for (const f of [...this.#frames]) if (!f.iframe.isConnected) this.#drop(f);
  }

  /** Drop every warm frame of `origin` (its server went away), or all. @param {string} [origin] */
  clear(origin) {
    for (const f of [...this.#frames]) if (origin === undefined || f.origin === origin) this.#drop(f);
  }

  /** @param {WarmFrame} entry */
  #drop(entry) {
    entry.cleanup();
    entry.iframe.remove();
    const i = this.#frames.indexOf(entry);
    if (i >= 0) this.#frames.splice(i, 1);
  }

  /** Off-screen but laid out (a display:none frame would still load, but be laid out again on use). */
  #holderEl() {
    if (this.#holder?.isConnected) return this.#holder;
    const holder = document.createElement("div");
    holder.dataset.warmFrames = "";
    holder.setAttribute("aria-hidden", "true");
    holder.style.position = "fixed";
    holder.style.left = "-10000px";
    holder.style.top = "0";
    holder.style.width = "400px";
    holder.style.height = "200px";
    holder.style.overflow = "hidden";
    holder.style.visibility = "hidden";
    holder.style.pointerEvents = "none";
    document.body.append(holder);
    this.#holder = holder;
    return holder;
  }
}
