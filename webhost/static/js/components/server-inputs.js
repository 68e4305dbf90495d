// @ts-check
// The values a server waits for (`${input:ID}` in its entry, status "needs-input"): one control per
// missing input (a password field when the input is a secret) and Save, which sends `inputs/set`.
// The contract's selectors: form[data-server-input][data-server="NAME"] with [name="ID"] and
// [data-action="save"]. A value is sent once and never comes back: the page keeps nothing.

import { h } from "../html.js";
import { describeError } from "../rpc.js";

/**
 * @typedef {{id: string, description?: string, password?: boolean, default?: string | null}} InputSpec
 */

/**
 * @param {string} server
 * @param {InputSpec[]} inputs what the server waits for (its state's `inputs`)
 * @param {import("../rpc.js").RpcClient} rpc
 * @param {(state: any) => void} connected called with each server state `inputs/set` started
 */
export function serverInputForm(server, inputs, rpc, connected) {
  const error = h("p", { class: "form-error", role: "alert", hidden: true });
  const save = h("button", { type: "submit", class: "small primary", text: "Save", dataset: { action: "save" } });
  const fields = inputs.map((spec, index) => {
    const id = `server-input-${server.replace(/[^\w-]/g, "_")}-${index}`;
    const control = h("input", { id, name: spec.id, type: spec.password ? "password" : "text", required: true,
      autocomplete: spec.password ? "new-password" : "off", spellcheck: "false",
      value: spec.password ? "" : String(spec.default ?? "") });
    return h("div", { class: "field" }, h("label", { class: "field-label", for: id, text: String(spec.description || spec.id) }), control);
  });
  const form = h("form", { class: "card server-input", novalidate: true, dataset: { serverInput: "", server },
    "aria-label": `Values for ${server}` },
  h("p", { class: "field-help", text: `${server} needs ${inputs.length === 1 ? "a value" : "values"} from you before it connects.` }),
  fields, error, h("div", { class: "form-actions" }, save));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    /** @type {Record<string, string>} */
    const values = {};
    for (const input of form.querySelectorAll("input")) if (input.value) values[input.name] = input.value;
    const missing = inputs.filter((spec) => !values[spec.id]).map((spec) => spec.description || spec.id);
    if (missing.length) {
      error.textContent = `Needed: ${missing.join(", ")}`;
      error.hidden = false;
      return;
    }
    save.disabled = true;
    error.hidden = true;
    try {
      const result = await rpc.request("inputs/set", { server, values });
      for (const input of form.querySelectorAll("input")) input.value = "";
      for (const state of result?.servers ?? []) connected(state);
    } catch (err) {
      error.textContent = describeError(err);
      error.hidden = false;
    } finally {
      save.disabled = false;
    }
  });
  return form;
}
