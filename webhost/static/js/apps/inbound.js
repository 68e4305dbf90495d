// @ts-check
// Every message from an App's frame (already known to come from it: messages.js messageSource),
// routed to the concern that owns it, in order: the flood limit, the JSON-RPC shape, the handshake's
// order (nothing but ui/initialize and ping before the App's ui/initialize), then requests,
// notifications and responses. What the frame itself must do is asked of its bridge (InboundHost).
// Before ui/initialize nothing but ping is served; between ui/initialize and ui/notifications/initialized
// requests are served with a warning (as the ext-apps AppBridge does: real Apps call tools there).

import { ERRORS } from "../constants.js";
import { BEFORE_INITIALIZED, INITIALIZE } from "./handshake.js";
import { MAX_MESSAGES_PER_SECOND, RateWindow } from "./limits.js";
import { CSP_VIOLATION, DROPPED, IGNORED_NOTIFICATIONS, PROXY_READY, SIZE_CHANGED, classify, looksLikeRequest,
  validId } from "./messages.js";
import { isRelayed } from "./relay.js";

/**
 * @typedef {object} InboundHost what the router asks of the frame (the bridge)
 * @property {string} frameId
 * @property {() => boolean} initialized whether the App sent ui/notifications/initialized
 * @property {() => boolean} handshakeStarted whether the App sent ui/initialize (and was answered)
 * @property {import("./channel.js").AppChannel} channel
 * @property {import("./diagnostics.js").Diagnostics} diagnostics
 * @property {import("./relay.js").RequestRelay} relay
 * @property {(id: string | number, params: any) => void} initialize answer ui/initialize
 * @property {() => void} onInitialized ui/notifications/initialized
 * @property {(method: string) => void} proxyReady the sandbox proxy is loaded
 * @property {(id: string | number, params: any) => void} requestDisplayMode ui/request-display-mode
 * @property {(params: any) => void} sizeChanged the App's content height
 * @property {() => void} teardownRequested ui/notifications/request-teardown
 */

export class InboundRouter {
  #host;
  #rate = new RateWindow(MAX_MESSAGES_PER_SECOND);
  /** Methods sent before the handshake finished, logged once each per kind ("refused:…", "served:…"). */
  #earlyLogged = new Set();

  /** @param {InboundHost} host */
  constructor(host) {
    this.#host = host;
  }

