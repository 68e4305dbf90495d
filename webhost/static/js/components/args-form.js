// @ts-check
// A form generated from an object JSON Schema (tool inputSchema, prompt arguments, template
// variables), with client-side validation and a "raw JSON" mode for the whole argument object.

import { h, prettyJson } from "../html.js";
import { createField } from "./fields.js";

/**
 * @typedef {object} ArgsFormOptions
 * @property {string} submitLabel
 * @property {Record<string, string>} [submitAttrs] extra attributes for the submit button
 * @property {(args: Record<string, unknown>) => void} onSubmit
 * @property {boolean} [rawToggle] offer the raw JSON mode (default true)
 * @property {string} [emptyText] shown when the schema has no properties
 */

/**
 * @param {Record<string, any> | undefined} schema
 * @param {ArgsFormOptions} opts
 */
export function createArgsForm(schema, opts) {
  const root = schema && typeof schema === "object" ? schema : {};
  const props = root.properties && typeof root.properties === "object" ? root.properties : {};
  const required = new Set(Array.isArray(root.required) ? root.required.map(String) : []);
  // A top level we cannot split into fields (anyOf, no properties but extra keys allowed...)
  // is edited as raw JSON only.
  const formable = !root.type || root.type === "object";
  // An explicit empty property list (or no extra keys allowed) means "no arguments at all".
  const noArgs = formable && !Object.keys(props).length
    && ((root.properties && typeof root.properties === "object") || root.additionalProperties === false);
  const fields = Object.entries(props).map(([name, propSchema]) =>
    createField(name, propSchema, { required: required.has(name), root }));

  const formError = h("p", { class: "form-error", role: "alert", hidden: true });
  const rawArea = h("textarea", { class: "mono json-editor raw-json", rows: 8, spellcheck: "false",
    "aria-label": "Arguments as JSON", dataset: { testid: "raw-json" } });
  const rawStatus = h("p", { class: "json-status", "aria-live": "polite" });
  const rawBox = h("div", { class: "raw-box", hidden: true }, rawArea, rawStatus);
  const fieldBox = h("div", { class: "fields" },
    fields.length ? fields.map((f) => f.el)
      : h("p", { class: "muted empty-args", text: opts.emptyText ?? "No arguments." }));

  const rawToggle = h("input", { type: "checkbox", class: "raw-toggle-input" });
  const submit = h("button", { type: "submit", class: "primary", text: opts.submitLabel });
  for (const [k, v] of Object.entries(opts.submitAttrs ?? {})) submit.setAttribute(k, v);
  const resetBtn = h("button", { type: "button", class: "ghost", text: "Reset" });

  const form = h("form", { class: "args-form", novalidate: true },
    fieldBox, rawBox, formError,
    h("div", { class: "form-actions" },
      opts.rawToggle === false || noArgs ? null : h("label", { class: "check raw-toggle" }, rawToggle, h("span", { text: "Raw JSON" })),
      h("span", { class: "spacer" }), resetBtn, submit));

  let rawMode = false;
  rawArea.addEventListener("input", () => checkRaw());
  rawToggle.addEventListener("change", () => setRawMode(rawToggle.checked));
  resetBtn.addEventListener("click", () => {
    for (const f of fields) f.reset();
    rawArea.value = "{}";
    checkRaw();
    showFormError(null);
  });
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const result = collect();
    if (result.ok) opts.onSubmit(result.value);
  });

  if (!formable) {
    rawToggle.checked = true;
    rawToggle.disabled = true;
    setRawMode(true);
  }

  /** @param {boolean} on */
  function setRawMode(on) {
    if (on) {
      const current = {};
      for (const f of fields) {
        const r = f.read();
        if (r.present && r.error === undefined) Object.assign(current, { [f.name]: r.value });
      }
      rawArea.value = prettyJson(current);
      checkRaw();
    } else {
      const parsed = checkRaw();
      if (parsed.error) {
        rawToggle.checked = true;
        showFormError("Fix the JSON before switching back to the form");
        return;
      }
      const value = /** @type {Record<string, unknown>} */ (parsed.value ?? {});
      for (const f of fields) {
        if (f.name in value) f.write(value[f.name]);
        else f.reset();
      }
    }
    rawMode = on;
    rawBox.hidden = !on;
    fieldBox.hidden = on;
    showFormError(null);
  }

  /** @returns {{value?: unknown, error?: string}} */
  function checkRaw() {
    const text = rawArea.value.trim();
    /** @type {{value?: unknown, error?: string}} */
    let r;
    if (text === "") r = { value: {} };
    else {
      try {
        const value = JSON.parse(text);
        r = value && typeof value === "object" && !Array.isArray(value)
          ? { value } : { error: "The arguments must be a JSON object" };
      } catch (err) {
        r = { error: `JSON: ${err instanceof Error ? err.message : String(err)}` };
      }
    }
    rawStatus.textContent = r.error ?? "Valid JSON object";
    rawStatus.classList.toggle("bad", Boolean(r.error));
    return r;
  }

  /** @param {string | null} message */
  function showFormError(message) {
    formError.textContent = message ?? "";
    formError.hidden = !message;
  }

  /** @returns {{ok: true, value: Record<string, unknown>} | {ok: false}} */
  function collect() {
    showFormError(null);
    if (rawMode) {
      const r = checkRaw();
      if (r.error) {
        showFormError(r.error);
        rawArea.focus();
        return { ok: false };
      }
      return { ok: true, value: /** @type {Record<string, unknown>} */ (r.value) };
    }
    /** @type {Record<string, unknown>} */
    const value = {};
    /** @type {import("./fields.js").Field | null} */
    let firstBad = null;
    for (const f of fields) {
      const r = f.read();
      f.setError(r.error ?? null);
      if (r.error !== undefined) firstBad ??= f;
      else if (r.present) value[f.name] = r.value;
    }
    if (firstBad) {
      showFormError("Some fields need attention.");
      firstBad.focusTarget().focus();
      return { ok: false };
    }
    return { ok: true, value };
  }

  return {
    el: form,
    /** @param {boolean} busy */
    setBusy(busy) { submit.disabled = busy; },
    /** @param {Array<{field?: string, message?: string}>} errors server-side errors by field */
    showErrors(errors) {
      const unmatched = [];
      for (const e of errors) {
        const name = String(e.field ?? "").replace(/^\/+/, "").split(/[/.[]/)[0];
        const f = fields.find((x) => x.name === name);
        if (f) f.setError(String(e.message ?? "Invalid"));
        else unmatched.push(e.message);
      }
      showFormError(unmatched.length ? unmatched.join("; ") : "Some fields need attention.");
    },
    focus() { fields[0]?.focusTarget().focus(); },
    /**
     * Show these arguments (a history entry's): named fields get their value, the others their default.
     * @param {Record<string, unknown>} values
     */
    setValues(values) {
      if (rawMode) {
        rawArea.value = prettyJson(values);
        checkRaw();
      }
      for (const f of fields) {
        if (f.name in values) f.write(values[f.name]);
        else f.reset();
      }
      showFormError(null);
    },
    /** The arguments the form would send now (null while it is invalid). */
    values() {
      const r = collect();
      return r.ok ? r.value : null;
    },
  };
}
