// @ts-check
// One form control per property, shared by the tool form (createField, from the tool's inputSchema)
// and the elicitation form (fieldFromSpec, from the backend's description of each property:
// webhost/elicitation/subset.py describe_fields, sent as the input request's `fields`).
// A form sends what it shows: a field showing a value (a default included) is present in the
// answer; an empty optional field is absent, except a plain text field the person cleared, which is
// sent as "" (and a nullable one the person cleared, sent as null). Multi-line strings get a textarea
// (format "textarea", x-multiline, a default or a written value with newlines), so newlines survive.

import { h, uid, prettyJson } from "../html.js";
import { classify, localToRfc3339, rfc3339ToLocal, typeMismatch } from "../schema.js";
import { compoundField } from "./compound-fields.js";

/**
 * @typedef {object} Field
 * @property {string} name
 * @property {HTMLElement} el
 * @property {boolean} required
 * @property {() => {present: boolean, value?: unknown, error?: string}} read
 * @property {(value: unknown) => void} write  set a value and mark the field touched
 * @property {() => void} reset  back to the default and untouched
 * @property {(message: string | null) => void} setError
 * @property {() => HTMLElement} focusTarget
 */

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const MULTILINE_NAME = /content|text|body|code|script|query|prompt|message|markdown|html|sql|source|template/i;

/** Whether a string property is edited in a textarea. @param {string} name @param {Record<string, any>} s */
export function isMultiline(name, s) {
  if (s.format === "textarea" || s["x-multiline"] === true) return true;
  if (typeof s.default === "string" && s.default.includes("\n")) return true;
  return Number(s.maxLength ?? Infinity) > 256 && MULTILINE_NAME.test(name);
}
const INPUT_TYPES = /** @type {Record<string, string>} */ ({
  email: "email", uri: "url", url: "url", date: "date", "date-time": "datetime-local",
});

/**
 * What the backend says about one elicitation property (subset.py FieldSpec); absent constraints are null.
 * @typedef {object} FieldSpec
 * @property {string} name
 * @property {"string" | "number" | "integer" | "boolean" | "select" | "multiselect"} kind
 * @property {string} title
 * @property {string | null} description
 * @property {boolean} required
 * @property {unknown} default
 * @property {{value: string, label: string}[]} options
 * @property {number | null} minLength
 * @property {number | null} maxLength
 * @property {number | null} minimum
 * @property {number | null} maximum
 * @property {number | null} minItems
 * @property {number | null} maxItems
 * @property {string | null} format
 * @property {string | null} inputType
 */

/** @typedef {import("../schema.js").FieldKind & {inputType?: string}} FieldInfo */

/**
 * @typedef {object} FieldOptions
 * @property {boolean} required
 * @property {Record<string, any>} root the schema local `$ref`s point into
 * @property {() => void} [onInput]
 * @property {string} [path] the controls' name: the argument at the top, `ARG.key` and `ARG[0]` inside
 *   (docs/automation.md, "Nested arguments")
 * @property {string[]} [refs] the `$ref`s being expanded above this field (a cycle is expanded on demand)
 * @property {string} [label] the label shown instead of the schema's title (an array's item: "Tags 2")
 * @property {boolean} [item] an array's item: no "required" mark (every item is), and an empty text item is ""
 */

/**
 * A tool argument's control, classified from its JSON Schema: a nested fieldset, a list of items or a
 * choice of shapes (./compound-fields.js) holds further fields made here.
 * @param {string} name @param {unknown} rawSchema @param {FieldOptions} opts
 * @returns {Field}
 */
export function createField(name, rawSchema, opts) {
  const info = classify(rawSchema, opts.root);
  if (info.kind === "object" || info.kind === "array" || info.kind === "choice") {
    return compoundField(name, rawSchema, info, opts, createField);
  }
  return buildField(name, info, opts.required, opts.onInput, opts.path, opts);
}

const SPEC_KINDS = /** @type {const} */ ({
  string: "string", number: "number", integer: "number", boolean: "boolean", select: "select", multiselect: "multi",
});

