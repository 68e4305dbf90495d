// @ts-check
// Live sessions (sessions/list): every open tab for an admin (a member would see only their own),
// with its person, role, when it opened and the servers it is connected to, and an End button
// (sessions/end) that closes that tab's WebSocket with a reason the tab then shows. End asks first: it
// becomes "End it?" with [data-session-action="confirm-end"] and [data-session-action="keep"].
//
// Its selectors: [data-testid="sessions-view"], one [data-session-id="ID"] per tab (data-user-id,
// data-role, data-current="true" for this tab) with [data-session-action="end"]; the toolbar's
// [data-session-action="refresh"].
//
// Names come from the sign-in provider: shown with textContent only.

import { h, replaceChildren } from "../html.js";
import { describeError } from "../rpc.js";

export class SessionsView {
  #rpc;
  #refreshBtn = h("button", { type: "button", class: "small", text: "Refresh", dataset: { sessionAction: "refresh" } });
  #status = h("p", { class: "muted audit-status", role: "status" });
  #list = h("ol", { class: "sessions-list", "aria-label": "Live sessions" });
  #seq = 0;
  el;

  /** @param {import("../rpc.js").RpcClient} rpc */
  constructor(rpc) {
    this.#rpc = rpc;
    this.#refreshBtn.addEventListener("click", () => { void this.refresh(); });
    this.el = h("article", { class: "view sessions-view", dataset: { testid: "sessions-view" }, "aria-busy": "false" },
      h("header", { class: "view-head" },
        h("h2", { class: "view-title", text: "Sessions" }),
        h("p", { class: "view-sub muted", text: "The browser tabs open now, whose they are and what they are connected to. Ending one closes that tab's connection to webhost." })),
      h("div", { class: "audit-toolbar" }, this.#refreshBtn),
      this.#status,
      this.#list);
    void this.refresh();
  }

  async refresh() {
    const seq = ++this.#seq;
    this.#refreshBtn.disabled = true;
    this.el.setAttribute("aria-busy", "true");
    this.#status.className = "muted audit-status";
    this.#status.textContent = "Loading…";
    try {
      await this.#rpc.opened(); // opened from the address (#kind=sessions), it is shown before the socket is open
      if (seq !== this.#seq) return;
      const r = await this.#rpc.request("sessions/list", {});
      if (seq !== this.#seq) return;
      /** @type {any[]} */
      const sessions = Array.isArray(r?.sessions) ? r.sessions : [];
      replaceChildren(this.#list, sessions.map((s) => this.#row(s)));
      this.#status.textContent = `${sessions.length} live ${sessions.length === 1 ? "session" : "sessions"}${r?.everyone ? "" : " of yours"}.`;
    } catch (err) {
      if (seq !== this.#seq) return;
      this.#status.className = "inline-error audit-status";
      this.#status.textContent = `Could not list the sessions: ${describeError(err)}`;
    } finally {
      if (seq === this.#seq) {
        this.#refreshBtn.disabled = false;
        this.el.setAttribute("aria-busy", "false");
      }
    }
  }

  dispose() { this.#seq += 1; }

  /** @param {any} s a live session {sessionId, user: {id, name, role}, started, servers, current} */
  #row(s) {
    const id = String(s?.sessionId ?? "");
    const user = s?.user ?? {};
    const started = typeof s?.started === "number" ? new Date(s.started * 1000) : null;
    /** @type {string[]} */
    const servers = Array.isArray(s?.servers) ? s.servers.map(String) : [];
    const end = h("button", { type: "button", class: "small", text: s?.current ? "End (this tab)" : "End",
      dataset: { sessionAction: "end" } });
    // Ending closes someone's tab: asked once more, in place.
    const confirm = h("button", { type: "button", class: "small danger-outline", text: s?.current ? "End this tab" : "End it",
      dataset: { sessionAction: "confirm-end" } });
    const keep = h("button", { type: "button", class: "small ghost", text: "Keep", dataset: { sessionAction: "keep" } });
    const whose = String(user.name ?? user.id ?? "this");
    const asking = h("span", { class: "session-confirm", role: "group", "aria-label": `End ${whose}'s session?`,
      hidden: true }, h("span", { class: "muted", text: "End it? " }), confirm, keep);
    end.addEventListener("click", () => {
      end.hidden = true;
      asking.hidden = false;
      confirm.focus();
    });
    keep.addEventListener("click", () => {
      asking.hidden = true;
      end.hidden = false;
      end.focus();
    });
    confirm.addEventListener("click", () => { void this.#end(id, confirm); });
    return h("li", { dataset: { sessionId: id, userId: String(user.id ?? ""), role: String(user.role ?? ""),
      current: s?.current ? "true" : "false" } },
    h("span", { class: "session-user", text: String(user.name ?? user.id ?? "—"), title: String(user.id ?? "") }),
    h("span", { class: "session-role muted", text: String(user.role ?? "") }),
    h("time", { class: "session-started", datetime: started ? started.toISOString() : "",
      text: started ? started.toLocaleString([], { hour12: false }) : "—" }),
    h("span", { class: "session-servers", text: servers.length ? servers.join(", ") : "no server connected" }),
    end, asking);
  }

  /** @param {string} id @param {HTMLButtonElement} button */
  async #end(id, button) {
    button.disabled = true;
    try {
      await this.#rpc.request("sessions/end", { sessionId: id });
      await this.refresh();
    } catch (err) {
      button.disabled = false;
      this.#status.className = "inline-error audit-status";
      this.#status.textContent = `Could not end the session: ${describeError(err)}`;
    }
  }
}
