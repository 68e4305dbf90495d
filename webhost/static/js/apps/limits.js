// @ts-check
// Flood protection for one App frame: a per-second message budget, and a reporter that sends
// each kind of problem to the backend at most once per quiet period, with counts, so a hostile
// App can neither freeze the page nor fill the audit log.

import { APP_MAX_IN_FLIGHT } from "../constants.js";

/** Messages accepted from one frame per second; the rest are dropped before parsing. */
export const MAX_MESSAGES_PER_SECOND = 200;
/** App requests relayed to the backend at once per frame; excess ones get an error (the backend's cap). */
export const MAX_IN_FLIGHT = APP_MAX_IN_FLIGHT;
/**
 * The largest params of an App request relayed to the backend, in UTF-8 bytes: the page's WebSocket frame
 * (at most 16 MiB, webhost/ws.py MAX_FRAME and the server's ws_max_size) must hold them with the envelope.
 */
export const MAX_REQUEST_BYTES = 15 * 1024 * 1024;
/** How deeply an App request's params may nest (the backend's JSON parsers stop near 1000 levels). */
export const MAX_REQUEST_DEPTH = 100;

/**
 * Why an App request's params cannot be relayed to the backend, or null. Such a request is answered at
 * once: relayed, the backend could not read the frame and its answer could not name the request.
 * @param {unknown} params
 */
export function requestProblem(params) {
  if (nestedDeeperThan(params, MAX_REQUEST_DEPTH)) return `its params nest deeper than ${MAX_REQUEST_DEPTH} levels`;
  let text;
  try { text = JSON.stringify(params); } catch { return "its params are not JSON"; }
  if (typeof text !== "string") return null;
  const bytes = text.length * 3 <= MAX_REQUEST_BYTES ? text.length : new TextEncoder().encode(text).length;
  return bytes > MAX_REQUEST_BYTES ? `it is larger than ${MAX_REQUEST_BYTES} bytes` : null;
}

/** Whether `value` has objects or arrays nested more than `limit` deep (a walk that stops there). @param {unknown} value @param {number} limit */
function nestedDeeperThan(value, limit) {
  /** @type {[unknown, number][]} */
  const stack = [[value, 1]];
  while (stack.length) {
    const [item, depth] = /** @type {[unknown, number]} */ (stack.pop());
    if (item === null || typeof item !== "object") continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
    }
  }
  return false;
}

export class RateWindow {
  #limit;
  #windowStart = 0;
  #count = 0;
  dropped = 0;

  /** @param {number} limit per second */
  constructor(limit) { this.#limit = limit; }

  /** Count one message; false when over budget (drop it). @param {number} [now] */
  take(now = performance.now()) {
    if (now - this.#windowStart >= 1000) {
      this.#windowStart = now;
      this.#count = 0;
    }
    this.#count += 1;
    if (this.#count > this.#limit) {
      this.dropped += 1;
      return false;
    }
    return true;
  }
}

/**
 * Throttled reporting: the first occurrence of a key is reported at once, repeats within
 * `quietMs` are only counted and summarised with the next report; `maxReports` caps the total.
 */
export class Reporter {
  #send;
  #quietMs;
  #maxReports;
  #sent = 0;
  /** @type {Map<string, {last: number, suppressed: number, timer: ReturnType<typeof setTimeout> | null, detail: any}>} */
  #keys = new Map();
  #closed = false;

  /**
   * @param {(detail: Record<string, unknown>) => void} send
   * @param {{quietMs?: number, maxReports?: number}} [opts]
   */
  constructor(send, { quietMs = 5000, maxReports = 30 } = {}) {
    this.#send = send;
    this.#quietMs = quietMs;
    this.#maxReports = maxReports;
  }

  /** @param {string} key @param {Record<string, unknown>} detail */
  report(key, detail) {
    if (this.#closed) return;
    const now = performance.now();
    let state = this.#keys.get(key);
    if (!state) {
      state = { last: -Infinity, suppressed: 0, timer: null, detail };
      this.#keys.set(key, state);
    }
    if (now - state.last >= this.#quietMs) {
      state.last = now;
      this.#emit({ ...detail, count: 1 });
      return;
    }
    state.suppressed += 1;
    state.detail = detail;
    if (!state.timer) {
      const s = state;
      s.timer = setTimeout(() => {
        s.timer = null;
        if (!s.suppressed) return;
        const n = s.suppressed;
        s.suppressed = 0;
        s.last = performance.now();
        this.#emit({ ...s.detail, count: n, summary: `${String(s.detail.summary ?? key)} (×${n} more)` });
      }, this.#quietMs - (now - state.last));
    }
  }

  /** @param {Record<string, unknown>} detail */
  #emit(detail) {
    if (this.#sent >= this.#maxReports) return;
    this.#sent += 1;
    if (this.#sent === this.#maxReports) detail = { ...detail, summary: `${String(detail.summary)} (report limit reached; further reports from this app are dropped)` };
    try { this.#send(detail); } catch { /* reporting must never break the bridge */ }
  }

  close() {
    this.#closed = true;
    for (const s of this.#keys.values()) if (s.timer) clearTimeout(s.timer);
    this.#keys.clear();
  }
}
