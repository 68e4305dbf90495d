// @ts-check
// The stack of things waiting for the user: input requests (elicitation) and approvals.
// Cards are keyed by request id, added on */request notifications, removed on */resolved.
// A new input request takes focus (an app-rendered one on its card, so that the keys reach it before the app
// has loaded); Escape on a request answers it the way its own Cancel (an approval: Deny) does.

import { h } from "../html.js";
import { park, isParked, bounded } from "../park.js";
import { formCard, urlCard, appCard, endedNote } from "./elicitation-card.js";
import { ApprovalCard, approvalGroup } from "./approval-card.js";
import { samplingCard } from "./sampling-card.js";
import { InboxPanel } from "./inbox-panel.js";

const ENDED = /** @type {Record<string, string>} */ ({
  timeout: "An input request timed out.",
  released: "An input request was withdrawn.",
});

export class Inbox {
  #rpc;
  #apps;
  /** @type {Map<string, HTMLElement>} */
  #cards = new Map();
  /** Approval cards by their element, and the open card of each group of identical requests. */
  /** @type {WeakMap<HTMLElement, ApprovalCard>} */
  #approvalOf = new WeakMap();
  /** @type {Map<string, ApprovalCard>} */
  #groups = new Map();
  /** Where focus was before an input request took it, by card key: it goes back there after. */
  /** @type {Map<string, HTMLElement>} */
  #returnFocus = new Map();
  /** The last focused element outside the inbox (a Call button, disabled while its call runs, drops focus). */
  /** @type {HTMLElement | null} */
  #lastFocus = null;
  #live = h("p", { class: "visually-hidden", "aria-live": "assertive" });
  #panel = new InboxPanel(this.#live);
  #list = this.#panel.list;
  /** Cards that answer Escape (a group's card is added once per request). @type {WeakSet<HTMLElement>} */
  #escapes = new WeakSet();
  /** The request each card shows, by card key (where it belongs is asked again when placement changes). */
  /** @type {Map<string, any>} */
  #requests = new Map();
  /** Where a request is shown instead of the inbox (the chat, for its open conversation), or null. */
  /** @type {(req: any) => HTMLElement | null} */
  #place = () => null;
  #count = this.#panel.count;
  #onCount;
  el = this.#panel.el;

  /**
   * @param {import("../rpc.js").RpcClient} rpc
   * @param {import("../apps/index.js").Apps} apps
   * @param {(count: number) => void} onCount
   */
  constructor(rpc, apps, onCount) {
    this.#rpc = rpc;
    this.#apps = apps;
    this.#onCount = onCount;
    document.addEventListener("focusin", (ev) => {
      const target = /** @type {HTMLElement} */ (ev.target);
      if (target instanceof HTMLElement && !this.el.contains(target)) this.#lastFocus = target;
    });
  }

  /**
   * Let another part of the page show some requests (the chat shows those of its open conversation).
   * @param {(req: any) => HTMLElement | null} place
   */
  setPlacement(place) {
    this.#place = place;
    this.rehome();
  }

  /** Move each card to where it belongs now (an app card stays: moving its frame would reload the app). */
  rehome() {
    for (const [key, card] of this.#cards) {
      if (card.dataset.mode === "app" || isParked(card)) continue;
      const home = this.#homeOf(key);
      if (card.parentElement === home) continue;
      // Moving an element drops the focus inside it: an approval that took focus keeps it where it goes.
      const held = card.contains(document.activeElement) ? /** @type {HTMLElement} */ (document.activeElement) : null;
      home.append(card);
      held?.focus({ preventScroll: true });
    }
    this.#changed();
  }

  /** @param {string} key */
  #homeOf(key) {
    const req = this.#requests.get(key);
    return (req && this.#place(req)) || this.#list;
  }

  /** A finished call needs nothing more from the person: drop its "waiting" notes. @param {string} callId */
  callDone(callId) {
    for (const [key, el] of this.#cards) {
      if (key.startsWith("w:") && callId && el.dataset.callId === callId) this.#remove(key);
    }
  }

