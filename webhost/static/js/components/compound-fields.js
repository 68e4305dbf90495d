// @ts-check
// The tool form's compound fields: a nested object as a fieldset of its own fields, an array of
// objects (or of arrays, or of choices) as items added and removed one by one, and a oneOf/anyOf
// as a choice of shapes showing the chosen one's field. Each holds fields made by `make`
// (fields.js createField), so nesting goes as deep as the schema does; a `$ref` already being
// expanded above (a cycle: a tree's node holding nodes) is expanded only when the person asks.
//
// An array of scalars is rows of one control each, typed by the item schema (an enum a select).
// Names (docs/automation.md): the fieldset is `[name="ARG"]` and `[data-field="ARG"]`; inside it,
// `ARG.key` for an object's property, `ARG[0]` for an array's item, so `[name="ARG.items[1].label"]`.
// A choice's shape picker is `select[data-choice="PATH"]`, and the chosen shape's controls keep PATH.
// Like every field, a compound one sends what it shows: an optional object with nothing shown in it
// is left out; a nullable one has a "null" box.

import { h, uid } from "../html.js";
import { classify, deref, typeMismatch } from "../schema.js";

/** @typedef {import("./fields.js").Field} Field */
/** @typedef {import("./fields.js").FieldOptions} FieldOptions */
/** @typedef {(name: string, schema: unknown, opts: FieldOptions) => Field} MakeField */
/** @typedef {{present: boolean, value?: unknown, error?: string}} Read */

const MAX_EAGER_DEPTH = 6;

/**
 * @param {string} name @param {unknown} raw the property's schema as written (its `$ref` names a cycle)
 * @param {import("../schema.js").FieldKind} info @param {FieldOptions} opts @param {MakeField} make
 * @returns {Field}
 */
