// @ts-check
// The admin view (contract §9, admin/overview): people with their groups and last sign-in, their tokens per
// model (and cost, where the model has a price) over a period, a chart of tokens per day with the same numbers
// as a table, who may use each server and model, and the live sessions (the Sessions view, reused). No
// conversation and no text: the backend sends none.
//
// Its selectors: [data-testid="admin"]; one [data-person="EMAIL"] row per person (data-groups: the groups,
// space-separated) with [data-usage][data-model="ID"] cells (data-tokens: input + output); the period's
// [data-admin-action="show"].
//
// A thousand people are drawn in chunks (CHUNK rows per frame) so the first rows show at once.
// Names and groups come from the sign-in provider: shown with textContent only.

import { h, replaceChildren } from "../html.js";
import { describeError } from "../rpc.js";
import { daysOf, usageChart } from "./admin-chart.js";
import { SessionsView } from "./sessions-view.js";

const CHUNK = 200;
const usd = new Intl.NumberFormat([], { style: "currency", currency: "USD", maximumFractionDigits: 2 });
// One formatter each, made once: Number and Date toLocaleString build a new one per call (1,000 people drawn:
// 360 → 220 ms in bench/admin_view.py).
const count = new Intl.NumberFormat();
const signedIn = new Intl.DateTimeFormat([], {
  year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric", second: "numeric", hour12: false,
});

/** @typedef {{person: string, day: string, model: string, input: number, output: number, cost: number | null}} UsageRow */

export class AdminView {
  #rpc;
  #sessions;
  #since = h("input", { type: "date", name: "since", "aria-label": "First day" });
  #until = h("input", { type: "date", name: "until", "aria-label": "Last day" });
  #show = h("button", { type: "submit", class: "small", text: "Show", dataset: { adminAction: "show" } });
  #status = h("p", { class: "muted audit-status", role: "status" });
  #chart = h("figure", { class: "admin-figure" });
  #people = h("div", { class: "admin-people" });
  #access = h("div", { class: "admin-access" });
  #seq = 0;
  el;

