// @ts-check
// A server's sampling request (it wants a model reply). webhost has no model, so the person
// reads the conversation and writes the reply, or declines: [data-elicitation][data-mode="sampling"].

import { h } from "../html.js";
import { contentBlock } from "./content-view.js";
import { responder, header, message, actionButton, WARNING } from "./elicitation-card.js";

/** @param {any} req @param {import("./elicitation-card.js").CardContext} ctx */
export function samplingCard(req, ctx) {
  const request = req.request && typeof req.request === "object" ? req.request : {};
  const messages = Array.isArray(request.messages) ? request.messages : [];
  const server = String(req.server ?? "");
  const readResource = (/** @type {string} */ s, /** @type {string} */ uri) => ctx.rpc.request("resources/read", { server: s, uri });
  const reply = h("textarea", { name: "text", rows: 4, required: true, id: `reply-${String(req.id)}`,
    maxlength: 100_000 });
  const replyError = h("p", { class: "field-error", hidden: true });
  const card = h("form", { class: "card elicitation sampling", novalidate: true,
    dataset: { elicitation: "", server, mode: "sampling", id: String(req.id) } },
  header(req), message(req),
  request.systemPrompt ? h("details", { class: "json-details" }, h("summary", { text: "System prompt" }),
    h("pre", { class: "text-content", text: String(request.systemPrompt) })) : null,
  h("ol", { class: "messages compact" }, messages.map((/** @type {any} */ m) => {
    const blocks = Array.isArray(m.content) ? m.content : [m.content];
    return h("li", { class: "message" }, h("span", { class: "role", text: String(m.role ?? "?") }),
      h("div", { class: "message-body" }, blocks.map((/** @type {any} */ b) => contentBlock(b, { server, readResource }))));
  })),
  h("div", { class: "field" },
    h("label", { class: "field-label", for: reply.id }, "Your reply",
      request.maxTokens ? h("span", { class: "field-type", text: `≤ ${request.maxTokens} tokens` }) : null),
    reply, replyError),
  h("p", { class: "trust-warning", text: WARNING }));
  const { status, respond } = responder(card, req, ctx, (err) => {
    const errors = /** @type {any} */ (err.data)?.errors;
    if (!Array.isArray(errors)) return false;
    replyError.textContent = errors.map((e) => String(e?.message ?? "Invalid")).join("; ");
    replyError.hidden = false;
    return true;
  });
  card.append(status, h("div", { class: "card-actions" },
    actionButton("decline", "Decline", "ghost"), actionButton("cancel", "Cancel", "ghost"),
    h("span", { class: "spacer" }), actionButton("accept", "Send reply", "primary", "submit")));
  card.addEventListener("submit", (ev) => {
    ev.preventDefault();
    if (card.dataset.answer) return;
    if (!reply.value.trim()) {
      replyError.textContent = "Write a reply, or decline.";
      replyError.hidden = false;
      reply.focus();
      return;
    }
    replyError.hidden = true;
    respond("accept", { text: reply.value });
  });
  card.addEventListener("click", (ev) => {
    const action = /** @type {HTMLElement} */ (ev.target).closest("[data-action]")?.getAttribute("data-action");
    if (action === "decline" || action === "cancel") respond(action);
  });
  return card;
}
