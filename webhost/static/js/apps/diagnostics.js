// @ts-check
// What one App frame did and what went wrong, for the person (the panel's Info view), for tests
// (`apps.debug.trace`) and for the backend's activity and audit logs (`apps/event`): the recent
// traffic, the App's own log messages, and violations, each reported at a bounded rate.

import { compatFlagFor } from "./csp-compat.js";
import { Reporter, RateWindow } from "./limits.js";
import { short } from "./messages.js";

const TRACE_SIZE = 300;
const LOG_SIZE = 100;
const LOGS_TO_BACKEND_PER_SECOND = 20;
const PROBLEM_COALESCE_MS = 250;
const ERROR_LEVELS = new Set(["error", "critical", "alert", "emergency"]);

/**
 * @typedef {object} DiagnosticsOptions
 * @property {import("../rpc.js").RpcClient} rpc
 * @property {string} frameId
 * @property {EventTarget} events where "log" and "problem" are dispatched (the bridge)
 * @property {() => boolean} closed whether the frame is closed (then only lifecycle events still go out)
 * @property {(ms: number, fn: () => void) => void} later a timer the frame clears when it closes
 */

export class Diagnostics {
  /** The App's log messages (notifications/message). @type {{ts: number, level: string, logger?: string, text: string}[]} */
  logs = [];
  /** @type {{ts: number, kind: string, summary: string, count?: number}[]} */
  problems = [];
  /** Recent traffic, newest last: {ts, dir: "in" | "out" | "local", msg}. @type {{ts: number, dir: string, msg: any}[]} */
  trace = [];
  /** The cspCompat flags that would allow what the App's CSP blocked (only an administrator can set them). @type {Set<string>} */
  compatFlags = new Set();
  /** The App logged at level error or worse (RFC 5424 names, as MCP's logging uses): it says it is in trouble. */
  reportedError = false;
  #opts;
  #logRate = new RateWindow(LOGS_TO_BACKEND_PER_SECOND);
  #reporter;
  #cspReporter;
  #problemQueued = false;

  /** @param {DiagnosticsOptions} opts */
  constructor(opts) {
    this.#opts = opts;
    this.#reporter = new Reporter((detail) => this.event("violation", detail));
    this.#cspReporter = new Reporter((detail) => this.event("csp-violation", detail), { quietMs: 2000, maxReports: 20 });
  }

  /** @param {string} dir @param {any} msg */
  pushTrace(dir, msg) {
    this.trace.push({ ts: Date.now(), dir, msg });
    if (this.trace.length > TRACE_SIZE) this.trace.splice(0, this.trace.length - TRACE_SIZE);
  }

  /** A message posted to the frame (the App's HTML is traced by its size only). @param {any} msg */
  traceOut(msg) {
    if (msg.method === "ui/notifications/sandbox-resource-ready") {
      msg = { ...msg, params: { ...msg.params, html: `[${msg.params.html.length} characters]` } };
    }
    this.pushTrace("out", msg);
  }

  /** The App's notifications/message: kept for the Info view, forwarded to the backend (rate-limited). @param {any} params */
  log(params) {
    const level = typeof params.level === "string" ? params.level.slice(0, 20) : "info";
    const logger = typeof params.logger === "string" ? params.logger.slice(0, 100) : undefined;
    const text = short(params.data, 2000);
    if (ERROR_LEVELS.has(level)) this.reportedError = true;
    this.logs.push({ ts: Date.now(), level, logger, text });
    if (this.logs.length > LOG_SIZE) this.logs.splice(0, this.logs.length - LOG_SIZE);
    this.#opts.events.dispatchEvent(new Event("log"));
    if (!this.#logRate.take()) {
      this.violation("log-flood", `more than ${LOGS_TO_BACKEND_PER_SECOND} log messages per second; excess not forwarded`);
      return;
    }
    this.event("log", { summary: `[${level}] ${logger ? `${logger}: ` : ""}${short(text, 240)}`, level, logger,
      data: short(params.data, 4000) });
  }

  /** The proxy reports a CSP violation of the App. @param {any} params */
  cspViolation(params) {
    const blocked = short(params.blockedURI ?? "", 300);
    const directive = short(params.effectiveDirective ?? params.violatedDirective ?? "", 80);
    const flag = compatFlagFor(blocked, directive);
    const summary = `CSP blocked ${blocked || "an inline resource"} (${directive})`
      + (flag ? `; an administrator can allow it with cspCompat "${flag}"` : "");
    if (flag) this.compatFlags.add(flag);
    this.noteProblem("csp", summary);
    this.#cspReporter.report(`${directive} ${blocked}`, {
      summary, blockedURI: blocked, effectiveDirective: directive,
      sourceFile: short(params.sourceFile ?? "", 300), lineNumber: Number(params.lineNumber) || 0,
      ...(flag ? { cspCompat: flag } : {}),
    });
  }

  /** Something the App did that the host refused or dropped. @param {string} key @param {string} summary @param {Record<string, unknown>} [extra] */
  violation(key, summary, extra = {}) {
    this.noteProblem(key, summary);
    this.#reporter.report(key, { summary, reason: key, ...extra });
  }

  /** Keep a short local list for the Info view; repeats of the last kind are counted, not added. @param {string} kind @param {string} summary */
  noteProblem(kind, summary) {
    const problems = this.problems;
    const last = problems[problems.length - 1];
    if (last && last.kind === kind && last.summary.startsWith(summary)) {
      last.count = (last.count ?? 1) + 1;
      last.summary = `${summary} (×${last.count})`;
      last.ts = Date.now();
    } else {
      problems.push({ ts: Date.now(), kind, summary, count: 1 });
      if (problems.length > LOG_SIZE) problems.shift();
    }
    if (this.#problemQueued) return;
    this.#problemQueued = true;
    this.#opts.later(PROBLEM_COALESCE_MS, () => {
      this.#problemQueued = false;
      this.#opts.events.dispatchEvent(new Event("problem"));
    });
  }

  /** @param {string} summary @param {Record<string, unknown>} detail */
  lifecycle(summary, detail) {
    this.event("lifecycle", { summary, ...detail });
  }

  /** Report to the backend (activity and audit logs); never awaited, never throws. @param {string} kind @param {Record<string, unknown>} detail */
  event(kind, detail) {
    if (this.#opts.closed() && kind !== "lifecycle") return;
    this.#opts.rpc.request("apps/event", { frameId: this.#opts.frameId, kind, detail }).catch(() => { /* closed or offline */ });
  }

  /** The frame closed: repeats still being counted are dropped. */
  close() {
    this.#reporter.close();
    this.#cspReporter.close();
  }
}
