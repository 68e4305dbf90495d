// @ts-check
// A prompt: a form for its (string) arguments, prompts/get, then its messages by role.

import { h, replaceChildren } from "../html.js";
import { describeError } from "../rpc.js";
import { createArgsForm } from "./args-form.js";
import { contentBlock, jsonDetails } from "./content-view.js";

/**
 * @param {string} server @param {any} prompt
 * @param {{rpc: import("../rpc.js").RpcClient, readResource: (server: string, uri: string) => Promise<any>}} ctx
 */
export function promptView(server, prompt, ctx) {
  const args = Array.isArray(prompt.arguments) ? prompt.arguments : [];
  /** @type {Record<string, any>} */
  const schema = {
    type: "object",
    properties: Object.fromEntries(args.map((/** @type {any} */ a) => [String(a.name), {
      type: "string", title: a.title ?? a.name, description: a.description,
    }])),
    required: args.filter((/** @type {any} */ a) => a.required).map((/** @type {any} */ a) => String(a.name)),
  };
  const out = h("div", { class: "prompt-output", dataset: { testid: "prompt-result" } });
  const form = createArgsForm(schema, {
    submitLabel: "Get prompt",
    submitAttrs: { "data-testid": "get-prompt" },
    emptyText: "This prompt takes no arguments.",
    onSubmit: async (values) => {
      form.setBusy(true);
      out.dataset.status = "pending";
      replaceChildren(out, h("p", { class: "muted", text: "Loading…" }));
      try {
        const result = await ctx.rpc.request("prompts/get", { server, name: prompt.name, arguments: values });
        out.dataset.status = "ok";
        replaceChildren(out, renderMessages(server, result, ctx));
      } catch (err) {
        out.dataset.status = "error";
        replaceChildren(out, h("p", { class: "inline-error", text: describeError(err) }));
      } finally {
        form.setBusy(false);
      }
    },
  });
  return h("article", { class: "view prompt-view" },
    h("header", { class: "view-head" },
      h("div", { class: "view-title-row" },
        h("h2", { class: "view-title", text: String(prompt.title ?? prompt.name) }),
        prompt.title ? h("code", { class: "muted", text: String(prompt.name) }) : null),
      h("p", { class: "view-sub muted" }, "Prompt on ", h("strong", { text: server })),
      prompt.description ? h("p", { class: "description", text: String(prompt.description) }) : null),
    form.el, out);
}

/** @param {string} server @param {any} result @param {any} ctx */
function renderMessages(server, result, ctx) {
  const messages = Array.isArray(result?.messages) ? result.messages : [];
  return [
    result?.description ? h("p", { class: "description", text: String(result.description) }) : null,
    messages.length ? h("ol", { class: "messages" }, messages.map((/** @type {any} */ m) => {
      const blocks = Array.isArray(m.content) ? m.content : [m.content];
      return h("li", { class: `message role-${String(m.role).replace(/[^\w-]/g, "")}` },
        h("span", { class: "role", text: String(m.role ?? "?") }),
        h("div", { class: "message-body" }, blocks.map((/** @type {any} */ b) => contentBlock(b, { server, readResource: ctx.readResource }))));
    })) : h("p", { class: "muted", text: "The prompt returned no messages." }),
    result?._meta ? jsonDetails(result._meta, "_meta", false) : null,
  ];
}