/**
 * An elicitation property's control, exactly as the backend described it (nothing re-derived here).
 * @param {FieldSpec} spec @param {{onInput?: () => void}} [opts]
 * @returns {Field}
 */
export function fieldFromSpec(spec, { onInput } = {}) {
  const kind = SPEC_KINDS[spec.kind] ?? "string";
  /** @type {Record<string, any>} */
  const schema = {
    type: spec.kind === "select" ? "string" : spec.kind === "multiselect" ? "array" : spec.kind,
    title: spec.title, description: spec.description, default: spec.default, format: spec.format,
    minLength: spec.minLength, maxLength: spec.maxLength, minimum: spec.minimum, maximum: spec.maximum,
    minItems: spec.minItems, maxItems: spec.maxItems,
  };
  /** @type {FieldInfo} */
  const info = { kind, schema, options: spec.options, integer: spec.kind === "integer",
    inputType: spec.inputType ?? undefined };
  return buildField(spec.name, info, Boolean(spec.required), onInput);
}

/**
 * @param {string} name @param {FieldInfo} info @param {boolean} required @param {(() => void) | undefined} onInput
 * @param {string} [path] the controls' name (the property's name by default)
 * @param {{label?: string, item?: boolean}} [extra]
 * @returns {Field}
 */
function buildField(name, info, required, onInput, path = name, extra = {}) {
  const s = info.schema;
  const id = uid("f");
  const helpId = `${id}-help`;
  const errId = `${id}-err`;
  let touched = false;
  const errorEl = h("p", { class: "field-error", id: errId, hidden: true, dataset: { fieldError: path } });
  const title = String(extra.label ?? s.title ?? name);
  const hints = constraintHints(s, info);
  const help = s.description || hints ? h("p", { class: "field-help", id: helpId },
    s.description ? String(s.description) : null, s.description && hints ? " " : null,
    hints ? h("span", { class: "field-hint", text: hints }) : null) : null;
  const describedBy = [help ? helpId : "", errId].filter(Boolean).join(" ");
  const reqMark = required && !extra.item ? h("span", { class: "req", title: "required", "aria-hidden": "true", text: "*" }) : null;
  const typeTag = h("span", { class: "field-type", text: typeLabel(s, info) });

  /** @type {{control: HTMLElement, get: () => {present: boolean, value?: unknown, error?: string}, set: (v: unknown) => void, clear: () => void}} */
  const impl = build();
  const wrapper = h("div", { class: `field field-${info.kind}`, dataset: { field: path } });
  if (info.kind === "boolean" || info.kind === "multi") {
    wrapper.append(impl.control);
  } else {
    wrapper.append(h("label", { class: "field-label", for: id }, title, reqMark, typeTag), impl.control);
  }
  if (help) wrapper.append(help);
  wrapper.append(errorEl);

  const markTouched = () => {
    touched = true;
    wrapper.classList.add("touched");
    if (!errorEl.hidden) setError(impl.get().error ?? null);
    onInput?.();
  };
  // On the wrapper: a string's control may be swapped for a textarea (a value with newlines).
  wrapper.addEventListener("input", markTouched);
  wrapper.addEventListener("change", markTouched);
  impl.clear();

  /** @param {string | null} message */
  function setError(message) {
    errorEl.textContent = message ?? "";
    errorEl.hidden = !message;
    wrapper.classList.toggle("invalid", Boolean(message));
    for (const c of wrapper.querySelectorAll("input, select, textarea")) {
      if (message) c.setAttribute("aria-invalid", "true");
      else c.removeAttribute("aria-invalid");
    }
  }

  return {
    name,
    el: wrapper,
    required,
    read() { return impl.get(); },
    write(value) { impl.set(value); touched = true; wrapper.classList.add("touched"); },
    reset() { impl.clear(); touched = false; wrapper.classList.remove("touched"); setError(null); },
    setError,
    focusTarget: () => /** @type {HTMLElement} */ (wrapper.querySelector("input, select, textarea") ?? impl.control),
  };

  function build() {
    switch (info.kind) {
      case "boolean": return buildBoolean();
      case "number": return buildNumber();
      case "select": return buildSelect();
      case "multi": return buildMulti();
      case "string": return buildString();
      default: return buildJson();
    }
  }

  function common() {
    // An item can always be removed, so its control is not `required` (an empty number row is still an error).
    return { id, name: path, required: required && !extra.item, "aria-describedby": describedBy };
  }

  function buildString() {
    const format = String(s.format ?? "");
    const type = info.inputType ?? INPUT_TYPES[format] ?? "text";
    const placeholder = type === "text" && Array.isArray(s.examples) ? String(s.examples[0] ?? "") : null;
    const textarea = () => h("textarea", { ...common(), rows: 3, minlength: s.minLength, maxlength: s.maxLength,
      placeholder, dataset: { multiline: "true" } });
    const control = type === "text" && isMultiline(name, s)
      ? textarea()
      : h("input", { ...common(), type, minlength: s.minLength, maxlength: s.maxLength,
        step: type === "datetime-local" ? 1 : null, autocomplete: "off", placeholder });
    let input = /** @type {HTMLInputElement} */ (control);
    // Cleared by the person: a plain text field says so with "" (a formatted or minLength one cannot).
    const clearable = type === "text" && !format && !(Number(s.minLength) > 0);
    return {
      control,
      get() {
        const v = input.value;
        if (type !== "text" && input.validity.badInput) return { present: true, error: "Enter a complete value" };
        if (v === "") {
          // An empty text row of a list shows "" and sends it; a formatted one cannot be empty.
          if (extra.item && clearable) return { present: true, value: "" };
          if (required) return { present: true, error: "Required" };
          if (touched && s.nullable) return { present: true, value: null };
          return touched && clearable ? { present: true, value: "" } : { present: false };
        }
        if (input.validity.typeMismatch) {
          return { present: true, error: type === "email" ? "Enter an email address" : "Enter an absolute URL (https://…)" };
        }
        const len = [...v].length;
        if (typeof s.minLength === "number" && len < s.minLength) return { present: true, error: `At least ${s.minLength} characters` };
        if (typeof s.maxLength === "number" && len > s.maxLength) return { present: true, error: `At most ${s.maxLength} characters` };
        if (format === "date-time") {
          const value = localToRfc3339(v);
          return value ? { present: true, value } : { present: true, error: "Enter a date and time" };
        }
        return { present: true, value: v };
      },
      /** @param {unknown} v */
      set(v) {
        const text = format === "date-time" ? rfc3339ToLocal(v) : v === undefined || v === null ? "" : String(v);
        if (type === "text" && text.includes("\n") && input.tagName === "INPUT") {
          // An input would drop the newlines: edit this value in a textarea.
          const area = /** @type {HTMLInputElement} */ (/** @type {unknown} */ (textarea()));
          input.replaceWith(area);
          input = area;
        }
        input.value = text;
      },
      clear() { this.set(s.default); },
    };
  }

  function buildNumber() {
    const integer = Boolean(info.integer);
    const control = h("input", { ...common(), type: "number", inputmode: integer ? "numeric" : "decimal",
      step: integer ? 1 : "any", min: s.minimum, max: s.maximum });
    return {
      control,
      get() {
        if (control.validity.badInput) return { present: true, error: "Enter a number" };
        const text = control.value.trim();
        if (text === "") {
          if (required) return { present: true, error: "Required" };
          return touched && s.nullable ? { present: true, value: null } : { present: false };
        }
        const n = Number(text);
        if (!Number.isFinite(n)) return { present: true, error: "Enter a number" };
        if (integer && !Number.isInteger(n)) return { present: true, error: "Enter a whole number" };
        if (integer && Math.abs(n) > MAX_SAFE) return { present: true, error: "Number is too large" };
        const error = rangeError(n, s);
        return error ? { present: true, error } : { present: true, value: n };
      },
      /** @param {unknown} v */
      set(v) { control.value = typeof v === "number" ? String(v) : ""; },
      clear() { this.set(s.default); },
    };
  }

  function buildBoolean() {
    const box = h("input", { ...common(), type: "checkbox" });
    const hasDefault = typeof s.default === "boolean";
    // Optional with no default: unset is shown as indeterminate so "not answered" stays absent.
    const triState = !required && !hasDefault;
    const unset = triState ? h("button", { type: "button", class: "link-button field-unset", text: "unset",
      title: "Leave this unanswered", hidden: true }) : null;
    let isSet = !triState;
    const control = h("div", { class: "check-row" },
      h("label", { class: "check" }, box, h("span", { class: "field-label-text" }, title, reqMark ? " " : null, reqMark), typeTag),
      unset);
    box.addEventListener("change", () => { isSet = true; if (unset) unset.hidden = false; });
    unset?.addEventListener("click", () => {
      box.checked = false; box.indeterminate = true; isSet = false; unset.hidden = true;
      touched = false; wrapper.classList.remove("touched"); onInput?.();
    });
    return {
      control,
      get() { return isSet || required ? { present: true, value: box.checked } : { present: false }; },
      /** @param {unknown} v */
      set(v) { box.checked = v === true; box.indeterminate = false; isSet = true; if (unset) unset.hidden = false; },
      clear() {
        box.checked = s.default === true;
        box.indeterminate = triState;
        isSet = !triState;
        if (unset) unset.hidden = true;
      },
    };
  }

  function buildSelect() {
    const options = info.options ?? [];
    const keys = optionKeys(options);
    const control = h("select", common(),
      h("option", { value: "", text: required ? "— choose —" : "— not set —" }),
      options.map((o, i) => h("option", { value: keys[i], text: o.label })));
    return {
      control,
      get() {
        if (control.value === "") {
          if (required) return { present: true, error: "Required" };
          return touched && s.nullable ? { present: true, value: null } : { present: false };
        }
        return { present: true, value: options[keys.indexOf(control.value)]?.value };
      },
      /** @param {unknown} v */
      set(v) {
        const i = options.findIndex((o) => o.value === v);
        control.value = i >= 0 ? keys[i] : "";
      },
      clear() { this.set(s.default); },
    };
  }

  function buildMulti() {
    const options = info.options ?? [];
    const keys = optionKeys(options);
    const boxes = options.map((o, i) => h("input", { type: "checkbox", name: path, value: keys[i],
      id: `${id}-${i}`, "aria-describedby": describedBy }));
    const control = h("fieldset", { class: "check-group", id },
      h("legend", { class: "field-label" }, title, reqMark, typeTag),
      boxes.map((b, i) => h("label", { class: "check" }, b, h("span", { text: options[i].label }))));
    return {
      control,
      get() {
        const value = boxes.filter((b) => b.checked).map((b) => options[keys.indexOf(b.value)].value);
        // Nothing chosen, nothing touched and no default shown: not answered.
        if (!value.length && !required && !touched && !Array.isArray(s.default)) return { present: false };
        const error = countError(value.length, s);
        return error ? { present: true, error } : { present: true, value };
      },
      /** @param {unknown} v */
      set(v) {
        const list = Array.isArray(v) ? v : [];
        boxes.forEach((b, i) => { b.checked = list.includes(options[i].value); });
      },
      clear() { this.set(s.default); },
    };
  }

  function buildJson() {
    const status = h("p", { class: "json-status", "aria-live": "polite" });
    const area = h("textarea", { ...common(), rows: 4, class: "mono json-editor", spellcheck: "false",
      placeholder: jsonPlaceholder(s) });
    const control = h("div", { class: "json-field" }, area, status);
    const check = () => {
      const r = parse();
      status.textContent = r.error ?? (r.present ? "Valid JSON" : "");
      status.classList.toggle("bad", Boolean(r.error));
      return r;
    };
    area.addEventListener("input", check);
    /** @returns {{present: boolean, value?: unknown, error?: string}} */
    function parse() {
      const text = area.value.trim();
      if (text === "") return required ? { present: true, error: "Required" } : { present: false };
      let value;
      try {
        value = JSON.parse(text);
      } catch (err) {
        return { present: true, error: `JSON: ${err instanceof Error ? err.message : String(err)}` };
      }
      const mismatch = typeMismatch(value, s);
      return mismatch ? { present: true, error: mismatch } : { present: true, value };
    }
    return {
      control,
      get: check,
      /** @param {unknown} v */
      set(v) { area.value = v === undefined ? "" : prettyJson(v); check(); },
      clear() { this.set(s.default); status.textContent = ""; },
    };
  }
}

