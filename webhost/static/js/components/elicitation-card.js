// @ts-check
// One pending input request (elicitation), in the three modes the contract names:
// form (a native form from the backend's `fields`), url (consent to open a URL out of band, its host
// emphasised where the backend's `parts` put it), and app (a container the MCP Apps bridge mounts
// the server's app into).
// Server text is always shown as text; URLs are never rendered as links.

import { h } from "../html.js";
import { RpcError, describeError } from "../rpc.js";
import { ERRORS } from "../constants.js";
import { fieldFromSpec } from "./fields.js";

/**
 * @typedef {object} CardContext
 * @property {import("../rpc.js").RpcClient} rpc
 * @property {import("../apps/index.js").Apps} apps
 * @property {(request: any, reason?: string) => void} fallbackToForm the app cannot serve: ask the
 *   backend to show this request as the native form instead
 */

export const WARNING = "Only provide information you trust this server with.";

/** @param {any} req */
export function header(req) {
  const origin = req.origin && typeof req.origin === "object"
    ? [req.origin.method, req.origin.name].filter(Boolean).join(" ") : "";
  return h("header", { class: "card-head" },
    h("span", { class: "badge info", text: req.mode === "url" ? "Link request" : req.mode === "sampling" ? "Model request" : "Input request" }),
    h("span", {}, h("strong", { class: "asker", text: String(req.server ?? "A server") }), " is asking"),
    origin ? h("span", { class: "muted origin", text: `during ${origin}` }) : null,
    req.origin?.resumed ? h("span", { class: "badge resumed", dataset: { resumedNote: "" },
      text: "resumed: asked again after the webhost process running the call stopped" }) : null);
}

/** @param {any} req */
export function message(req) {
  return req.message ? h("p", { class: "elicitation-message", text: String(req.message) }) : null;
}

/**
 * Shared answer logic: lock the buttons, send, report.
 * @param {HTMLElement} card @param {any} req @param {CardContext} ctx
 * @param {(err: RpcError) => boolean} [onFieldErrors] returns true if it showed the errors
 */
export function responder(card, req, ctx, onFieldErrors) {
  const status = h("p", { class: "card-status", role: "status" });
  const buttons = () => /** @type {HTMLButtonElement[]} */ ([...card.querySelectorAll("[data-action]")]);
  /**
   * @param {"accept" | "decline" | "cancel"} action @param {Record<string, unknown>} [content]
   * @param {Record<string, unknown>} [extra] more of the answer (a sampling reply's `model`)
   */
  async function respond(action, content, extra) {
    for (const b of buttons()) b.disabled = true;
    card.dataset.answer = action;
    status.className = "card-status";
    status.textContent = "Sending…";
    /** @type {Record<string, unknown>} */
    const params = { ...extra, id: req.id, action };
    // An app-bound request only takes answers naming its frame; the host's own
    // Decline/Cancel speak for the person, so they name it too.
    if (card.dataset.mode === "app" && req.app?.frameId) params.frameId = req.app.frameId;
    if (content !== undefined) params.content = content;
    try {
      await ctx.rpc.request("elicitation/respond", params);
      card.classList.add("answered");
      status.textContent = action === "accept"
        ? (req.mode === "url" ? (req.phase === "waiting" ? "Done. Waiting for the server…" : "Opened. Waiting for the server…") : "Sent. Waiting for the server…")
        : action === "decline" ? "Declined." : "Cancelled.";
      return true;
    } catch (err) {
      delete card.dataset.answer;
      status.className = "card-status error";
      const shown = err instanceof RpcError && err.code === ERRORS.INVALID_PARAMS && onFieldErrors?.(err);
      status.textContent = shown ? "Some answers were not accepted; fix the marked fields." : describeError(err);
      const gone = err instanceof RpcError && err.code === ERRORS.INVALID_PARAMS && !shown;
      if (gone) {
        // Unknown or already answered: the request is over, let the user dismiss it.
        const dismiss = h("button", { type: "button", class: "small", text: "Dismiss" });
        dismiss.addEventListener("click", () => card.remove());
        status.append(" ", dismiss);
      } else {
        for (const b of buttons()) b.disabled = false;
      }
      return false;
    }
  }
  return { status, respond };
}

