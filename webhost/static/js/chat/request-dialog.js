// @ts-check
// "What the model saw": the exact requests webhost sent for one answer (system prompt with the apps'
// context blocks, tools, messages; secrets masked), one per step of the turn, in a modal dialog.

import { h } from "../html.js";
import { jsonPre } from "../components/json-highlight.js";
import { describeError } from "../rpc.js";

/**
 * @param {import("../rpc.js").RpcClient} rpc
 * @param {string} conversationId @param {string} messageId
 */
export async function showRequests(rpc, conversationId, messageId) {
  const body = h("div", { class: "chat-requests" }, h("p", { class: "muted", text: "Loading…" }));
  const close = h("button", { type: "button", class: "small", text: "Close", dataset: { action: "close" } });
  const dialog = h("dialog", { class: "chat-request-dialog", "aria-label": "What the model saw", dataset: { chatRequests: "" } },
    h("header", { class: "chat-dialog-head" }, h("h3", { text: "What the model saw" }), h("span", { class: "spacer" }), close),
    h("p", { class: "muted", text: "The exact request webhost sent to the model for this answer, one per step (secrets masked)." }),
    body);
  close.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  try {
    const answer = await rpc.request("chat/requests", { conversationId, messageId });
    const requests = Array.isArray(answer?.requests) ? answer.requests : [];
    if (!requests.length) {
      body.replaceChildren(h("p", { class: "muted", text: "No request is kept for this answer (only the newest ones are)." }));
      return;
    }
    body.replaceChildren(...requests.map((/** @type {any} */ r) => {
      const sent = typeof r.sentAt === "number" ? new Date(r.sentAt * 1000).toLocaleTimeString() : "";
      // A request fitted to the model's context (chat/prompt.py) says so in its system prompt: said here too.
      const fitted = /the (\d+) oldest turns of this conversation \((\d+) messages\) were left out/.exec(JSON.stringify(r.body));
      return h("details", { class: "chat-request", open: requests.length === 1 },
        h("summary", { text: `Step ${r.step}${sent ? ` · sent ${sent}` : ""}` }),
        fitted ? h("p", { class: "chat-request-fitted", dataset: { leftOut: fitted[2] },
          text: `${fitted[1]} oldest turns (${fitted[2]} messages) were left out of this request to fit the model's context.` }) : null,
        Object.assign(jsonPre(r.body), { tabIndex: 0 }));
    }));
  } catch (err) {
    body.replaceChildren(h("p", { class: "inline-error", text: describeError(err) }));
  }
}
