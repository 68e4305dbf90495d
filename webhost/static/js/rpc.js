// @ts-check
// JSON-RPC 2.0 client over the page's single WebSocket (/ws), with reconnect and backoff.
// Each socket is its own backend session, so after a reconnect every piece of server state
// the page shows must be fetched again: listeners on "open" do that.

import { ERRORS, SESSION_ENDED_CLOSE_CODE } from "./constants.js";

export class RpcError extends Error {
  /**
   * @param {string} message
   * @param {number} code
   * @param {unknown} [data]
   */
  constructor(message, code, data) {
    super(message);
    this.name = "RpcError";
    this.code = code;
    this.data = data;
  }
}

/** Code used locally when the socket drops with requests still in flight. */
export const CONNECTION_LOST = ERRORS.CONNECTION_LOST;

/** @typedef {"connecting" | "open" | "closed"} ConnState */
/** @typedef {{attempt: number, retryInMs: number, everOpened: boolean, endedReason: string | null,
 *   closeReason: string}} ConnInfo */

export class RpcClient {
  #url;
  /** @type {WebSocket | null} */
  #ws = null;
  #nextId = 1;
  /** @type {Map<number, {resolve: (v: any) => void, reject: (e: Error) => void}>} */
  #pending = new Map();
  /** @type {Map<string, Set<(params: any) => void>>} */
  #handlers = new Map();
  /** @type {Set<(state: ConnState, info: ConnInfo) => void>} */
  #stateListeners = new Set();
  /** @type {ConnState} */
  #state = "closed";
  #attempt = 0;
  #everOpened = false;
  /** @type {ReturnType<typeof setTimeout> | null} */
  #retryTimer = null;
  #retryInMs = 0;
  /** The parts received so far of responses sent in parts, by request id. @type {Map<unknown, string[]>} */
  #parts = new Map();
  /** Why webhost ended this tab's session (sessions/end), or null; no automatic reconnect then. @type {string | null} */
  #endedReason = null;
  /** The reason the last socket was closed with ("webhost is stopping"), or "" (a crash gives none). */
  #closeReason = "";

  /** @param {string} [url] */
  constructor(url) {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    // parts=1: a very large result comes as `response/part` frames, which #onPart joins (docs/api.md).
    this.#url = url ?? `${scheme}://${location.host}/ws?parts=1`;
  }

