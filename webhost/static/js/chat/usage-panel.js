// @ts-check
// Tokens used over the last 30 days, per person and model, as the providers reported them (chat/usage): an
// admin sees everyone's totals, a member their own. No conversation and no text is in it.

import { h } from "../html.js";
import { describeError } from "../rpc.js";

/** @param {import("../rpc.js").RpcClient} rpc */
export function usagePanel(rpc) {
  const body = h("div", { class: "chat-usage-body" });
  const panel = h("details", { class: "chat-usage-panel", dataset: { chatUsage: "" } },
    h("summary", { text: "Tokens used (30 days)" }), body);
  panel.addEventListener("toggle", async () => {
    if (!panel.open) return;
    body.replaceChildren(h("p", { class: "muted", text: "Loading…" }));
    try {
      const answer = await rpc.request("chat/usage", {});
      const rows = Array.isArray(answer?.usage) ? answer.usage : [];
      if (!rows.length) {
        body.replaceChildren(h("p", { class: "muted", text: "None yet." }));
        return;
      }
      body.replaceChildren(h("table", { class: "chat-usage-table" },
        h("thead", {}, h("tr", {}, answer.everyone ? h("th", { text: "Person" }) : null,
          h("th", { text: "Model" }), h("th", { text: "In" }), h("th", { text: "Out" }))),
        h("tbody", {}, rows.map((/** @type {any} */ r) => h("tr", {},
          answer.everyone ? h("td", { text: String(r.person) }) : null,
          h("td", { text: String(r.model) }), h("td", { text: String(r.input) }), h("td", { text: String(r.output) }))))));
    } catch (err) {
      body.replaceChildren(h("p", { class: "inline-error", text: describeError(err) }));
    }
  });
  return panel;
}
