// @ts-check
// The form of a prompt's (string) arguments, with the server's completions as they are typed
// (completion/complete, ref/prompt), shared by the workbench's prompt view and the chat's `/` (composer-mcp.js).
// A resource template's variables take the same form (`templateArgsForm`, ref/resource).

import { createArgsForm } from "./args-form.js";
import { attachCompletion, otherValues } from "./completion.js";

/**
 * @typedef {object} ArgsFormContext
 * @property {{request: (method: string, params: Record<string, unknown>) => Promise<any>}} rpc
 * @property {boolean} [completions] the server offers completion/complete
 * @property {string} submitLabel
 * @property {Record<string, string>} [submitAttrs]
 * @property {(values: Record<string, unknown>) => void} onSubmit
 */

/** @param {Array<{name: string, title?: string, description?: string, required?: boolean}>} args */
function stringSchema(args) {
  return {
    type: "object",
    properties: Object.fromEntries(args.map((a) => [String(a.name), {
      type: "string", title: a.title ?? a.name, description: a.description,
    }])),
    required: args.filter((a) => a.required).map((a) => String(a.name)),
  };
}

/**
 * @param {string} server @param {Record<string, unknown>} ref completion/complete's ref
 * @param {Array<{name: string, title?: string, description?: string, required?: boolean}>} args
 * @param {ArgsFormContext} ctx @param {string} emptyText
 */
function stringArgsForm(server, ref, args, ctx, emptyText) {
  const form = createArgsForm(stringSchema(args), {
    submitLabel: ctx.submitLabel, submitAttrs: ctx.submitAttrs, emptyText, onSubmit: ctx.onSubmit,
  });
  if (ctx.completions) {
    for (const a of args) {
      const name = String(a.name);
      const input = /** @type {HTMLInputElement | null} */ (form.el.querySelector(`input[name="${CSS.escape(name)}"]`));
      if (input) attachCompletion(input, (value) => ctx.rpc.request("completion/complete", {
        server, ref, argument: { name, value }, context: { arguments: otherValues(form.el, name) } }));
    }
  }
  return form;
}

/** A prompt's arguments. @param {string} server @param {any} prompt @param {ArgsFormContext} ctx */
export function promptArgsForm(server, prompt, ctx) {
  const args = Array.isArray(prompt.arguments) ? prompt.arguments : [];
  return stringArgsForm(server, { type: "ref/prompt", name: prompt.name }, args, ctx, "This prompt takes no arguments.");
}

/** A resource template's variables. @param {string} server @param {string} template @param {string[]} names
 * @param {ArgsFormContext} ctx */
export function templateArgsForm(server, template, names, ctx) {
  const args = names.map((name) => ({ name, required: true }));
  return stringArgsForm(server, { type: "ref/resource", uri: template }, args, ctx, "This template has no variables.");
}