export function compoundField(name, raw, info, opts, make) {
  const path = opts.path ?? name;
  const s = info.schema;
  const ref = refOf(raw);
  const refs = ref ? [...(opts.refs ?? []), ref] : (opts.refs ?? []);
  const cyclic = ref !== null && (opts.refs ?? []).includes(ref);
  const depth = path.split(/[.[]/).length;
  const title = String(opts.label ?? s.title ?? name);
  const id = uid("f");
  const errorEl = h("p", { class: "field-error", id: `${id}-err`, hidden: true, dataset: { fieldError: path } });
  const legend = h("legend", { class: "field-label" }, title,
    opts.required && !opts.item ? h("span", { class: "req", title: "required", "aria-hidden": "true", text: "*" }) : null,
    h("span", { class: "field-type", text: info.kind === "choice" ? "one of" : info.kind }));
  const el = h("fieldset", { class: `field field-compound field-${info.kind}`, name: path,
    dataset: { field: path, kind: info.kind }, "aria-describedby": `${id}-err` }, legend);
  if (s.description) el.append(h("p", { class: "field-help", text: String(s.description) }));
  let touched = false;
  el.addEventListener("input", () => { touched = true; opts.onInput?.(); });
  el.addEventListener("change", () => { touched = true; });
  /** The path this field's controls carry now (an array item's changes when an item above it goes). */
  const here = () => el.dataset.field ?? path;
  /**
   * @param {string} childName @param {unknown} schema @param {string} childPath @param {boolean} required
   * @param {{label?: string, item?: boolean}} [extra] an array's item: its label ("Tags 2")
   */
  const child = (childName, schema, childPath, required, extra = {}) =>
    make(childName, schema, { required, root: opts.root, onInput: opts.onInput, path: childPath, refs, ...extra });

  // A nullable compound value: a box that sends null instead of what is inside.
  const nullBox = s.nullable ? h("input", { type: "checkbox", dataset: { nullToggle: path } }) : null;
  const body = h("div", { class: "compound-body" });
  if (nullBox) {
    nullBox.addEventListener("change", () => { body.hidden = nullBox.checked; });
    el.append(h("label", { class: "check null-toggle" }, nullBox, h("span", { text: "null" })));
  }
  el.append(body, errorEl);

  /** @type {{read: () => Read, write: (v: unknown) => void, reset: () => void}} */
  const impl = info.kind === "object" ? objectBody() : info.kind === "array" ? arrayBody() : choiceBody();

  /** @param {string | null} message */
  function setError(message) {
    errorEl.textContent = message ?? "";
    errorEl.hidden = !message;
    el.classList.toggle("invalid", Boolean(message));
  }

  const field = {
    name,
    el,
    required: opts.required,
    /** @returns {Read} */
    read() {
      if (nullBox?.checked) return { present: true, value: null };
      return impl.read();
    },
    /** @param {unknown} v */
    write(v) {
      if (nullBox) { nullBox.checked = v === null; body.hidden = v === null; }
      if (v !== null) impl.write(v);
      touched = true;
    },
    reset() {
      touched = false;
      if (nullBox) { nullBox.checked = s.default === null; body.hidden = nullBox.checked; }
      impl.reset();
      setError(null);
    },
    setError,
    focusTarget: () => /** @type {HTMLElement} */ (el.querySelector("input, select, textarea, button") ?? el),
  };
  impl.reset();
  return field;

  /** The fields of an object, each under `PATH.key`; a cycle or a deep one waits for "Add". */
  function objectBody() {
    const props = /** @type {Record<string, unknown>} */ (s.properties);
    const required = new Set(Array.isArray(s.required) ? s.required.map(String) : []);
    /** @type {Field[] | null} */
    let fields = null;
    // A cycle is expanded on demand even when required (no finite value could fill it otherwise).
    const lazy = cyclic || (!opts.required && depth > MAX_EAGER_DEPTH);
    const add = h("button", { type: "button", class: "small", text: `Add ${title}`, dataset: { action: "add-object" } });
    const remove = h("button", { type: "button", class: "small ghost", text: "Remove", dataset: { action: "remove-object" } });
    const open = () => {
      const base = here();
      fields = Object.entries(props).map(([key, sub]) => child(key, sub, `${base}.${key}`, required.has(key)));
      body.replaceChildren(...fields.map((f) => f.el), lazy ? remove : "");
    };
    const close = () => { fields = null; body.replaceChildren(add); };
    add.addEventListener("click", () => { open(); fields?.[0]?.focusTarget().focus(); });
    remove.addEventListener("click", () => { close(); add.focus(); });
    return {
      read() {
        if (!fields) return opts.required ? { present: true, error: "Required" } : { present: false };
        const reads = fields.map((f) => [f, f.read()]);
        const shown = reads.some(([, r]) => /** @type {Read} */ (r).present);
        const complete = reads.every(([, r]) => /** @type {Read} */ (r).error === undefined);
        // An optional object the person did not touch is sent when what it shows (defaults) is a whole value.
        if (!opts.required && !touched && !lazy && !(shown && complete)) {
          for (const f of fields) f.setError(null);
          return { present: false };
        }
        /** @type {Record<string, unknown>} */
        const value = {};
        let bad = false;
        for (const [f, r] of /** @type {[Field, Read][]} */ (reads)) {
          f.setError(r.error ?? null);
          if (r.error !== undefined) bad = true;
          else if (r.present) value[f.name] = r.value;
        }
        return bad ? { present: true, error: "Check the fields inside" } : { present: true, value };
      },
      /** @param {unknown} v */
      write(v) {
        if (!fields) open();
        const given = v && typeof v === "object" && !Array.isArray(v) ? /** @type {Record<string, unknown>} */ (v) : {};
        for (const f of fields ?? []) {
          if (f.name in given) f.write(given[f.name]);
          else f.reset();
        }
      },
      reset() {
        if (lazy && s.default === undefined) { close(); return; }
        if (!fields) open();
        for (const f of fields ?? []) f.reset();
        if (s.default && typeof s.default === "object") this.write(s.default);
      },
    };
  }

  /** Items added and removed one by one, each under `PATH[i]`: a scalar item is one control in a row. */
  function arrayBody() {
    const itemSchema = deref(s.items, opts.root);
    const itemTitle = String(itemSchema.title ?? title);
    const itemLabel = (/** @type {number} */ index) => `${itemTitle} ${index + 1}`;
    const scalar = !["object", "array", "choice"].includes(classifyKind(s.items, opts.root));
    const list = h("ol", { class: `compound-items${scalar ? " scalar-items" : ""}` });
    /** @type {{field: Field, li: HTMLLIElement}[]} */
    const items = [];
    const add = h("button", { type: "button", class: "small", text: "Add item", dataset: { action: "add-item" } });
    const addItem = () => {
      const index = items.length;
      const field = child(String(index), s.items, `${here()}[${index}]`, true, { label: itemLabel(index), item: true });
      const remove = h("button", { type: "button", class: "small ghost", text: "Remove",
        "aria-label": `Remove ${itemLabel(index)}`, dataset: { action: "remove-item" } });
      const li = h("li", { class: "compound-item" }, field.el, remove);
      const item = { field, li };
      remove.addEventListener("click", () => {
        items.splice(items.indexOf(item), 1);
        li.remove();
        renumber();
        touched = true;
        opts.onInput?.();
        add.focus();
      });
      items.push(item);
      list.append(li);
      return field;
    };
    /** After a removal, the items below move up: their controls' names and labels follow (`ARG[2]` becomes `ARG[1]`). */
    const renumber = () => {
      const base = here();
      items.forEach(({ field, li }, index) => {
        const now = `${base}[${index}]`;
        const was = field.el.dataset.field ?? now;
        if (was === now) return;
        const label = field.el.querySelector(":scope > .field-label, :scope > .check-row .field-label-text, :scope > legend");
        if (label?.firstChild?.nodeType === Node.TEXT_NODE) label.firstChild.textContent = itemLabel(index);
        li.querySelector(':scope > [data-action="remove-item"]')?.setAttribute("aria-label", `Remove ${itemLabel(index)}`);
        for (const node of [...li.querySelectorAll("[name], [data-field], [data-field-error], [data-choice], [data-null-toggle]")]) {
          for (const attr of ["name", "data-field", "data-field-error", "data-choice", "data-null-toggle"]) {
            const value = node.getAttribute(attr);
            if (value !== null && value.startsWith(was)) node.setAttribute(attr, now + value.slice(was.length));
          }
        }
        field.name = String(index);
      });
    };
    add.addEventListener("click", () => { addItem().focusTarget().focus(); touched = true; });
    body.append(list, add);
    const clear = () => { for (const { li } of items.splice(0)) li.remove(); };
    return {
      read() {
        if (!items.length && !opts.required && !touched && !Array.isArray(s.default)) return { present: false };
        const value = [];
        let bad = false;
        for (const { field } of items) {
          const r = field.read();
          field.setError(r.error ?? null);
          if (r.error !== undefined) bad = true;
          else value.push(r.present ? r.value : null);
        }
        if (bad) return { present: true, error: "Check the items" };
        if (typeof s.minItems === "number" && value.length < s.minItems) return { present: true, error: `At least ${s.minItems} items` };
        if (typeof s.maxItems === "number" && value.length > s.maxItems) return { present: true, error: `At most ${s.maxItems} items` };
        return { present: true, value };
      },
      /** @param {unknown} v */
      write(v) {
        clear();
        for (const item of Array.isArray(v) ? v : []) addItem().write(item);
      },
      reset() {
        clear();
        if (Array.isArray(s.default)) for (const item of s.default) addItem().write(item);
      },
    };
  }

  /** A select of the shapes (`select[data-choice="PATH"]`) and the chosen one's field, under PATH itself. */
  function choiceBody() {
    const alternatives = info.alternatives ?? [];
    const shapes = alternatives.map((a) => deref(a, opts.root));
    const picker = h("select", { "aria-label": `${title}: which shape`, dataset: { choice: path } },
      opts.required ? null : h("option", { value: "", text: "— not set —" }),
      shapes.map((shape, i) => h("option", { value: String(i), text: shapeLabel(shape, i) })));
    const slot = h("div", { class: "choice-slot" });
    body.append(picker, slot);
    /** @type {Field | null} */
    let chosen = null;
    const pick = (/** @type {string} */ key) => {
      picker.value = key;
      chosen = key === "" ? null : child(name, alternatives[Number(key)], here(), true);
      slot.replaceChildren(chosen ? chosen.el : "");
    };
    picker.addEventListener("change", () => pick(picker.value));
    return {
      read() {
        if (!chosen) return opts.required ? { present: true, error: "Choose one" } : { present: false };
        const r = chosen.read();
        chosen.setError(r.error ?? null);
        return r.error !== undefined ? { present: true, error: r.error } : r;
      },
      /** @param {unknown} v */
      write(v) {
        pick(String(Math.max(0, shapes.findIndex((shape) => fits(v, shape)))));
        chosen?.write(v);
      },
      reset() {
        if (s.default !== undefined && s.default !== null) this.write(s.default);
        else pick(opts.required ? "0" : "");
        if (chosen && s.default === undefined) chosen.reset();
      },
    };
  }
}

/** The kind of control an item's schema gets. @param {unknown} raw @param {Record<string, any>} root */
const classifyKind = (raw, root) => classify(raw, root).kind;

/**
 * The `$ref` a property's schema names: its own, or that of its one non-null alternative (`X | None`).
 * @param {unknown} raw @returns {string | null}
 */
function refOf(raw) {
  if (!raw || typeof raw !== "object") return null;
  const s = /** @type {Record<string, any>} */ (raw);
  if (typeof s.$ref === "string") return s.$ref;
  for (const key of ["anyOf", "oneOf"]) {
    const refs = Array.isArray(s[key]) ? s[key].filter((a) => a && typeof a.$ref === "string") : [];
    const others = Array.isArray(s[key]) ? s[key].filter((a) => !a || a.type !== "null") : [];
    if (refs.length === 1 && others.length === 1) return String(refs[0].$ref);
  }
  return null;
}

/** @param {Record<string, any>} shape @param {number} i */
function shapeLabel(shape, i) {
  if (shape.title) return String(shape.title);
  if (shape.type === "object" && shape.properties) return `{ ${Object.keys(shape.properties).slice(0, 3).join(", ")} }`;
  if (shape.type) return Array.isArray(shape.type) ? shape.type.join(" | ") : String(shape.type);
  return `Option ${i + 1}`;
}

/** Whether a value has this shape, roughly (its type, and an object's required keys). @param {unknown} v @param {Record<string, any>} shape */
function fits(v, shape) {
  if (shape.type && typeMismatch(v, shape)) return false;
  if ("const" in shape) return shape.const === v;
  if (v && typeof v === "object" && !Array.isArray(v) && Array.isArray(shape.required)) {
    return shape.required.every((/** @type {string} */ key) => key in v);
  }
  return true;
}