  /** @param {any} req an InputRequest (re-sent with the same id when it changes) */
  addElicitation(req) {
    if (!req || req.id === undefined) return;
    const key = `e:${req.id}`;
    const existing = this.#cards.get(key);
    // An answered card keeps its locked state; an app card belongs to the bridge while the
    // request stays app-rendered. The backend re-sends the request as mode "form" on fallback.
    if (existing && (existing.dataset.answer || (existing.dataset.mode === "app" && req.mode === "app"))) return;
    /** @type {import("./elicitation-card.js").CardContext} */
    const ctx = { rpc: this.#rpc, apps: this.#apps, fallbackToForm: (/** @type {any} */ r, /** @type {string | undefined} */ why) => this.#fallback(r, why) };
    const card = req.mode === "url" ? urlCard(req, ctx) : req.mode === "app" ? appCard(req, ctx)
      : req.mode === "sampling" ? samplingCard(req, ctx) : formCard(req, ctx);
    if (req.origin?.resumed) card.dataset.resumed = "true"; // asked again on this process after another stopped
    if (existing) {
      // An app card replaced by the fallback form: its app is torn down before the card goes.
      this.#replace(req, card, existing.dataset.mode === "app" ? "fallback to the form" : undefined);
      return;
    }
    if (req.mode === "url" && req.phase === "waiting") {
      // The backend's own waiting step supersedes our local "waiting" note for the same page.
      for (const [k, el] of this.#cards) if (k.startsWith("w:") && el.dataset.url === String(req.url ?? "")) this.#remove(k);
    }
    this.#add(key, card, req);
    this.#takeFocus(key, card);
    const what = req.mode === "url" ? "your consent to open a link" : req.mode === "sampling" ? "a model reply" : "input";
    this.#announce(`${req.server ?? "A server"} is asking for ${what}.`);
  }

  /** @param {{id: string, outcome?: string}} p */
  resolveElicitation(p) {
    const key = `e:${p.id}`;
    const card = this.#cards.get(key);
    if (!card) {
      this.#remove(`w:${p.id}`);
      return;
    }
    const wasApp = card.dataset.mode === "app" || card.dataset.wasApp === "1";
    const waitForUrl = card.dataset.mode === "url" && card.dataset.phase !== "waiting"
      && card.dataset.answer === "accept" && p.outcome === "accept";
    const note = !card.dataset.answer && p.outcome ? ENDED[p.outcome] : undefined;
    // An app card leaves the page only after its app got ui/resource-teardown (bounded): a removed
    // iframe cannot receive it. Meanwhile it is parked (out of sight, selectors renamed).
    const reason = p.outcome ?? "resolved";
    this.#remove(key, card.dataset.mode === "app" ? { id: p.id, reason } : undefined);
    if (wasApp && card.dataset.mode !== "app") void this.#unmountApp(p.id, reason);
    if (note) this.#flash(note);
    if (waitForUrl) this.#waiting(p.id, card);
  }

  /**
   * The request is over (consent given) but the server's out-of-band step may still run:
   * leave a note until the server reports completion or the person dismisses it.
   * @param {string} id @param {HTMLElement} card
   */
  #waiting(id, card) {
    const host = card.querySelector(".url-host")?.textContent ?? "the link";
    const dismiss = h("button", { type: "button", class: "small ghost", text: "Dismiss" });
    const note = h("div", { class: "card waiting", role: "status",
      dataset: { waitingFor: id, callId: card.dataset.callId ?? "", url: card.dataset.url ?? "" } },
      h("span", { class: "spinner", "aria-hidden": "true" }),
      h("span", {}, "Opened ", h("strong", { text: host }), " in a new tab. Waiting for the server…"),
      h("span", { class: "spacer" }), dismiss);
    dismiss.addEventListener("click", () => this.#remove(`w:${id}`));
    this.#add(`w:${id}`, note);
  }

  /** Tear down the app of an app-rendered request (bounded); never rejects. @param {string} id @param {string} reason */
  async #unmountApp(id, reason) {
    try {
      await bounded(this.#apps.unmountElicitation(id, reason));
    } catch (err) {
      console.warn("webhost: unmountElicitation failed", err);
    }
  }

  /**
   * Take an app card off the page once its app is torn down; parked (with data-elicitation and the
   * frame's attributes renamed) meanwhile, so it no longer counts as a pending request.
   * @param {HTMLElement} card @param {string} id @param {string} reason
   */
  async #retireAppCard(card, id, reason) {
    park(card, ["data-elicitation", "data-action"]);
    this.#changed();
    await this.#unmountApp(id, reason);
    card.remove();
    this.#changed();
  }

  /**
   * The app cannot serve a request: the backend owns the switch (it re-sends the request as a
   * form, and only then accepts an answer without the app's frame). The page's one sender of
   * `elicitation/fallback`.
   * @param {any} req @param {string | undefined} reason
   */
  async #fallback(req, reason) {
    const card = this.#cards.get(`e:${req.id}`);
    if (!card || card.dataset.mode !== "app") return;
    try {
      await this.#rpc.request("elicitation/fallback", { id: req.id, reason: reason ?? "the app could not serve this request" });
    } catch (err) {
      console.warn("webhost: elicitation/fallback failed", err);
    }
  }

