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
//
// Prepared Apps (docs/security.md "Prepared Apps"): when `apps/warm` also describes the App (`prepared`:
// its /app URL under the policy the open will sign, its HTML and a key), the warm frame gets the App
// written in ahead, and it boots there, hidden, up to its `ui/initialize`. Nothing answers it: every
// message the App sends is held (a few at most; more and the frame is dropped) until an open of that
// same App takes the frame, and the backend confirms the key (same HTML, policy and sandbox) at that
// open. The bridge then handles the held messages as if they had just arrived, so the handshake, the
// audit row and every check are a normal open's. An App SDK gives up on `ui/initialize` after 60 s, so a
// prepared App not taken within `PREPARED_MAX_AGE_MS` is dropped and prepared again.

import { OUTER_SANDBOX } from "./frame.js";

/** Frames kept at most, across origins (each is a renderer process). */
export const MAX_WARM_FRAMES = 3;
/** A warm frame whose proxy did not say ready within this long is dropped. */
const READY_TIMEOUT_MS = 10_000;
/** A prepared App older than this is booted again (App SDKs time `ui/initialize` out at 60 s). */
export const PREPARED_MAX_AGE_MS = 45_000;
/** How many times one prepared App is booted again before its frame stays unprepared. */
const PREPARED_RENEWALS = 4;
/** Messages held from a prepared App before its open; one more and the frame is dropped. */
export const MAX_HELD_MESSAGES = 16;
const PROXY_READY = "ui/notifications/sandbox-proxy-ready";
const APP_DOCUMENT = "ui/notifications/sandbox-webhost-app-document";
const RESOURCE_READY = "ui/notifications/sandbox-resource-ready";

/**
 * @typedef {{key: string, server: string, resourceUri: string, origin: string, appUrl: string, sandbox: string,
 *   html: string}} PreparedApp what `apps/warm` says of an App that may be written in ahead
 * @typedef {{app: PreparedApp, posted: boolean, held: any[], renewals: number}} Preparation
 * @typedef {{origin: string, url: string, iframe: HTMLIFrameElement, ready: boolean, serial: number,
 *   cleanup: () => void, preparation: Preparation | null, timer: ReturnType<typeof setTimeout> | null}} WarmFrame
 * @typedef {{iframe: HTMLIFrameElement, key: string, html: string, claim: () => any[] | null, discard: () => void}} TakenApp
 *   a prepared frame out of the pool: `claim()` (once) stops holding and gives the held messages; `discard()` drops it
 */

export const CAN_MOVE = typeof Element !== "undefined" && "moveBefore" in Element.prototype;

export class WarmFrames {
  /** Ready and loading frames, oldest first. @type {WarmFrame[]} */
  #frames = [];
  /** @type {HTMLElement | null} */
  #holder = null;
  #serial = 0;
  /** Whether Apps are prepared at all (the benchmark times warm opens without). */
  preparing = true;
  /** How long a prepared App waits for its open before it is booted again (tests shorten it). */
  preparedMaxAgeMs = PREPARED_MAX_AGE_MS;