  get state() { return this.#state; }

  connect() {
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    this.#retryTimer = null;
    if (this.#ws && this.#ws.readyState <= WebSocket.OPEN) return;
    this.#setState("connecting");
    const ws = new WebSocket(this.#url);
    this.#ws = ws;
    ws.addEventListener("open", () => {
      this.#attempt = 0;
      this.#endedReason = null;
      this.#closeReason = "";
      this.#everOpened = true;
      this.#setState("open");
    });
    ws.addEventListener("message", (ev) => this.#onMessage(ev.data));
    ws.addEventListener("close", (ev) => {
      if (this.#ws !== ws) return;
      this.#ws = null;
      this.#closeReason = ev.reason || "";
      this.#failPending();
      if (ev.code === SESSION_ENDED_CLOSE_CODE) {
        // Someone ended this session on purpose: say why and wait for the person to reconnect.
        this.#endedReason = ev.reason || "This session was ended.";
        this.#retryInMs = 0;
        this.#setState("closed");
        return;
      }
      this.#scheduleRetry();
    });
    // "error" is always followed by "close"; nothing to do here.
  }

  /** Retry now instead of waiting for the backoff timer. */
  reconnectNow() {
    this.#attempt = 0;
    this.connect();
  }

  /**
   * Send a request; resolves with `result`, rejects with an RpcError.
   * @param {string} method
   * @param {Record<string, unknown>} [params]
   * @returns {Promise<any>}
   */
  request(method, params = {}) {
    const ws = this.#ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) {
      return Promise.reject(new RpcError("Not connected to webhost", CONNECTION_LOST));
    }
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      try {
        ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
      } catch (err) {
        this.#pending.delete(id);
        reject(new RpcError(String(err), CONNECTION_LOST));
      }
    });
  }

  /** Resolves once the socket is open (at once when it is): a view opened from the address asks after that. */
  opened() {
    if (this.#state === "open") return Promise.resolve();
    return new Promise((resolve) => {
      const off = this.onState((state) => {
        if (state !== "open") return;
        off();
        resolve(undefined);
      });
    });
  }

  /**
   * Subscribe to a notification; returns an unsubscribe function.
   * @param {string} method
   * @param {(params: any) => void} handler
   */
  on(method, handler) {
    let set = this.#handlers.get(method);
    if (!set) this.#handlers.set(method, (set = new Set()));
    set.add(handler);
    return () => set?.delete(handler);
  }

  /**
   * Observe connection state; called immediately with the current state.
   * @param {(state: ConnState, info: ConnInfo) => void} listener
   */
  onState(listener) {
    this.#stateListeners.add(listener);
    listener(this.#state, this.#info());
    return () => this.#stateListeners.delete(listener);
  }

  #info() {
    return { attempt: this.#attempt, retryInMs: this.#retryInMs, everOpened: this.#everOpened,
      endedReason: this.#endedReason, closeReason: this.#closeReason };
  }

  /** @param {ConnState} state */
  #setState(state) {
    this.#state = state;
    for (const l of this.#stateListeners) {
      try { l(state, this.#info()); } catch (err) { console.warn("state listener failed", err); }
    }
  }

  #scheduleRetry() {
    this.#attempt += 1;
    // 0.5s, 1s, 2s, ... capped at 15s, with jitter so many tabs don't stampede a restart.
    const base = Math.min(15000, 500 * 2 ** Math.min(this.#attempt - 1, 5));
    this.#retryInMs = Math.round(base * (0.8 + Math.random() * 0.4));
    this.#setState("closed");
    this.#retryTimer = setTimeout(() => this.connect(), this.#retryInMs);
  }

  #failPending() {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    this.#parts.clear();
    for (const p of pending) p.reject(new RpcError("Connection to webhost lost", CONNECTION_LOST));
  }

  /** @param {unknown} data */
  #onMessage(data) {
    let msg;
    try {
      msg = JSON.parse(String(data));
    } catch {
      console.warn("webhost: non-JSON frame ignored");
      return;
    }
    for (const m of Array.isArray(msg) ? msg : [msg]) this.#dispatch(m);
  }

  /**
   * One part of a response sent in parts: its JSON text, joined and read as one frame after the last.
   * @param {any} params
   */
  #onPart(params) {
    const texts = this.#parts.get(params.id) ?? [];
    if (params.index !== texts.length) {  // never happens on one socket; fail the request rather than misjoin
      this.#parts.delete(params.id);
      this.#dispatch({ id: params.id, error: { code: ERRORS.INTERNAL_ERROR, message: "a part of the response was lost" } });
      return;
    }
    texts.push(String(params.text));
    if (!params.last) {
      this.#parts.set(params.id, texts);
      return;
    }
    this.#parts.delete(params.id);
    this.#onMessage(texts.join(""));
  }

  /** @param {any} msg */
  #dispatch(msg) {
    if (!msg || typeof msg !== "object") return;
    if (msg.method === "response/part" && msg.params) {
      this.#onPart(msg.params);
      return;
    }
    if ("id" in msg && msg.id !== null && !("method" in msg)) {
      const p = this.#pending.get(msg.id);
      if (!p) return;
      this.#pending.delete(msg.id);
      if (msg.error) {
        const e = msg.error;
        p.reject(new RpcError(String(e.message ?? "Error"), Number(e.code ?? ERRORS.INTERNAL_ERROR), e.data));
      } else {
        p.resolve(msg.result);
      }
      return;
    }
    if (typeof msg.method === "string") {
      for (const handler of this.#handlers.get(msg.method) ?? []) {
        try {
          handler(msg.params ?? {});
        } catch (err) {
          console.warn(`webhost: handler for ${msg.method} failed`, err);
        }
      }
    }
  }
}

/**
 * A readable one-line description of any error thrown by request().
 * @param {unknown} err
 */
export function describeError(err) {
  if (err instanceof RpcError) {
    const data = /** @type {any} */ (err.data);
    let extra = "";
    if (err.code === ERRORS.NOT_CONNECTED && data?.reason) extra = ` (${data.reason})`;
    if (err.code === ERRORS.UPSTREAM_TIMEOUT && data?.timeoutSeconds) extra = ` after ${data.timeoutSeconds}s`;
    return `${err.message}${extra}`;
  }
  return err instanceof Error ? err.message : String(err);
}