  /** @param {any} req */
  addApproval(req) {
    if (!req || req.id === undefined) return;
    const key = `a:${req.id}`;
    const group = approvalGroup(req);
    const same = group ? this.#groups.get(group) : undefined;
    if (same && same.size > 0 && same.el.isConnected) {
      // The same app asking the same thing again: one card, with a count and "allow all".
      same.add(req);
      this.#cards.set(key, same.el);
      this.#changed();
      return;
    }
    const card = new ApprovalCard(req, this.#rpc);
    this.#approvalOf.set(card.el, card);
    if (group) this.#groups.set(group, card);
    this.#add(key, card.el, req);
    this.#announce(`${req.server ?? "A server"} needs your approval.`);
  }

  /** @param {{id: string}} p */
  resolveApproval(p) {
    const key = `a:${p.id}`;
    const el = this.#cards.get(key);
    const card = el ? this.#approvalOf.get(el) : undefined;
    if (card && card.drop(String(p.id)) > 0) {
      this.#cards.delete(key); // the card stays for the identical requests still waiting
      this.#changed();
      return;
    }
    if (!el || !card) return;
    for (const [group, c] of this.#groups) if (c === card) this.#groups.delete(group);
    for (const [k, v] of this.#cards) if (v === el) { this.#cards.delete(k); this.#requests.delete(k); }
    el.remove();
    this.#changed();
  }

  /** The backend session ended: none of its requests can be answered any more. */
  clear() {
    for (const key of [...this.#cards.keys()]) this.#remove(key);
    this.#groups.clear();
  }

  /** Show the panel's cards and focus the first request in it (the header's "N waiting"). */
  reveal() { return this.#panel.reveal(); }

  /** @param {string} key @param {HTMLElement} card @param {any} [req] the request it shows */
  #add(key, card, req) {
    this.#cards.get(key)?.remove();
    this.#cards.set(key, card);
    if (req) this.#requests.set(key, req);
    this.#answerEscape(card);
    const home = this.#homeOf(key);
    home.append(card);
    if (home === this.#list) this.#panel.expand(); // a new request is shown, even if the person hid the others
    this.#changed();
  }

  /**
   * Escape inside a request answers it as its Cancel does (an approval: Deny), wherever the card is shown.
   * @param {HTMLElement} card
   */
  #answerEscape(card) {
    if (this.#escapes.has(card)) return;
    this.#escapes.add(card);
    card.addEventListener("keydown", (ev) => {
      if (ev.key !== "Escape" || ev.defaultPrevented || ev.isComposing) return;
      const action = card.matches("[data-approval]") ? "deny" : "cancel";
      const button = /** @type {HTMLButtonElement | null} */ (card.querySelector(`[data-action="${action}"]:not(:disabled)`));
      if (!button) return;
      ev.preventDefault();
      ev.stopPropagation(); // the answer only: not also the chat's "stop" or a fullscreen app's exit
      button.click();
    });
  }

  /**
   * @param {any} req @param {HTMLElement} card
   * @param {string} [unmountReason] the old card holds an app: keep it (parked) until it is torn down
   */
  #replace(req, card, unmountReason) {
    const key = `e:${req.id}`;
    const old = this.#cards.get(key);
    if (!old) return;
    this.#cards.set(key, card);
    if (unmountReason) {
      old.before(card);
      void this.#retireAppCard(old, String(req.id), unmountReason);
    } else {
      old.replaceWith(card);
    }
  }

  /**
   * @param {string} key
   * @param {{id: string, reason: string}} [unmount] the card holds an app: tear it down before removing the card
   */
  #remove(key, unmount) {
    const card = this.#cards.get(key);
    if (!card) return;
    this.#cards.delete(key);
    this.#requests.delete(key);
    this.#giveFocusBack(key, card);
    if (unmount) {
      void this.#retireAppCard(card, unmount.id, unmount.reason);
      return;
    }
    card.remove();
    this.#changed();
  }

  /**
   * Move focus to a new input request's first control, remembering where it was; when focus was in
   * another request's card, that card's return place is inherited (it is about to go).
   * @param {string} key @param {HTMLElement} card
   */
  #takeFocus(key, card) {
    const from = /** @type {HTMLElement | null} */ (document.activeElement);
    let back = from && from !== document.body ? from : this.#lastFocus;
    for (const [k, target] of this.#returnFocus) {
      if (from && this.#cards.get(k)?.contains(from)) back = target;
    }
    if (back) this.#returnFocus.set(key, back);
    if (card.dataset.mode === "app") {
      // The app draws the fields, in a frame that is still loading: the card itself holds focus (Escape cancels,
      // Tab goes into the app).
      card.tabIndex = -1;
      card.focus();
      return;
    }
    const first = /** @type {HTMLElement | null} */ (card.querySelector(
      "input:not([type=hidden]):not(:disabled), select:not(:disabled), textarea:not(:disabled), button:not(:disabled)"));
    first?.focus();
  }

  /** The card of `key` leaves: if focus was in it, it goes back to where it was. @param {string} key @param {HTMLElement} card */
  #giveFocusBack(key, card) {
    const back = this.#returnFocus.get(key);
    this.#returnFocus.delete(key);
    const active = document.activeElement;
    const lost = !active || active === document.body || card.contains(active);
    if (!back || !lost || !back.isConnected) return;
    const control = /** @type {HTMLButtonElement} */ (back);
    if (!control.disabled) {
      back.focus();
      return;
    }
    // The place was a control that waits for the call to end (the tool's Call button): focus it once it is
    // enabled again, unless the person has gone elsewhere meanwhile.
    const watch = new MutationObserver(() => {
      if (control.disabled) return;
      watch.disconnect();
      if (!document.activeElement || document.activeElement === document.body) back.focus();
    });
    watch.observe(back, { attributes: true, attributeFilter: ["disabled"] });
    setTimeout(() => watch.disconnect(), 30_000);
  }

  /** @param {string} text */
  #flash(text) {
    const note = endedNote(text);
    this.#list.append(note);
    this.#changed();
    setTimeout(() => { note.remove(); this.#changed(); }, 5000);
  }

  /** @param {string} text */
  #announce(text) {
    this.#live.textContent = text;
  }

  #changed() {
    const n = [...this.#cards.keys()].filter((k) => !k.startsWith("w:")).length;
    this.#count.textContent = String(n);
    this.#count.hidden = n === 0;
    this.el.hidden = ![...this.#list.children].some((c) => !isParked(c));
    document.body.classList.toggle("has-inbox", !this.el.hidden);
    this.#onCount(n);
  }
}
