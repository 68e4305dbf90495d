// @ts-check
// Flood protection for one App frame: a per-second message budget, and a reporter that sends
// each kind of problem to the backend at most once per quiet period, with counts, so a hostile
// App can neither freeze the page nor fill the audit log.

import { APP_MAX_IN_FLIGHT } from "../constants.js";

/** Messages accepted from one frame per second; the rest are dropped before parsing. */
export const MAX_MESSAGES_PER_SECOND = 200;
/** App requests relayed to the backend at once per frame; excess ones get an error (the backend's cap). */
export const MAX_IN_FLIGHT = APP_MAX_IN_FLIGHT;

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
