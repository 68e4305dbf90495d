// @ts-check
// The audit log (audit/list): what apps did and what people decided, newest first, one
// [data-audit-entry] per row (data-kind, data-decision, data-server), with the detail JSON on
// demand. Filter by server, Refresh, and the JSON / CSV exports (GET /api/audit; the session
// cookie authenticates a plain link).
// A member sees their own rows; an admin everyone's (audit/list answers `everyone: true`), and then
// each row shows its person (`.audit-user`, and `data-audit-user` on the row).
//
// Everything in an entry comes from apps and servers: it is shown with textContent only.

import { h, prettyJson, replaceChildren } from "../html.js";
import { describeError } from "../rpc.js";
import { textView } from "./content-view.js";

const LIMIT = 500;

export class AuditView {
  #rpc;
  #serverNames;
  #filter = h("select", { "aria-label": "Filter by server", dataset: { auditFilter: "server" } },
    h("option", { value: "", text: "All servers" }));
  #refreshBtn = h("button", { type: "button", class: "small", text: "Refresh", dataset: { auditAction: "refresh" } });
  #json = h("a", { class: "button small", href: "/api/audit", download: "webhost-audit.json", text: "Download JSON",
    dataset: { auditExport: "json" } });
  #csv = h("a", { class: "button small", href: "/api/audit?format=csv", download: "webhost-audit.csv", text: "Download CSV",
    dataset: { auditExport: "csv" } });
  #status = h("p", { class: "muted audit-status", role: "status" });
  #list = h("ol", { class: "audit-list", "aria-label": "Audit entries" });
  #seq = 0;
  el;

  /**
   * @param {import("../rpc.js").RpcClient} rpc
   * @param {() => string[]} serverNames the configured servers, for the filter
   */
  constructor(rpc, serverNames) {
    this.#rpc = rpc;
    this.#serverNames = serverNames;
    this.#filter.addEventListener("change", () => { this.#exports(); void this.refresh(); });
    this.#refreshBtn.addEventListener("click", () => { void this.refresh(); });
    this.el = h("article", { class: "view audit-view", dataset: { testid: "audit-log" }, "aria-busy": "false" },
      h("header", { class: "view-head" },
        h("h2", { class: "view-title", text: "Audit log" }),
        h("p", { class: "view-sub muted", text: "What apps did (tool calls, links, messages, model context, violations) and what people decided (approvals, permissions). Newest first." })),
      h("div", { class: "audit-toolbar" }, this.#filter, this.#refreshBtn, h("span", { class: "spacer" }), this.#json, this.#csv),
      this.#status,
      this.#list);
    this.#options([]);
    void this.refresh();
  }

  async refresh() {
    const seq = ++this.#seq;
    const server = this.#filter.value;
    this.#refreshBtn.disabled = true;
    this.el.setAttribute("aria-busy", "true");
    this.#status.className = "muted audit-status";
    this.#status.textContent = "Loading…";
    try {
      await this.#rpc.opened(); // opened from the address (#kind=audit), it may be shown before the socket is open
      if (seq !== this.#seq) return;
      const r = await this.#rpc.request("audit/list", server ? { server, limit: LIMIT } : { limit: LIMIT });
      if (seq !== this.#seq) return;
      /** @type {any[]} */
      const entries = Array.isArray(r?.entries) ? r.entries : [];
      this.#options(entries);
      const everyone = r?.everyone === true;
      this.#list.classList.toggle("with-user", everyone);
      replaceChildren(this.#list, entries.map((e) => this.#row(e, everyone)));
      this.#status.textContent = entries.length
        ? `${entries.length === LIMIT ? `The ${LIMIT} most recent entries` : `${entries.length} ${entries.length === 1 ? "entry" : "entries"}`}${server ? ` for ${server}` : ""}.`
        : `Nothing audited yet${server ? ` for ${server}` : ""}. App tool calls, links, messages and decisions appear here.`;
    } catch (err) {
      if (seq !== this.#seq) return;
      this.#status.className = "inline-error audit-status";
      this.#status.textContent = `Could not load the audit log: ${describeError(err)}`;
    } finally {
      if (seq === this.#seq) {
        this.#refreshBtn.disabled = false;
        this.el.setAttribute("aria-busy", "false");
      }
    }
  }

  dispose() { this.#seq += 1; }

  /** Keep the filter's servers: configured ones plus any seen in entries. @param {any[]} entries */
  #options(entries) {
    const names = new Set(this.#serverNames());
    for (const e of entries) if (e?.server) names.add(String(e.server));
    const have = new Set([...this.#filter.options].map((o) => o.value));
    for (const name of [...names].sort()) {
      if (!have.has(name)) this.#filter.append(h("option", { value: name, text: name }));
    }
  }

  #exports() {
    const server = this.#filter.value;
    const q = server ? `server=${encodeURIComponent(server)}` : "";
    this.#json.href = `/api/audit${q ? `?${q}` : ""}`;
    this.#csv.href = `/api/audit?format=csv${q ? `&${q}` : ""}`;
  }

  /**
   * @param {any} e an audit entry {id, ts, session, server, frame, kind, decision, summary, detail, user_id, user_name}
   * @param {boolean} everyone whether the list holds everyone's rows (an admin's view): show each row's person
   */
  #row(e, everyone) {
    const kind = String(e?.kind ?? "");
    const decision = e?.decision === null || e?.decision === undefined ? "" : String(e.decision);
    const server = e?.server ? String(e.server) : "";
    const userId = e?.user_id ? String(e.user_id) : "";
    const person = e?.user_name ? String(e.user_name) : userId;
    const ts = typeof e?.ts === "number" ? new Date(e.ts * 1000) : null;
    const details = h("details", { class: "audit-entry" });
    details.append(h("summary", {},
      h("time", { class: "audit-time", datetime: ts ? ts.toISOString() : "",
        text: ts ? ts.toLocaleString([], { hour12: false }) : "—", title: ts ? ts.toISOString() : "" }),
      everyone ? h("span", { class: "audit-user", text: person || "—", title: userId }) : null,
      h("span", { class: "audit-server", text: server || "—", title: server }),
      h("span", { class: "audit-kind", text: kind }),
      h("span", { class: `audit-decision ${decision ? decisionClass(decision) : "none"}`, text: decision || "—" }),
      h("span", { class: "audit-summary", text: String(e?.summary ?? ""), title: String(e?.summary ?? "") })));
    // The detail is rendered on first open (it can be 64 KB).
    details.addEventListener("toggle", () => {
      if (!details.open || details.childElementCount > 1) return;
      const facts = h("dl", { class: "facts" },
        h("dt", { text: "Entry" }), h("dd", { text: String(e?.id ?? "") }),
        userId ? [h("dt", { text: "Person" }), h("dd", { text: person === userId ? userId : `${person} (${userId})` })] : null,
        e?.frame ? [h("dt", { text: "Frame" }), h("dd", {}, h("code", { text: String(e.frame) }))] : null,
        e?.session ? [h("dt", { text: "Session" }), h("dd", {}, h("code", { text: String(e.session) }))] : null);
      details.append(h("div", { class: "audit-detail" }, facts,
        e?.detail === null || e?.detail === undefined
          ? h("p", { class: "muted", text: "No detail." })
          : textView(prettyJson(e.detail), { className: "json", filename: `audit-${e?.id ?? "entry"}.json` })));
    });
    return h("li", { dataset: { auditEntry: String(e?.id ?? ""), kind, decision, server, auditUser: userId } }, details);
  }
}

/** @param {string} decision */
function decisionClass(decision) {
  const d = decision.toLowerCase();
  if (/^(allow|allowed|accept|ok|granted|answered|opened)/.test(d)) return "ok";
  if (/^(deny|denied|refused|blocked|violation|decline|error|revoked|rejected)/.test(d)) return "bad";
  return "";
}