  /** One message from the App's frame, live or held while it was prepared. @param {any} msg */
  receive(msg) {
    const { channel, diagnostics } = this.#host;
    if (!this.#rate.take()) {
      diagnostics.violation("flood", `more than ${MAX_MESSAGES_PER_SECOND} messages per second; excess dropped`,
        { dropped: this.#rate.dropped });
      // A dropped request still gets an answer at once, so the App never waits for a timeout.
      if (looksLikeRequest(msg)) {
        channel.respondError(msg.id, ERRORS.UPSTREAM_ERROR,
          `Rate limit: more than ${MAX_MESSAGES_PER_SECOND} messages per second from this app; request dropped`);
      }
      return;
    }
    const kind = classify(msg);
    if (kind.kind === "ignore") return;
    if (kind.kind === "malformed") {
      diagnostics.violation("malformed", `malformed JSON-RPC from the app: ${kind.reason}`);
      if (validId(msg.id)) channel.respondError(msg.id, ERRORS.INVALID_REQUEST, `Invalid Request: ${kind.reason}`);
      return;
    }
    diagnostics.pushTrace("in", msg);
    try {
      if (kind.kind === "request") this.#onRequest(msg);
      else if (kind.kind === "notification") this.#onNotification(msg);
      else if (!channel.answered(msg)) {
        diagnostics.violation("unexpected-response", "a response to a request the host never sent (dropped)");
      }
    } catch (err) {
      console.warn("webhost apps: handling an app message failed", err);
      if (kind.kind === "request") channel.respondError(msg.id, ERRORS.INTERNAL_ERROR, "Internal error in the host");
    }
  }

  /** @param {any} msg */
  #onRequest(msg) {
    const host = this.#host;
    const { id, method } = msg;
    const params = msg.params ?? {};
    if (!host.initialized() && !BEFORE_INITIALIZED.has(method)) {
      if (!host.handshakeStarted()) {
        // Refused, never run: nothing but ui/initialize (and ping) before the App's ui/initialize.
        this.#logEarly("refused", method);
        host.channel.respondError(id, ERRORS.INVALID_REQUEST, `${method} refused: the app sent it before ui/initialize`);
        return;
      }
      // After ui/initialize, before ui/notifications/initialized: served, with a warning (the App SDK
      // only warns, and Apps such as the ext-apps customer-segmentation example load their data here).
      this.#logEarly("served", method);
    }
    if (INITIALIZE.has(method)) return host.initialize(id, params);
    if (method === "ping") return host.channel.respond(id, {});
    if (method === "ui/request-display-mode") return host.requestDisplayMode(id, params);
    if (isRelayed(method)) return host.relay.relay(id, method, params);  // (bounded in size and depth there)
    host.channel.respondError(id, ERRORS.METHOD_NOT_FOUND, `Method not found: ${method}`);
  }

  /**
   * A request that came before the handshake finished: logged once per method and outcome, in the console
   * and the frame's lifecycle (the activity log; `webhost check` reads it).
   * @param {"refused" | "served"} outcome @param {string} method
   */
  #logEarly(outcome, method) {
    const key = `${outcome}:${method}`;
    if (this.#earlyLogged.has(key)) return;
    this.#earlyLogged.add(key);
    const host = this.#host;
    if (outcome === "refused") {
      console.warn(`webhost apps: ${host.frameId} sent ${method} before ui/initialize (refused)`);
      host.diagnostics.lifecycle(`request before ui/initialize refused: ${method}`, { method, outcome });
    } else {
      console.warn(`webhost apps: ${host.frameId} sent ${method} after ui/initialize but before `
        + "ui/notifications/initialized (served)");
      host.diagnostics.lifecycle(`request before ui/notifications/initialized served: ${method}`, { method, outcome });
    }
  }

  /** @param {any} msg */
  #onNotification(msg) {
    const host = this.#host;
    const { method } = msg;
    const params = msg.params ?? {};
    if (PROXY_READY.has(method)) return host.proxyReady(method);
    if (method === CSP_VIOLATION) return host.diagnostics.cspViolation(params);
    if (method === DROPPED) {
      // The proxy dropped a message the app sent: a reserved one, or a request it could not pass on (too
      // large, not JSON, a method that is not a string), which it answered itself. Advisory: the app
      // shares the proxy's realm.
      const dropped = String(params?.method ?? "?").slice(0, 200);
      if (typeof params?.reason === "string") {
        const reason = params.reason.slice(0, 200);
        host.diagnostics.violation("malformed", `the proxy refused a request from the app (${dropped}): ${reason}`,
          { method: dropped, reason });
        return;
      }
      host.diagnostics.violation("sandbox-message", `the app sent reserved ${dropped} (dropped by the proxy)`, { method: dropped });
      return;
    }
    if (method.startsWith("ui/notifications/sandbox-") || method.startsWith("ui/sandbox-")) {
      host.diagnostics.violation("sandbox-message", `reserved sandbox message ${method} from the frame (dropped)`, { method });
      return;
    }
    if (method === "ui/notifications/initialized") return host.onInitialized();
    if (SIZE_CHANGED.has(method)) return host.sizeChanged(params);
    if (method === "notifications/message") return host.diagnostics.log(params);
    if (method === "ui/notifications/request-teardown") return host.teardownRequested();
    if (method === "notifications/cancelled") return host.relay.cancel(params);
    if (IGNORED_NOTIFICATIONS.has(method)) return;
    // Unknown notifications are allowed by JSON-RPC; they stay in the trace only.
  }
}