/**
 * Control values for options: the option's own value as text (so automation can select
 * `[name=X][value=Y]`), or its index when two options would read the same (1 and "1").
 * @param {Array<{value: unknown}>} options @returns {string[]}
 */
function optionKeys(options) {
  const texts = options.map((o) => String(o.value));
  return new Set(texts).size === texts.length && !texts.includes("") ? texts : options.map((_, i) => String(i));
}

/** @param {number} n @param {Record<string, any>} s */
function rangeError(n, s) {
  if (typeof s.minimum === "number" && n < s.minimum) return `Must be at least ${s.minimum}`;
  if (typeof s.maximum === "number" && n > s.maximum) return `Must be at most ${s.maximum}`;
  if (typeof s.exclusiveMinimum === "number" && n <= s.exclusiveMinimum) return `Must be more than ${s.exclusiveMinimum}`;
  if (typeof s.exclusiveMaximum === "number" && n >= s.exclusiveMaximum) return `Must be less than ${s.exclusiveMaximum}`;
  return null;
}

/** @param {number} count @param {Record<string, any>} s */
function countError(count, s) {
  if (typeof s.minItems === "number" && count < s.minItems) return `Choose at least ${s.minItems}`;
  if (typeof s.maxItems === "number" && count > s.maxItems) return `Choose at most ${s.maxItems}`;
  return null;
}

