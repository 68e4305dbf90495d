// @ts-check
// The host's end of one App frame's postMessage channel: every message to the frame goes out here,
// to the frame's own origin (never "*") and traced; traffic for the App itself is held back until it
// is initialized (mcp-apps §4); host→App requests wait for their answers, bounded.

import { ERRORS } from "../constants.js";
import { short } from "./messages.js";

const MAX_QUEUE = 1000;

/** A host→App request that failed: the App's JSON-RPC error, a timeout or the frame closing. */
export class AppRequestError extends Error {
  /** @param {string} message @param {number} code @param {unknown} [data] */
  constructor(message, code, data) {
    super(message);
    this.name = "AppRequestError";
    this.code = code;
    this.data = data;
  }
}

/**
 * @typedef {object} ChannelOptions
 * @property {() => HTMLIFrameElement} frame the frame now (a warm frame may replace the first one)
 * @property {string} origin the frame's sandbox origin
 * @property {() => boolean} closed whether the frame is closed (nothing goes out then)
 * @property {(msg: any) => void} posted told of every message posted (the trace)
 */

export class AppChannel {
  #opts;
  /** @type {any[]} */
  #queue = [];
  #open = false;
  #nextId = 1;
  /** @type {Map<number, {resolve: (v: any) => void, reject: (e: Error) => void, timer: ReturnType<typeof setTimeout>, method: string}>} */
  #pending = new Map();

  /** @param {ChannelOptions} opts */
  constructor(opts) {
    this.#opts = opts;
  }

  /** Post to the frame now (the sandbox proxy, or an initialized App). @param {any} msg */
  post(msg) {
    if (this.#opts.closed()) return;
    const win = this.#opts.frame().contentWindow;
    if (!win) return;
    try {
      win.postMessage(msg, this.#opts.origin); // never "*"
    } catch (err) {
      console.warn("webhost apps: could not post to the app", err);
      return;
    }
    this.#opts.posted(msg);
  }

  /** Host→App traffic: held back until open() (ui/notifications/initialized). @param {any} msg */
  send(msg) {
    if (this.#opts.closed()) return;
    if (!this.#open) {
      if (this.#queue.length >= MAX_QUEUE) this.#queue.shift();
      this.#queue.push(msg);
      return;
    }
    this.post(msg);
  }

  /** The App is initialized: what was held back goes out, and from now on everything at once. */
  open() {
    this.#open = true;
    const queued = this.#queue;
    this.#queue = [];
    for (const msg of queued) this.post(msg);
  }

  /** @param {string | number} id @param {unknown} result */
  respond(id, result) {
    this.post({ jsonrpc: "2.0", id, result });
  }

  /** @param {string | number} id @param {number} code @param {string} message */
  respondError(id, code, message) {
    this.post({ jsonrpc: "2.0", id, error: { code, message } });
  }

  /**
   * Send a request to the App (held back until it is initialized) and wait for its answer.
   * @param {string} method @param {Record<string, unknown>} params @param {number} timeoutMs
   * @returns {Promise<any>}
   */
  request(method, params, timeoutMs) {
    if (this.#opts.closed()) return Promise.reject(new AppRequestError("the app is closed", ERRORS.CANCELLED));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new AppRequestError(`the app did not answer ${method} within ${timeoutMs} ms`, ERRORS.UPSTREAM_TIMEOUT));
      }, timeoutMs);
      this.#pending.set(id, { resolve, reject, timer, method });
      this.send({ jsonrpc: "2.0", id, method, params });
    });
  }

  /** Post a request now without waiting for its answer (an App that is going away). @param {string} method @param {Record<string, unknown>} params */
  requestNoWait(method, params) {
    this.post({ jsonrpc: "2.0", id: this.#nextId++, method, params });
  }

  /**
   * The App answered: settle the request it answers. False when the host never sent that request.
   * @param {any} msg a response (already classified)
   */
  answered(msg) {
    const entry = typeof msg.id === "number" ? this.#pending.get(msg.id) : undefined;
    if (!entry) return false;
    this.#pending.delete(msg.id);
    clearTimeout(entry.timer);
    if ("error" in msg) {
      const e = msg.error;
      entry.reject(new AppRequestError(short(e.message ?? "error", 500), Number(e.code) || ERRORS.INTERNAL_ERROR, e.data));
    } else {
      entry.resolve(msg.result);
    }
    return true;
  }

  /** The frame closed: every request still waiting fails, and nothing held back goes out. @param {string} reason */
  close(reason) {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) {
      clearTimeout(p.timer);
      p.reject(new AppRequestError(`the app was closed (${reason})`, ERRORS.CANCELLED));
    }
    this.#queue = [];
  }
}
