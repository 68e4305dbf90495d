// @ts-check
// A request for the user's approval (an app's tool call, opening a link, ...):
// [data-approval][data-kind] with Allow / Deny and "remember", answered with approvals/respond.
// Identical requests from one app (same frame, kind, subject and detail) share one card: a count, and
// [data-action="allow-all"] beside Allow / Deny (which still decide one request, the oldest).
// A link (kind "open-link") opens within the person's click on Allow, the only moment a browser lets a page
// open a tab; the backend is told whether it opened (`opened`), and so the app and its panel.
// A new card takes keyboard focus (unless the person is writing in a field): Enter allows, Escape denies, and
// the decision is announced to screen readers in a live region that outlives the card.

import { h } from "../html.js";
import { jsonPre } from "./json-highlight.js";
import { openableUrl, openInNewTab } from "../open-tab.js";
import { describeError } from "../rpc.js";

/**
 * The key identical approvals share (same frame, kind and subject, and the same summary and detail, so
 * "allow all" never allows something the card does not show), or null when the request is not an app's.
 * @param {any} req
 */
export function approvalGroup(req) {
  if (!req?.frame) return null;
  return JSON.stringify([String(req.frame), String(req.kind ?? ""), String(req.subject ?? ""),
    String(req.summary ?? ""), JSON.stringify(req.detail ?? null)]);
}

/** What "remember" means for each kind of request (the chat's decisions hold for a conversation or an app). */
const REMEMBER = /** @type {Record<string, string>} */ ({
  "model-tool-call": "Allow for this conversation",
  "app-message": "Let this app send its next messages without asking",
});

/** What the card shows of a request's detail: the chat's kinds show what the person decides on. @param {any} req */
function shownDetail(req) {
  if (req.kind === "model-tool-call" && req.detail && typeof req.detail === "object") {
    return h("div", {}, h("p", { class: "muted", text: `${req.detail.tool ?? ""} with these arguments:` }),
      jsonPre(req.detail.arguments ?? {}, "approval-detail"));
  }
  if (req.kind === "app-message" && req.detail && typeof req.detail === "object") {
    return h("blockquote", { class: "approval-detail approval-message", text: String(req.detail.text ?? "") });
  }
  if (req.detail === undefined || req.detail === null) return null;
  return typeof req.detail === "string" ? h("pre", { class: "text-content approval-detail", text: req.detail })
    : jsonPre(req.detail, "approval-detail");
}

/** The page's one live region for decisions (a card's own status leaves with the card). @type {HTMLElement | null} */
let announcer = null;

/** @param {string} text */
function announce(text) {
  if (!announcer || !announcer.isConnected) {
    announcer = h("p", { class: "visually-hidden", "aria-live": "assertive", dataset: { testid: "approval-announcer" } });
    document.body.append(announcer);
  }
  announcer.textContent = text;
}

/** Whether the person is writing (focus in a field with text): a new approval then waits for them to Tab to it. */
function writing() {
  const active = document.activeElement;
  if (active instanceof HTMLTextAreaElement) return active.value.trim() !== "";
  return active instanceof HTMLInputElement && !["checkbox", "radio", "button", "submit"].includes(active.type) && active.value !== "";
}

export class ApprovalCard {
  /** The ids still waiting on this card, oldest first. @type {string[]} */
  #ids = [];
  #rpc;
  #remember = h("input", { type: "checkbox", name: "remember" });
  #status = h("p", { class: "card-status", role: "status" });
  #count = h("span", { class: "badge approval-count", hidden: true });
  #allow = h("button", { type: "button", class: "primary", text: "Allow", dataset: { action: "allow" } });
  #deny = h("button", { type: "button", class: "ghost", text: "Deny", dataset: { action: "deny" } });
  #allowAll = h("button", { type: "button", class: "ghost", hidden: true, dataset: { action: "allow-all" } });
  /** The link an "open-link" request asks to open (checked again here), or null. @type {URL | null} */
  #link = null;
  #kind;
  #asker = "";
  /** Sees the card get a size: it is shown, and may take focus. */
  #shown = new ResizeObserver(() => this.#claimFocus());
  el;

