// @ts-check
// A request for the user's approval (an app's tool call, opening a link, ...):
// [data-approval][data-kind] with Allow / Deny and "remember", answered with approvals/respond.

import { h, prettyJson } from "../html.js";
import { describeError } from "../rpc.js";

/** @param {any} req @param {import("../rpc.js").RpcClient} rpc */
export function approvalCard(req, rpc) {
  const kind = String(req.kind ?? "action");
  const remember = h("input", { type: "checkbox", name: "remember" });
  const status = h("p", { class: "card-status", role: "status" });
  const detail = req.detail === undefined || req.detail === null ? null
    : typeof req.detail === "string" ? h("pre", { class: "text-content approval-detail", text: req.detail })
      : h("pre", { class: "text-content json approval-detail", text: prettyJson(req.detail) });
  const allow = h("button", { type: "button", class: "primary", text: "Allow", dataset: { action: "allow" } });
  const deny = h("button", { type: "button", class: "ghost", text: "Deny", dataset: { action: "deny" } });
  const card = h("div", { class: "card approval", role: "group", "aria-label": "Approval request",
    dataset: { approval: "", kind, id: String(req.id), approvalServer: String(req.server ?? "") } },
  h("header", { class: "card-head" },
    h("span", { class: "badge warning", text: "Approval" }),
    h("span", {}, h("strong", { class: "asker", text: String(req.server ?? "webhost") }), " wants to"),
    h("span", { class: "badge", text: kind })),
  req.summary ? h("p", { class: "approval-summary", text: String(req.summary) }) : null,
  detail,
  h("label", { class: "check" }, remember, h("span", { text: "Remember my answer for this session" })),
  status,
  h("div", { class: "card-actions" }, deny, h("span", { class: "spacer" }), allow));

  /** @param {"allow" | "deny"} decision */
  async function decide(decision) {
    allow.disabled = true;
    deny.disabled = true;
    status.className = "card-status";
    status.textContent = "Sending…";
    try {
      await rpc.request("approvals/respond", { id: req.id, decision, remember: remember.checked });
      card.classList.add("answered");
      status.textContent = decision === "allow" ? "Allowed." : "Denied.";
    } catch (err) {
      status.className = "card-status error";
      status.textContent = describeError(err);
      allow.disabled = false;
      deny.disabled = false;
    }
  }
  allow.addEventListener("click", () => decide("allow"));
  deny.addEventListener("click", () => decide("deny"));
  return card;
}
