// @ts-check
// A prompt: a form for its (string) arguments, prompts/get, then its messages by role.

import { h, replaceChildren } from "../html.js";
import { describeError } from "../rpc.js";
import { promptArgsForm } from "./prompt-args-form.js";
import { contentBlock, jsonDetails } from "./content-view.js";
import { copyButton, resultText } from "./copy.js";
import { metaEditor } from "./meta-editor.js";
import { prettyJson } from "../html.js";

/**
 * @typedef {object} PromptContext
 * @property {import("../rpc.js").RpcClient} rpc
 * @property {(server: string, uri: string) => Promise<any>} readResource
 * @property {boolean} [completions] the server offers completion/complete
 */

/**
 * @param {string} server @param {any} prompt @param {PromptContext} ctx
 * @returns {{el: HTMLElement, edit: (args: Record<string, unknown>) => void, run: (args: Record<string, unknown>) => void,
 *   values: () => Record<string, unknown> | null}}
 */
export function promptView(server, prompt, ctx) {
  const out = h("div", { class: "prompt-output", dataset: { testid: "prompt-result" } });
  const meta = metaEditor("prompts/get");
  const run = async (/** @type {Record<string, unknown>} */ values) => {
      /** @type {Record<string, unknown> | null} */
      let extra;
      try {
        extra = meta.value();
      } catch {
        return; // the editor says what is wrong
      }
      form.setBusy(true);
      out.dataset.status = "pending";
      replaceChildren(out, h("p", { class: "muted", text: "Loading…" }));
      try {
        const params = { server, name: prompt.name, arguments: values, ...(extra ? { _meta: extra } : {}) };
        const result = await ctx.rpc.request("prompts/get", params);
        out.dataset.status = "ok";
        replaceChildren(out, h("div", { class: "copy-actions" },
          copyButton("Copy text", "copy-text", () => resultText(result)),
          copyButton("Copy JSON", "copy-json", () => prettyJson(result)),
          copyButton("Copy request", "copy-request", () => prettyJson({ method: "prompts/get", params }))),
        renderMessages(server, result, ctx));
      } catch (err) {
        out.dataset.status = "error";
        replaceChildren(out, h("p", { class: "inline-error", text: describeError(err) }));
      } finally {
        form.setBusy(false);
      }
  };
  const form = promptArgsForm(server, prompt, {
    rpc: ctx.rpc,
    completions: ctx.completions,
    submitLabel: "Get prompt",
    submitAttrs: { "data-testid": "get-prompt" },
    onSubmit: (values) => { void run(values); },
  });
  const el = h("article", { class: "view prompt-view" },
    h("header", { class: "view-head" },
      h("div", { class: "view-title-row" },
        h("h2", { class: "view-title", text: String(prompt.title ?? prompt.name) }),
        prompt.title ? h("code", { class: "muted", text: String(prompt.name) }) : null),
      h("p", { class: "view-sub muted" }, "Prompt on ", h("strong", { text: server })),
      prompt.description ? h("p", { class: "description", text: String(prompt.description) }) : null),
    form.el, meta.el, out);
  return {
    el,
    edit: (values) => form.setValues(values),
    values: () => form.values(),
    run: (values) => { form.setValues(values); void run(values); },
  };
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