  /** @param {any} req @param {import("../rpc.js").RpcClient} rpc */
  constructor(req, rpc) {
    this.#rpc = rpc;
    const kind = String(req.kind ?? "action");
    this.#kind = kind;
    if (kind === "open-link") this.#link = openableUrl(req.detail?.url);
    const detail = shownDetail(req);
    this.#asker = String(req.server ?? "webhost");
    const label = `Approval request from ${this.#asker}${req.summary ? `: ${req.summary}` : ""}. Enter allows, Escape denies.`;
    this.el = h("div", { class: "card approval", role: "group", "aria-label": label, tabIndex: -1,
      dataset: { approval: "", kind, id: String(req.id), approvalServer: String(req.server ?? "") } },
    h("header", { class: "card-head" },
      h("span", { class: "badge warning", text: "Approval" }),
      h("span", {}, h("strong", { class: "asker", text: String(req.server ?? "webhost") }), " wants to"),
      h("span", { class: "badge", text: kind }), this.#count),
    req.summary ? h("p", { class: "approval-summary", text: String(req.summary) }) : null,
    detail,
    h("label", { class: "check" }, this.#remember, h("span", { text: REMEMBER[kind] ?? "Remember my answer for this session" })),
    this.#status,
    h("div", { class: "card-actions" }, this.#deny, h("span", { class: "spacer" }), this.#allowAll, this.#allow));
    this.#allow.addEventListener("click", () => this.#decide("allow", false));
    this.#deny.addEventListener("click", () => this.#decide("deny", false));
    this.#allowAll.addEventListener("click", () => this.#decide("allow", true));
    this.el.addEventListener("keydown", (ev) => this.#key(ev));
    this.add(req);
    // Placed by its owner (the inbox or the chat): take focus once it is in the page and shown, which may be a
    // moment later (a chat call's card is drawn after the request arrives; the card waits hidden until then).
    this.#shown.observe(this.el);
  }

  #claimFocus() {
    if (this.el.classList.contains("answered")) return this.#shown.disconnect();
    if (!this.el.isConnected || !this.el.getClientRects().length) return;  // not shown yet: wait for it
    this.#shown.disconnect();  // once: after this, focus is the person's
    if (writing()) return;
    this.el.focus({ preventScroll: true });
    this.el.scrollIntoView({ block: "nearest" });
  }

  /** Enter allows (on the card itself, not on its other controls: Deny and the checkbox keep their own keys). @param {KeyboardEvent} ev */
  #key(ev) {
    if (ev.defaultPrevented || ev.altKey || ev.ctrlKey || ev.metaKey || this.#allow.disabled) return;
    if (ev.key === "Escape") {
      ev.preventDefault();  // before the chat's Escape (stop the answer): this decides the request only
      void this.#decide("deny", false);
    } else if (ev.key === "Enter" && ev.target === this.el) {
      ev.preventDefault();
      void this.#decide("allow", false);
    }
  }

  /** How many requests this card still holds. */
  get size() { return this.#ids.length; }

  /** One more identical request. @param {any} req */
  add(req) {
    const id = String(req.id);
    if (!this.#ids.includes(id)) this.#ids.push(id);
    this.#update();
  }

  /** A request was decided (here or elsewhere): returns how many are left. @param {string} id */
  drop(id) {
    this.#ids = this.#ids.filter((i) => i !== id);
    this.#update();
    return this.#ids.length;
  }

  #update() {
    const n = this.#ids.length;
    if (n) this.el.dataset.id = this.#ids[0];
    this.el.dataset.count = String(n);
    this.#count.hidden = n < 2;
    this.#count.textContent = `×${n}`;
    this.#allowAll.hidden = n < 2;
    this.#allowAll.textContent = `Allow all ${n}`;
    this.#allow.textContent = n < 2 ? "Allow" : "Allow one";
    this.#deny.textContent = n < 2 ? "Deny" : "Deny one";
  }

  /** @param {"allow" | "deny"} decision @param {boolean} all */
  async #decide(decision, all) {
    const ids = all ? [...this.#ids] : this.#ids.slice(0, 1);
    if (!ids.length) return;
    // Now, within the click (nothing awaited before it): later, the browser would not open the tab.
    /** @type {boolean | undefined} */
    let opened;
    if (decision === "allow" && this.#kind === "open-link") opened = this.#link ? openInNewTab(this.#link) : false;
    const buttons = [this.#allow, this.#deny, this.#allowAll];
    for (const b of buttons) b.disabled = true;
    this.#status.className = "card-status";
    this.#status.textContent = "Sending…";
    const remember = this.#remember.checked;
    const answers = await Promise.allSettled(ids.map((id) =>
      this.#rpc.request("approvals/respond", { id, decision, remember, ...(opened === undefined ? {} : { opened }) })));
    const failed = answers.find((a) => a.status === "rejected");
    ids.forEach((id, i) => { if (answers[i].status === "fulfilled") this.drop(id); });
    const word = decision === "allow" ? "Allowed" : "Denied";
    if (failed) {
      this.#status.className = "card-status error";
      this.#status.textContent = describeError(/** @type {PromiseRejectedResult} */ (failed).reason);
    } else {
      this.#status.textContent = this.#ids.length ? `${word} ${ids.length}; ${this.#ids.length} still waiting.` : `${word}.`;
      announce(`${word}: ${this.#asker}'s request.`);
    }
    if (this.#ids.length) {
      for (const b of buttons) b.disabled = false;
    } else if (!failed) {
      this.el.classList.add("answered");
    }
  }
}