  /**
   * Keep a warm frame loading for `origin` (from `apps/warm`'s `frame`), unless one is already there.
   * @param {unknown} frame `{origin, url}`
   * @returns {WarmFrame | null} the origin's frame (new or already there), or null
   */
  offer(frame) {
    if (!CAN_MOVE || !frame || typeof frame !== "object") return null;
    const { origin, url } = /** @type {{origin?: unknown, url?: unknown}} */ (frame);
    if (typeof origin !== "string" || typeof url !== "string") return null;
    let parsed;
    try { parsed = new URL(url); } catch { return null; }
    if (parsed.origin !== origin || parsed.pathname !== "/warm" || origin === location.origin) return null;
    this.#prune();
    const existing = this.#frames.find((f) => f.origin === origin);
    if (existing) return existing;
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
    const entry = { origin, url: parsed.href, iframe, ready: false, serial, cleanup: () => {}, preparation: null, timer: null };
    const onMessage = (/** @type {MessageEvent} */ event) => {
      if (event.source !== iframe.contentWindow || event.origin !== origin) return;
      const prep = entry.preparation;
      if (prep?.posted) {
        // The prepared App (or its proxy) speaks before its open: held, never answered.
        if (prep.held.length >= MAX_HELD_MESSAGES) this.#drop(entry);
        else prep.held.push(event.data);
        return;
      }
      if (event.data?.jsonrpc === "2.0" && event.data?.method === PROXY_READY && !entry.ready) {
        entry.ready = true;
        this.#post(entry);
      }
    };
    const timer = setTimeout(() => { if (!entry.ready) this.#drop(entry); }, READY_TIMEOUT_MS);
    window.addEventListener("message", onMessage);
    entry.cleanup = () => {
      clearTimeout(timer);
      if (entry.timer !== null) clearTimeout(entry.timer);
      window.removeEventListener("message", onMessage);
    };
    this.#frames.push(entry);
    iframe.src = parsed.href;
    this.#holderEl().append(iframe);
    return entry;
  }

  /**
   * Write an App into its origin's warm frame ahead of its open (`apps/warm`'s `prepared`, with its `frame`).
   * @param {unknown} frame `{origin, url}` @param {unknown} app a PreparedApp
   */
  prepare(frame, app) {
    if (!this.preparing) return;
    const p = checkedApp(app);
    if (!p) return;
    const existing = this.#frames.find((f) => f.origin === p.origin);
    if (existing?.preparation) {
      if (existing.preparation.app.key === p.key) return;
      this.#drop(existing);  // another App of this server was prepared: this one is newer
    }
    const entry = this.offer(frame);
    if (!entry || entry.origin !== p.origin) return;
    entry.preparation = { app: p, posted: false, held: [], renewals: 0 };
    this.#post(entry);
  }

  /** Post the prepared App to a ready frame (once), and renew it before App SDKs give up. @param {WarmFrame} entry */
  #post(entry) {
    const prep = entry.preparation;
    if (!prep || prep.posted || !entry.ready || !entry.iframe.contentWindow) return;
    if (!this.preparing) {  // switched off while the frame loaded: it stays a plain warm frame
      entry.preparation = null;
      return;
    }
    prep.posted = true;
    const win = entry.iframe.contentWindow;
    win.postMessage({ jsonrpc: "2.0", method: APP_DOCUMENT,
      params: { appUrl: prep.app.appUrl, sandbox: prep.app.sandbox } }, entry.origin);
    win.postMessage({ jsonrpc: "2.0", method: RESOURCE_READY,
      params: { html: prep.app.html, sandbox: prep.app.sandbox, appUrl: prep.app.appUrl, permissions: {} } }, entry.origin);
    entry.timer = setTimeout(() => {
      this.#drop(entry);
      // A new frame either way (the App's is spent); prepared again, or past the renewals a plain one.
      const next = this.offer({ origin: entry.origin, url: entry.url });
      if (next && prep.renewals < PREPARED_RENEWALS) {
        next.preparation = { app: prep.app, posted: false, held: [], renewals: prep.renewals + 1 };
      }
    }, this.preparedMaxAgeMs);
  }

  /** The key of the App prepared for `server`, if one is (`apps/warm` then leaves its HTML out). @param {string} server */
  preparedKey(server) {
    return this.#frames.find((f) => f.preparation?.app.server === server)?.preparation?.app.key ?? null;
  }

  /**
   * The prepared frame of this App, out of the pool (the caller's now, for one open), or null.
   * @param {string} server @param {string} resourceUri
   * @returns {TakenApp | null}
   */
  takePrepared(server, resourceUri) {
    const entry = this.#frames.find((f) => f.ready && f.iframe.isConnected && f.preparation?.posted
      && f.preparation.app.server === server && f.preparation.app.resourceUri === resourceUri);
    if (!entry || !entry.preparation) return null;
    const prep = entry.preparation;
    this.#frames.splice(this.#frames.indexOf(entry), 1);
    if (entry.timer !== null) clearTimeout(entry.timer);
    let claimed = false;
    return {
      iframe: entry.iframe,
      key: prep.app.key,
      html: prep.app.html,
      claim: () => {
        if (claimed) return null;
        claimed = true;
        entry.cleanup();  // the bridge's own listener is attached: it hears the App from here on
        return prep.held.splice(0);
      },
      discard: () => {
        claimed = true;
        entry.cleanup();
        entry.iframe.remove();
      },
    };
  }

  /**
   * A ready, unprepared warm frame for `origin`, removed from the pool (it is the caller's now, for one
   * App), or null.
   * @param {string} origin
   * @returns {HTMLIFrameElement | null}
   */
  take(origin) {
    const entry = this.#frames.find((f) => f.origin === origin && f.ready && f.iframe.isConnected && !f.preparation);
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

  /** Prepared Apps, and whether each has booted to its `ui/initialize` (debugging, tests, benchmarks). */
  preparedApps() {
    this.#prune();
    return this.#frames.filter((f) => f.preparation?.posted).map((f) => ({
      server: f.preparation?.app.server, resourceUri: f.preparation?.app.resourceUri,
      serial: f.serial, renewals: f.preparation?.renewals ?? 0,
      booted: (f.preparation?.held ?? []).some((m) => m?.method === "ui/initialize"),
      held: f.preparation?.held.length ?? 0,
    }));
  }

  /** Prepare no more Apps, and drop the frames that hold one (a frame still loading stays plain: #post). */
  stopPreparing() {
    this.preparing = false;
    for (const f of [...this.#frames]) if (f.preparation?.posted) this.#drop(f);
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

/** A PreparedApp as `apps/warm` must send it, or null. @param {unknown} app @returns {PreparedApp | null} */
function checkedApp(app) {
  if (!app || typeof app !== "object") return null;
  const a = /** @type {Record<string, unknown>} */ (app);
  for (const k of ["key", "server", "resourceUri", "origin", "appUrl", "sandbox", "html"]) {
    if (typeof a[k] !== "string" || (k !== "html" && !a[k])) return null;
  }
  let url;
  try { url = new URL(String(a.appUrl)); } catch { return null; }
  if (url.origin !== a.origin || url.pathname !== "/app" || a.origin === location.origin) return null;
  return /** @type {PreparedApp} */ (/** @type {unknown} */ (a));
}
