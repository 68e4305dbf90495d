// @ts-check
// The "Conversation" view of an App panel: the App's ui/message messages and its latest
// ui/update-model-context, as the backend recorded them (`apps/conversation`). webhost has no
// model, so this shows what one would be given.

import { h, prettyJson } from "../html.js";

/** @param {any} block */
function blockView(block) {
  if (block && block.type === "text" && typeof block.text === "string") {
    return h("p", { class: "wh-msg-text", text: block.text });
  }
  const type = typeof block?.type === "string" ? block.type : "content";
  return h("details", { class: "wh-json" }, h("summary", { text: `[${type}]` }),
    h("pre", { class: "wh-pre", text: prettyJson(block) }));
}

/** @param {unknown} ts */
function time(ts) {
  return typeof ts === "number" ? new Date(ts * 1000).toLocaleTimeString() : "";
}

/** @param {{messages: any[], modelContext: any}} conversation */
export function renderConversation(conversation) {
  const messages = Array.isArray(conversation.messages) ? conversation.messages : [];
  const ctx = conversation.modelContext;
  return h("div", { class: "wh-conversation" },
    h("p", { class: "muted", text: "webhost has no model; this is what a model would be given." }),
    h("section", { class: "wh-info-section" },
      h("h4", { text: `Messages (${messages.length})` }),
      messages.length
        ? h("ol", { class: "wh-messages", dataset: { info: "messages" } }, messages.map((m) =>
          h("li", { class: "wh-message" },
            h("div", { class: "wh-msg-head" }, h("strong", { text: String(m?.role ?? "user") }),
              h("span", { class: "muted", text: time(m?.ts) })),
            (Array.isArray(m?.content) ? m.content : []).map(blockView))))
        : h("p", { class: "muted", text: "The app has not sent a message (ui/message)." })),
    h("section", { class: "wh-info-section", dataset: { info: "model-context" } },
      h("h4", { text: "Model context (latest ui/update-model-context)" }),
      ctx
        ? h("div", {},
          h("p", { class: "muted", text: `Updated ${time(ctx.ts)}; each update replaces the previous one.` }),
          (Array.isArray(ctx.content) ? ctx.content : []).map(blockView),
          ctx.structuredContent !== undefined && ctx.structuredContent !== null
            ? h("pre", { class: "wh-pre", text: prettyJson(ctx.structuredContent) }) : null)
        : h("p", { class: "muted", text: "The app has not set any model context." })));
}