  /** @param {import("../rpc.js").RpcClient} rpc */
  constructor(rpc) {
    this.#rpc = rpc;
    this.#sessions = new SessionsView(rpc);
    const period = h("form", { class: "audit-toolbar admin-period", "aria-label": "Period" },
      h("label", {}, "From ", this.#since), h("label", {}, "to ", this.#until), this.#show);
    period.addEventListener("submit", (event) => { event.preventDefault(); void this.refresh(); });
    this.el = h("article", { class: "view admin-view", dataset: { testid: "admin" }, "aria-busy": "false" },
      h("header", { class: "view-head" },
        h("h2", { class: "view-title", text: "Admin" }),
        h("p", { class: "view-sub muted", text: "Who uses webhost, how many tokens and what they cost, and who may use each server and model. Conversations are not shown here." })),
      period, this.#status,
      h("section", { "aria-labelledby": "admin-usage-h" }, h("h3", { id: "admin-usage-h", text: "Tokens per day" }), this.#chart),
      h("section", { "aria-labelledby": "admin-people-h" }, h("h3", { id: "admin-people-h", text: "People" }), this.#people),
      h("section", { "aria-labelledby": "admin-access-h" }, h("h3", { id: "admin-access-h", text: "Who may use what" }), this.#access),
      this.#sessions.el);
    void this.refresh();
  }

  dispose() {
    this.#seq += 1;
    this.#sessions.dispose();
  }

  async refresh() {
    const seq = ++this.#seq;
    this.#show.disabled = true;
    this.el.setAttribute("aria-busy", "true");
    this.#status.className = "muted audit-status";
    this.#status.textContent = "Loading…";
    try {
      await this.#rpc.opened();
      if (seq !== this.#seq) return;
      /** @type {Record<string, string>} */
      const params = {};
      if (this.#since.value) params.since = this.#since.value;
      if (this.#until.value) params.until = this.#until.value;
      const r = await this.#rpc.request("admin/overview", params);
      if (seq !== this.#seq) return;
      this.#since.value = String(r.since);
      this.#until.value = String(r.until);
      await this.render(r, seq);
    } catch (err) {
      if (seq !== this.#seq) return;
      this.#status.className = "inline-error audit-status";
      this.#status.textContent = `Could not load the admin view: ${describeError(err)}`;
    } finally {
      if (seq === this.#seq) {
        this.#show.disabled = false;
        this.el.setAttribute("aria-busy", "false");
      }
    }
  }

  /** Draw an overview (exported for bench/: the drawing alone). @param {any} r @param {number} [seq] */
  async render(r, seq = this.#seq) {
    /** @type {UsageRow[]} */
    const usage = Array.isArray(r?.usage) ? r.usage : [];
    /** @type {any[]} */
    const models = Array.isArray(r?.models) ? r.models : [];
    /** @type {any[]} */
    const people = Array.isArray(r?.people) ? r.people : [];
    const days = daysOf(String(r.since), String(r.until));
    /** @type {Map<string, number>} */
    const perDay = new Map();
    /** @type {Map<string, Map<string, {tokens: number, cost: number | null}>>} */
    const perPerson = new Map();
    for (const u of usage) {
      const tokens = u.input + u.output;
      perDay.set(u.day, (perDay.get(u.day) ?? 0) + tokens);
      const mine = perPerson.get(u.person) ?? new Map();
      perPerson.set(u.person, mine);
      const cell = mine.get(u.model) ?? { tokens: 0, cost: null };
      cell.tokens += tokens;
      if (u.cost !== null) cell.cost = (cell.cost ?? 0) + u.cost;
      mine.set(u.model, cell);
    }
    replaceChildren(this.#chart, usageChart(days, perDay, "admin-chart"), this.#dayTable(days, perDay));
    replaceChildren(this.#access, this.#accessTable(r?.access));
    const body = h("tbody", {});
    replaceChildren(this.#people, h("table", { class: "admin-table" },
      h("caption", { class: "visually-hidden", text: "People, their groups, last sign-in and tokens per model" }),
      h("thead", {}, h("tr", {},
        ["Person", "Role", "Groups", "Last sign-in", ...models.map((m) => String(m.label ?? m.id)), "Cost"]
          .map((text) => h("th", { scope: "col", text })))),
      body));
    this.#status.textContent = `${people.length} ${people.length === 1 ? "person" : "people"}, ${r.since} to ${r.until}.`;
    for (let start = 0; start < people.length; start += CHUNK) {
      if (start > 0) await new Promise((resolve) => requestAnimationFrame(resolve));
      if (seq !== this.#seq) return;
      const rows = people.slice(start, start + CHUNK).map((p) => this.#personRow(p, models, perPerson.get(String(p.id))));
      body.append(...rows);
    }
  }

  /** @param {any} p @param {any[]} models @param {Map<string, {tokens: number, cost: number | null}> | undefined} mine */
  #personRow(p, models, mine) {
    /** @type {string[]} */
    const groups = Array.isArray(p.groups) ? p.groups.map(String) : [];
    const last = typeof p.lastSeen === "number" ? new Date(p.lastSeen * 1000) : null;
    /** @type {number | null} */
    let cost = null;
    const cells = models.map((m) => {
      const cell = mine?.get(String(m.id));
      if (cell?.cost != null) cost = (cost ?? 0) + cell.cost;
      const tokens = cell?.tokens ?? 0;
      return h("td", { class: "num", dataset: { usage: "", model: String(m.id), tokens: String(tokens) },
        text: cell?.cost != null ? `${count.format(tokens)} (${usd.format(cell.cost)})` : count.format(tokens) });
    });
    return h("tr", { dataset: { person: String(p.email ?? p.id), groups: groups.join(" ") } },
      h("th", { scope: "row", text: String(p.name ?? p.id), title: String(p.email ?? p.id) }),
      h("td", { text: String(p.role ?? "") }),
      h("td", { text: groups.length ? groups.join(", ") : "—" }),
      h("td", {}, last ? h("time", { datetime: last.toISOString(), text: signedIn.format(last) }) : "never signed in"),
      cells,
      h("td", { class: "num", text: cost === null ? "—" : usd.format(cost) }));
  }

  /** @param {string[]} days @param {Map<string, number>} perDay */
  #dayTable(days, perDay) {
    return h("details", { class: "admin-days" }, h("summary", { text: "The numbers" }),
      h("table", { class: "admin-table" }, h("caption", { text: "Tokens per day" }),
        h("thead", {}, h("tr", {}, h("th", { scope: "col", text: "Day" }), h("th", { scope: "col", text: "Tokens" }))),
        h("tbody", {}, days.map((d) => h("tr", {}, h("th", { scope: "row", text: d }),
          h("td", { class: "num", text: count.format(perDay.get(d) ?? 0) }))))));
  }

  /** @param {any} access {servers: {NAME: groups | "everyone"}, tools: {"SERVER/TOOL": groups}, models: {...}} */
  #accessTable(access) {
    /** @type {[string, string, unknown][]} */
    const rows = [];
    for (const [kind, label] of [["servers", "server"], ["tools", "tool"], ["models", "model"]]) {
      for (const [name, who] of Object.entries(access?.[kind] ?? {})) rows.push([label, name, who]);
    }
    return h("table", { class: "admin-table" },
      h("caption", { class: "visually-hidden", text: "Who may use each server, tool and model" }),
      h("thead", {}, h("tr", {}, ["Kind", "Name", "Who may use it"].map((text) => h("th", { scope: "col", text })))),
      h("tbody", {}, rows.map(([kind, name, who]) => h("tr", { dataset: { access: kind, name } },
        h("td", { text: kind }), h("th", { scope: "row", text: name }),
        h("td", { text: Array.isArray(who) ? (who.length ? who.join(", ") : "no one") : "everyone" })))));
  }
}
