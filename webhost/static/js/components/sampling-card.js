// @ts-check
// A server's sampling request (it wants a model reply): [data-elicitation][data-mode="sampling"]. The person
// reads the conversation and writes the reply, lets one of the team's models write it
// ([data-action="answer-with-model"]: the request as shown goes to that model, its text is sent as the reply),
// or declines.

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
  const byModel = h("span", { class: "sampling-model", hidden: true });
  card.append(status, h("div", { class: "card-actions" },
    actionButton("decline", "Decline", "ghost"), actionButton("cancel", "Cancel", "ghost"),
    h("span", { class: "spacer" }), byModel, actionButton("accept", "Send reply", "primary", "submit")));
  void offerModels(ctx, byModel, async (model) => {
    replyError.hidden = true;
    status.textContent = "The model is writing the reply…";
    try {
      const written = await ctx.rpc.request("chat/sample", { id: req.id, model });
      reply.value = String(written?.text ?? "");
      respond("accept", { text: reply.value }, { model: String(written?.model ?? model) });
    } catch (err) {
      status.textContent = "";
      replyError.textContent = err instanceof Error ? err.message : String(err);
      replyError.hidden = false;
    }
  });
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

/**
 * The models the person may let answer (chat/info): a choice and [data-action="answer-with-model"].
 * @param {import("./elicitation-card.js").CardContext} ctx @param {HTMLElement} slot
 * @param {(model: string) => Promise<void>} answer
 */
async function offerModels(ctx, slot, answer) {
  let info;
  try {
    info = await ctx.rpc.request("chat/info", {});
  } catch {
    return;  // no chat: the person writes the reply
  }
  const models = (Array.isArray(info?.models) ? info.models : []).filter((/** @type {any} */ m) => !m.needsKey);
  if (!models.length) return;
  const choice = h("select", { "aria-label": "Model", name: "sampling-model" },
    models.map((/** @type {any} */ m) => h("option", { value: String(m.id), text: String(m.label ?? m.id) })));
  const go = h("button", { type: "button", class: "ghost", text: "Answer with the model", dataset: { action: "answer-with-model" } });
  go.addEventListener("click", async () => {
    go.disabled = true;
    try { await answer(choice.value); } finally { go.disabled = false; }
  });
  if (models.length < 2) choice.hidden = true;
  slot.append(choice, go);
  slot.hidden = false;
}