/** @param {string} action @param {string} label @param {string} cls @param {"submit" | "button"} [type] */
export function actionButton(action, label, cls, type = "button") {
  return h("button", { type, class: cls, text: label, dataset: { action } });
}

/** @param {any} req @param {CardContext} ctx */
export function formCard(req, ctx) {
  /** @type {import("./fields.js").FieldSpec[]} */
  const specs = Array.isArray(req.fields) ? req.fields : [];
  const fields = specs.map((spec) => fieldFromSpec(spec));
  const formError = h("p", { class: "form-error", role: "alert", hidden: true });
  const card = h("form", { class: "card elicitation", novalidate: true,
    dataset: { elicitation: "", server: String(req.server ?? ""), mode: "form", id: String(req.id) } },
  header(req), message(req),
  req.fallbackReason ? h("p", { class: "muted fallback-note", dataset: { testid: "fallback-reason" }, text: `Shown as a form because ${String(req.fallbackReason)}.` }) : null,
  h("p", { class: "trust-warning", text: WARNING }),
  h("div", { class: "fields" }, fields.map((f) => f.el)),
  formError);
  const { status, respond } = responder(card, req, ctx, (err) => {
    const errors = /** @type {any} */ (err.data)?.errors;
    if (!Array.isArray(errors)) return false;
    const unmatched = [];
    for (const e of errors) {
      const name = String(e?.field ?? "").replace(/^\/+/, "").split(/[/.[]/)[0];
      const f = fields.find((x) => x.name === name);
      if (f) f.setError(String(e?.message ?? "Invalid"));
      else unmatched.push(String(e?.message ?? "Invalid"));
    }
    formError.textContent = unmatched.join("; ");
    formError.hidden = !unmatched.length;
    return true;
  });
  card.append(status, h("div", { class: "card-actions" },
    actionButton("decline", "Decline", "ghost"), actionButton("cancel", "Cancel", "ghost"),
    h("span", { class: "spacer" }), actionButton("accept", "Submit", "primary", "submit")));
  card.addEventListener("submit", (ev) => {
    ev.preventDefault();
    if (card.dataset.answer) return;
    /** @type {Record<string, unknown>} */
    const content = {};
    /** @type {import("./fields.js").Field | null} */
    let firstBad = null;
    for (const f of fields) {
      const r = f.read();
      f.setError(r.error ?? null);
      if (r.error !== undefined) firstBad ??= f;
      else if (r.present) content[f.name] = r.value;
    }
    formError.hidden = true;
    if (firstBad) {
      formError.textContent = "Some fields need attention.";
      formError.hidden = false;
      firstBad.focusTarget().focus();
      return;
    }
    respond("accept", content);
  });
  card.addEventListener("click", (ev) => {
    const b = /** @type {HTMLElement} */ (ev.target).closest("[data-action]");
    const action = b?.getAttribute("data-action");
    if (action === "decline" || action === "cancel") respond(action);
  });
  return card;
}

/**
 * The backend's split of the URL (before + host + after is the URL): the host is the real one,
 * even behind user-info that looks like another site (`https://paypal.com.evil.example@evil.example/`).
 * @param {any} req @param {string} url @returns {{before: string, host: string, after: string}}
 */
function urlParts(req, url) {
  const p = req.parts;
  const ok = p && typeof p === "object" && [p.before, p.host, p.after].every((x) => typeof x === "string")
    && p.before + p.host + p.after === url;
  return ok ? { before: p.before, host: p.host, after: p.after } : { before: url, host: "", after: "" };
}

/** @param {string} url */
function scheme(url) {
  try { return new URL(url).protocol; } catch { return ""; }
}

/**
 * URL mode. phase "consent" (default): consent opens the URL in a new tab, then answers accept.
 * phase "waiting": consent was given earlier; "Done" tells the backend the step is finished.
 * @param {any} req @param {CardContext} ctx
 */
export function urlCard(req, ctx) {
  const url = String(req.url ?? "");
  const waiting = req.phase === "waiting";
  const parts = urlParts(req, url);
  const site = typeof req.host === "string" && req.host ? req.host : parts.host;
  const openable = scheme(url) === "https:" || scheme(url) === "http:";
  const warnings = [...(Array.isArray(req.warnings) ? req.warnings.map(String) : [])];
  if (!openable) warnings.push("webhost only opens http and https addresses; this one cannot be opened.");
  const card = h("div", { class: `card elicitation${waiting ? " url-waiting" : ""}`, role: "group", "aria-label": "Link request",
    dataset: { elicitation: "", server: String(req.server ?? ""), mode: "url", phase: waiting ? "waiting" : "consent",
      id: String(req.id), callId: String(req.origin?.callId ?? ""), url } },
  header(req),
  waiting ? h("p", { class: "waiting-line" }, h("span", { class: "spinner", "aria-hidden": "true" }), h("span", { text: "Waiting for the server…" })) : null,
  message(req),
  h("p", { class: "muted", text: waiting ? "The page you opened:" : "It wants you to open this address in a new tab:" }),
  h("p", { class: "url-display" },
    h("code", {}, parts.before, parts.host ? h("strong", { class: "url-host", text: parts.host }) : null, parts.after)),
  site ? h("p", { class: "url-host-line" }, "Site: ", h("strong", { text: site })) : null,
  warnings.length ? h("ul", { class: "url-warnings" }, warnings.map((w) => h("li", { text: w }))) : null,
  waiting ? null : h("p", { class: "trust-warning", text: WARNING }));
  const { status, respond } = responder(card, req, ctx);
  const accept = actionButton("accept", waiting ? "Done" : "Open link", "primary");
  accept.disabled = !openable && !waiting;
  const reopen = waiting && openable ? actionButton("reopen", "Open again", "ghost") : null;
  card.append(status, h("div", { class: "card-actions" },
    waiting ? null : actionButton("decline", "Decline", "ghost"), actionButton("cancel", "Cancel", "ghost"), reopen,
    h("span", { class: "spacer" }), accept));
  // Consent given: open out of band, where neither this page nor the server can see it.
  const open = () => window.open(url, "_blank", "noopener,noreferrer");
  card.addEventListener("click", (ev) => {
    const action = /** @type {HTMLElement} */ (ev.target).closest("[data-action]")?.getAttribute("data-action");
    if (action === "reopen") {
      open();
    } else if (action === "accept") {
      if (card.dataset.answer) return;
      if (!waiting) {
        if (!openable) return;
        open();
      }
      respond("accept");
    } else if (action === "decline" || action === "cancel") {
      respond(action);
    }
  });
  return card;
}

/** @param {any} req @param {CardContext} ctx */
export function appCard(req, ctx) {
  const container = h("div", { class: "app-elicitation-slot" });
  const card = h("div", { class: "card elicitation", role: "group", "aria-label": "Input request",
    dataset: { elicitation: "", server: String(req.server ?? ""), mode: "app", id: String(req.id) } },
  header(req), message(req), h("p", { class: "trust-warning", text: WARNING }), container);
  // Host-owned Decline/Cancel: the person can always refuse, whatever the app draws.
  const { status, respond } = responder(card, req, ctx);
  card.append(status, h("div", { class: "card-actions" },
    actionButton("decline", "Decline", "ghost"), actionButton("cancel", "Cancel", "ghost")));
  card.addEventListener("click", (ev) => {
    const action = /** @type {HTMLElement} */ (ev.target).closest(".card-actions [data-action]")?.getAttribute("data-action");
    if (action === "decline" || action === "cancel") respond(action);
  });
  let fellBack = false;
  const fallback = (/** @type {string} */ reason) => {
    if (fellBack) return;
    fellBack = true;
    // Deferred: the bridge may call this before the card is even in the inbox.
    queueMicrotask(() => ctx.fallbackToForm(req, reason));
  };
  try {
    const r = ctx.apps.mountElicitation(container, req, { fallbackToForm: (_request, why) => fallback(why) });
    if (r && typeof r.catch === "function") r.catch((/** @type {unknown} */ err) => fallback(describeError(err)));
  } catch (err) {
    console.warn("webhost: mountElicitation failed", err);
    fallback(describeError(err));
  }
  return card;
}

/** A short note left behind when a request ends without the user's answer. @param {string} text */
export function endedNote(text) {
  return h("div", { class: "card ended muted", role: "status" }, text);
}