/** @param {Record<string, any>} s @param {import("../schema.js").FieldKind} info */
function typeLabel(s, info) {
  if (info.kind === "select") return "choice";
  if (info.kind === "multi") return "choices";
  if (info.kind === "json") return Array.isArray(s.type) ? s.type.join("|") : String(s.type ?? "json");
  return s.format ? `${s.type} · ${s.format}` : String(s.type);
}

/** @param {Record<string, any>} s @param {import("../schema.js").FieldKind} info */
function constraintHints(s, info) {
  const parts = [];
  if (info.kind === "multi") {
    const lo = s.minItems, hi = s.maxItems;
    if (typeof lo === "number" && typeof hi === "number") parts.push(lo === hi ? `choose ${lo}` : `choose ${lo}–${hi}`);
    else if (typeof lo === "number") parts.push(`at least ${lo}`);
    else if (typeof hi === "number") parts.push(`at most ${hi}`);
  }
  if (info.kind === "number") {
    if (typeof s.minimum === "number") parts.push(`min ${s.minimum}`);
    if (typeof s.maximum === "number") parts.push(`max ${s.maximum}`);
  }
  if (info.kind === "string") {
    if (typeof s.minLength === "number") parts.push(`min ${s.minLength} chars`);
    if (typeof s.maxLength === "number") parts.push(`max ${s.maxLength} chars`);
    if (s.format === "date-time") parts.push("your local time");
  }
  const emptyDefault = s.default === "" || (Array.isArray(s.default) && !s.default.length);
  if (s.default !== undefined && s.default !== null && !emptyDefault && info.kind !== "json") {
    // Choices show the default by its label, as the control does ("Medium", not "m").
    const label = (/** @type {unknown} */ v) => String(info.options?.find((o) => o.value === v)?.label ?? v);
    parts.push(`default: ${Array.isArray(s.default) ? s.default.map(label).join(", ") : label(s.default)}`);
  }
  return parts.length ? `(${parts.join(", ")})` : "";
}

/** @param {Record<string, any>} s */
function jsonPlaceholder(s) {
  if (s.type === "object" && s.properties && typeof s.properties === "object") {
    const keys = Object.keys(s.properties).slice(0, 4);
    return `{ ${keys.map((k) => `"${k}": …`).join(", ")} }`;
  }
  if (s.type === "array") return "[ … ]";
  return "JSON value";
}
