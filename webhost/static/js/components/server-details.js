// @ts-check
// A server's details: status, identity, capabilities, instructions, the checks it offers, and its own log
// (server/log notifications, i.e. the server's notifications/message). Each check is offered only where it
// exists: ping on a legacy-era server (2026-07-28 removed it), and the log level on a server that declares
// `logging` (sent by logging/setLevel before 2026-07-28, with each request's _meta since).

import { h, replaceChildren, prettyJson } from "../html.js";
import { jsonDetails } from "./content-view.js";
import { describeError } from "../rpc.js";

const LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

export class ServerDetails {
  /** @type {import("./server-card.js").ServerCard} */
  card;
  #info = h("div", { class: "server-info" });
  #log = h("ol", { class: "server-log", "aria-label": "Server log" });
  #lastSeq = 0;
  #pingOut = h("span", { class: "muted ping-result", "aria-live": "polite", dataset: { testid: "ping-result" } });
  #levelOut = h("span", { class: "muted", "aria-live": "polite", dataset: { testid: "log-level-result" } });
  /** @type {HTMLElement} */
  #pingRow;
  /** @type {HTMLElement} */
  #levelRow;
  #checksNote = h("p", { class: "muted server-checks-note", dataset: { testid: "server-checks-note" } });
  #levelVia = h("span", { class: "muted small", dataset: { testid: "log-level-via" } });
  /** @type {HTMLSelectElement} */
  #level;
  #noPing = h("p", { class: "muted small", dataset: { testid: "no-ping" },
    text: "Ping: 2026-07-28 has no ping (a request that is answered shows the server is there)." });
  el;

  /** @param {import("./server-card.js").ServerCard} card */
  constructor(card) {
    this.card = card;
    const clear = h("button", { type: "button", class: "small ghost", text: "Clear log" });
    clear.addEventListener("click", () => {
      card.logs.length = 0;
      this.#lastSeq = 0;
      this.#log.replaceChildren();
      this.refresh();
    });
    const ping = h("button", { type: "button", class: "small", text: "Ping", dataset: { action: "ping" } });
    ping.addEventListener("click", async () => {
      ping.disabled = true;
      this.#pingOut.textContent = "…";
      try {
        const r = await card.rpc.request("servers/ping", { server: card.name });
        this.#pingOut.textContent = `${Number(r?.ms).toFixed(1)} ms`;
        this.#pingOut.dataset.ms = String(r?.ms);
      } catch (err) {
        this.#pingOut.textContent = describeError(err);
        delete this.#pingOut.dataset.ms;
      } finally {
        ping.disabled = false;
      }
    });
    const level = h("select", { name: "log-level", "aria-label": "Log level the server sends",
      dataset: { action: "set-log-level" } },
    h("option", { value: "", text: "— log level —" }), LEVELS.map((l) => h("option", { value: l, text: l })));
    level.addEventListener("change", async () => {
      if (!level.value) return;
      this.#levelOut.textContent = "…";
      try {
        await card.rpc.request("logging/setLevel", { server: card.name, level: level.value });
        this.#levelOut.textContent = `set to ${level.value}`;
        this.#levelOut.dataset.level = level.value;
      } catch (err) {
        this.#levelOut.textContent = describeError(err);
      }
    });
    this.#level = level;
    this.#pingRow = h("div", { class: "server-tool-row" }, ping, this.#pingOut);
    this.#levelRow = h("div", { class: "server-tool-row" }, h("label", { class: "muted", text: "Log level " }), level,
      this.#levelOut, this.#levelVia);
    this.el = h("article", { class: "view server-view" },
      this.#info,
      h("section", { class: "server-tools" },
        h("div", { class: "section-head" }, h("h3", { text: "Check" })),
        this.#pingRow, this.#noPing, this.#levelRow, this.#checksNote),
      h("section", { class: "log-section" },
        h("div", { class: "section-head" }, h("h3", { text: "Server log" }), h("span", { class: "spacer" }), clear),
        this.#log));
    this.refresh();
  }

  /** Show only the checks this server has, and say why the others are missing. @param {any} s */
  #offerChecks(s) {
    const can = checksOf(s);
    this.#pingRow.hidden = !can.ping;
    this.#noPing.hidden = !(can.connected && can.modern);
    this.#levelRow.hidden = !can.level;
    this.#checksNote.textContent = !can.connected ? "The checks need the server connected."
      : !can.logging ? `This server does not declare logging, so it has no log level to set${can.modern
        ? " (on 2026-07-28 the level would travel with each request)." : "."}` : "";
    this.#checksNote.hidden = !this.#checksNote.textContent;
  }

  refresh() {
    const s = this.card.state;
    this.#offerChecks(s);
    const info = s.serverInfo ?? {};
    const log = s.logLevel;
    if (log?.level && document.activeElement !== this.#level) this.#level.value = String(log.level);
    this.#levelVia.textContent = !log ? "" : log.via === "request"
      ? "sent with each request (_meta io.modelcontextprotocol/logLevel)" : "sent to the server (logging/setLevel)";
    this.#levelVia.dataset.via = log?.via ?? "";
    replaceChildren(this.#info,
      h("header", { class: "view-head" },
        h("div", { class: "view-title-row" },
          h("h2", { class: "view-title", text: String(s.name) }),
          h("span", { class: `status-pill st-${String(s.status)}`, text: String(s.status) })),
        h("p", { class: "view-sub muted", text: "Server details" })),
      s.error ? h("p", { class: "inline-error", text: String(s.error) }) : null,
      h("dl", { class: "facts" },
        fact("Transport", s.transport),
        fact("Server", [info.title ?? info.name, info.version].filter(Boolean).join(" ")),
        fact("Protocol", [s.protocolVersion, s.era].filter(Boolean).join(" · ")),
        fact("Era choice", s.protocolChoice === "auto" || !s.protocolChoice ? "auto (server/discover, else initialize)"
          : s.protocolChoice === "legacy" ? "legacy only (initialize)" : `${s.protocolChoice} only`),
        fact("Tools", this.card.lists.tools.state === "ok" ? String(this.card.lists.tools.items.length) : null)),
      s.instructions ? h("section", {}, h("h3", { text: "Instructions" }), h("pre", { class: "text-content", text: String(s.instructions) })) : null,
      s.capabilities || s.clientCapabilities ? capabilityGrid(s.capabilities ?? {}, s.clientCapabilities ?? {}, log?.via) : null,
      cacheHints(s, this.card.lists),
      s.capabilities ? jsonDetails(s.capabilities, "Capabilities (JSON)", false) : null);
    const logs = this.card.logs;
    if (!logs.length || logs[logs.length - 1].seq < this.#lastSeq) {
      this.#log.replaceChildren();
      this.#lastSeq = 0;
    }
    for (const entry of logs) {
      if (entry.seq > this.#lastSeq) this.#log.append(logLine(entry));
    }
    this.#lastSeq = logs.length ? logs[logs.length - 1].seq : 0;
    while (this.#log.childElementCount > logs.length) this.#log.firstElementChild?.remove();
    if (!logs.length) this.#log.replaceChildren(h("li", { class: "empty muted", text: "No log messages yet." }));
    else this.#log.querySelector(".empty")?.remove();
  }
}

/**
 * Which checks the server has: ping exists before 2026-07-28 only (a 2026-07-28 server answers it "method not
 * found"); a log level for a server that declares `logging`, in either era (how it travels differs).
 * @param {any} s the server's state
 */
function checksOf(s) {
  const connected = s.status === "connected";
  const legacy = s.era === "legacy";
  const logging = Boolean(s.capabilities?.logging);
  return { connected, ping: connected && legacy, level: connected && logging, modern: s.era === "modern", logging };
}

// The rows of the grid: who offers each (a server capability, webhost's as the client, or either).
const CAPABILITIES = /** @type {const} */ ([
  ["tools", "Tools", "server"], ["resources", "Resources", "server"], ["prompts", "Prompts", "server"],
  ["completions", "Completions", "server"], ["logging", "Logging", "server"],
  ["sampling", "Sampling", "client"], ["elicitation", "Elicitation", "client"], ["roots", "Roots", "client"],
  ["tasks", "Tasks", "both"], ["extensions", "Extensions", "both"], ["experimental", "Experimental", "both"],
]);

/**
 * A readable grid of what the server offers and what webhost offers it: one row per capability,
 * `[data-cap="NAME"]`, with a cell per side (`data-side`, `data-supported`) naming the sub-features.
 * The logging row says how the server takes the level (`logVia`: "request" on 2026-07-28, else "setLevel").
 * @param {Record<string, any>} server @param {Record<string, any>} client @param {string} [logVia]
 */
function capabilityGrid(server, client, logVia) {
  /** @type {Array<readonly [string, string, string]>} */
  const rows = [...CAPABILITIES];
  const known = new Set(rows.map(([key]) => key));
  for (const k of new Set([...Object.keys(server), ...Object.keys(client)])) if (!known.has(k)) rows.push([k, k, "both"]);
  /** @param {Record<string, any>} caps @param {string} key @param {"server" | "client"} side @param {string} who */
  const cell = (caps, key, side, who) => {
    const applies = who === "both" || who === side;
    const value = caps[key];
    const supported = value !== undefined && value !== null && value !== false;
    let detail = !applies ? "n/a" : !supported ? "no" : features(value);
    const via = key === "logging" && side === "server" && logVia ? logVia : null;
    if (via && supported) detail += via === "request" ? " (level per request, in _meta)" : " (level by logging/setLevel)";
    return h("td", { class: supported ? "cap-yes" : "cap-no muted", dataset: { side, supported: String(supported),
      ...(via ? { logVia: via } : {}) }, text: detail });
  };
  return h("section", { class: "capabilities" },
    h("h3", { text: "Capabilities" }),
    h("table", { class: "cap-grid", dataset: { testid: "capabilities" } },
      h("thead", {}, h("tr", {}, h("th", { scope: "col", text: "Capability" }), h("th", { scope: "col", text: "Server" }),
        h("th", { scope: "col", text: "webhost (client)" }))),
      h("tbody", {}, rows.map(([key, label, who]) =>
        h("tr", { dataset: { cap: key } }, h("th", { scope: "row", text: label }),
          cell(server, key, "server", who), cell(client, key, "client", who))))));
}

/**
 * The server's caching hints (SEP-2549, 2026-07-28): `server/discover`'s and each list's as last listed, one
 * `[data-cache-method="METHOD"]` row each; nothing for a server that sends none.
 * @param {any} state @param {Record<string, import("./server-card.js").ListState>} lists
 */
function cacheHints(state, lists) {
  /** @type {Array<[string, any]>} */
  const rows = [["server/discover", state.cacheHints?.["server/discover"]],
    ["tools/list", lists.tools.cacheHint ?? state.cacheHints?.["tools/list"]],
    ["resources/list", lists.resources.cacheHint ?? state.cacheHints?.["resources/list"]],
    ["resources/templates/list", lists.templates.cacheHint ?? state.cacheHints?.["resources/templates/list"]],
    ["prompts/list", lists.prompts.cacheHint ?? state.cacheHints?.["prompts/list"]]];
  const sent = rows.filter(([, hint]) => hint && typeof hint === "object");
  if (!sent.length) return null;
  return h("section", { class: "cache-hints" },
    h("h3", { text: "Caching hints" }),
    h("p", { class: "muted small", text: "How long the server says each answer stays fresh (ttlMs) and whether it may be shared between people (cacheScope). webhost lists anew on every refresh." }),
    h("table", { class: "cap-grid", dataset: { testid: "cache-hints" } },
      h("thead", {}, h("tr", {}, h("th", { scope: "col", text: "Result" }), h("th", { scope: "col", text: "Fresh for" }),
        h("th", { scope: "col", text: "Scope" }))),
      h("tbody", {}, sent.map(([method, hint]) => h("tr", { dataset: { cacheMethod: method } },
        h("th", { scope: "row", text: method }), h("td", { text: freshFor(hint.ttlMs) }),
        h("td", { text: String(hint.cacheScope ?? "") }))))));
}

/** A `ttlMs` in words. @param {unknown} ms */
export function freshFor(ms) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return "?";
  if (ms <= 0) return "0 (stale at once)";
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  if (s < 120) return `${+s.toFixed(1)} s`;
  if (s < 3600) return `${+(s / 60).toFixed(1)} min`;
  return `${+(s / 3600).toFixed(1)} h`;
}

/** "yes", or the sub-features a capability names ("listChanged, subscribe"; an extension's id). @param {unknown} value */
function features(value) {
  if (!value || typeof value !== "object") return "yes";
  const parts = Object.entries(value).filter(([, v]) => v !== false && v !== null).map(([k, v]) =>
    v && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length
      ? `${k} (${Object.keys(v).join(", ")})` : k);
  return parts.length ? `yes: ${parts.join(", ")}` : "yes";
}

/** @param {string} label @param {unknown} value */
function fact(label, value) {
  if (value === null || value === undefined || value === "") return null;
  return [h("dt", { text: label }), h("dd", { text: String(value), dataset: { fact: label } })];
}

/** @param {any} entry */
function logLine(entry) {
  const level = LEVELS.includes(entry.level) ? entry.level : "info";
  const data = typeof entry.data === "string" ? entry.data : prettyJson(entry.data);
  return h("li", { class: `log-line level-${level}` },
    h("time", { class: "muted", text: new Date(entry.receivedAt).toLocaleTimeString() }),
    h("span", { class: "level", text: String(entry.level ?? "info") }),
    entry.logger ? h("span", { class: "logger muted", text: String(entry.logger) }) : null,
    h("span", { class: "log-data", text: data.length > 4000 ? `${data.slice(0, 4000)}…` : data }));
}
