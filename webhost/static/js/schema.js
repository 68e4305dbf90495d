// @ts-check
// Pure JSON Schema helpers for the tool argument form (elicitation forms render the backend's
// `fields` instead): resolve local $refs, unwrap "X or null",
// classify a property into the kind of control that can edit it, and date-time conversion.

/** @typedef {Record<string, any>} Schema */
/** @typedef {{value: unknown, label: string}} Option */
/**
 * @typedef {{kind: "string" | "number" | "boolean" | "select" | "multi" | "json"
 *   | "object" | "array" | "choice",
 *   schema: Schema, options?: Option[], integer?: boolean, alternatives?: unknown[]}} FieldKind
 * `object`: nested fieldset; `array`: items (scalars, objects, arrays, choices) added and removed one by one;
 * `choice`: oneOf/anyOf of several shapes, one chosen at a time (`alternatives` unresolved, so their
 * $refs can be followed lazily).
 */

const PRIMITIVES = new Set(["string", "number", "integer", "boolean"]);

/** @param {Schema} root @param {string} ref */
function pointer(root, ref) {
  if (!ref.startsWith("#")) return null;
  let node = root;
  for (const raw of ref.slice(1).split("/").filter(Boolean)) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    if (!node || typeof node !== "object" || !(key in node)) return null;
    node = node[key];
  }
  return node && typeof node === "object" ? node : null;
}

/** @param {unknown} s @param {Schema} root @returns {Schema} */
export function deref(s, root, depth = 0) {
  if (!s || typeof s !== "object") return {};
  const schema = /** @type {Schema} */ (s);
  if (typeof schema.$ref === "string" && depth < 16) {
    const target = pointer(root, schema.$ref);
    if (target) {
      const { $ref: _ignored, ...rest } = schema;
      return deref({ ...target, ...rest }, root, depth + 1);
    }
  }
  return schema;
}

const OUTER_KEYS = ["title", "description", "default", "examples"];

/**
 * Resolve refs and unwrap the common "anyOf: [X, {type: null}]" (pydantic Optional) shape.
 * @param {unknown} s @param {Schema} root @returns {Schema}
 */
export function normalize(s, root, depth = 0) {
  let schema = deref(s, root);
  if (depth > 8) return schema;
  for (const key of ["anyOf", "oneOf"]) {
    const alts = schema[key];
    if (!Array.isArray(alts) || alts.some((a) => a && typeof a === "object" && "const" in a)) continue;
    const resolved = alts.map((a) => deref(a, root));
    const nonNull = resolved.filter((a) => a.type !== "null");
    if (nonNull.length === 1 && resolved.length - nonNull.length <= 1) {
      const outer = Object.fromEntries(OUTER_KEYS.filter((k) => k in schema && schema[k] !== null)
        .map((k) => [k, schema[k]]));
      schema = { ...normalize(nonNull[0], root, depth + 1), ...outer, nullable: resolved.length > 1 };
    }
  }
  if (Array.isArray(schema.type)) {
    const types = schema.type.filter((/** @type {string} */ t) => t !== "null");
    if (types.length === 1) schema = { ...schema, type: types[0], nullable: true };
  }
  return schema;
}

/** @param {unknown[]} list */
const allPrimitive = (list) => list.every((v) => v === null || ["string", "number", "boolean"].includes(typeof v));

/**
 * Options for enum-like schemas: enum (+ legacy enumNames) or oneOf/anyOf of {const, title}.
 * @param {Schema} s @returns {Option[] | null}
 */
export function enumOptions(s) {
  if (Array.isArray(s.enum) && allPrimitive(s.enum)) {
    const names = Array.isArray(s.enumNames) && s.enumNames.length === s.enum.length ? s.enumNames : null;
    return s.enum.map((v, i) => ({ value: v, label: String(names ? names[i] : v) }));
  }
  for (const key of ["oneOf", "anyOf"]) {
    const alts = s[key];
    if (Array.isArray(alts) && alts.length && alts.every((a) => a && typeof a === "object" && "const" in a)
      && allPrimitive(alts.map((a) => a.const))) {
      return alts.map((a) => ({ value: a.const, label: String(a.title ?? a.const) }));
    }
  }
  if ("const" in s && allPrimitive([s.const])) return [{ value: s.const, label: String(s.title ?? s.const) }];
  return null;
}

/**
 * Which control edits this property.
 * @param {unknown} raw @param {Schema} root @param {number} [depth] items of items (a cycle stops at 32)
 * @returns {FieldKind}
 */
export function classify(raw, root, depth = 0) {
  const schema = normalize(raw, root);
  const options = enumOptions(schema);
  if (options) return { kind: "select", schema, options };
  for (const key of ["oneOf", "anyOf"]) {
    const alts = schema[key];
    if (Array.isArray(alts) && alts.length) {
      const shapes = alts.filter((a) => deref(a, root).type !== "null");
      const nullable = schema.nullable === true || shapes.length < alts.length;
      if (shapes.length > 1) return { kind: "choice", schema: { ...schema, nullable }, alternatives: shapes };
    }
  }
  const type = schema.type ?? (schema.properties && typeof schema.properties === "object" ? "object" : undefined);
  if (type === "object" && schema.properties && typeof schema.properties === "object"
    && Object.keys(schema.properties).length) return { kind: "object", schema };
  if (type === "boolean") return { kind: "boolean", schema };
  if (type === "integer" || type === "number") return { kind: "number", schema, integer: type === "integer" };
  if (type === "string") return { kind: "string", schema };
  if (type === "array" && schema.items && !Array.isArray(schema.items)) {
    const items = normalize(schema.items, root);
    const itemOptions = enumOptions(items);
    // A set of choices is a group of boxes; a list of them (order and repeats matter) is rows of selects.
    if (itemOptions && schema.uniqueItems === true) return { kind: "multi", schema, options: itemOptions };
    if (itemOptions || PRIMITIVES.has(items.type)) return { kind: "array", schema };
    const itemKind = classify(schema.items, root, depth + 1).kind;
    if (depth < 32 && ["object", "array", "choice"].includes(itemKind)) return { kind: "array", schema };
  }
  return { kind: "json", schema };
}

/** @param {number} n @param {number} [w] */
const pad = (n, w = 2) => String(n).padStart(w, "0");

/**
 * A datetime-local value (local wall time) as RFC 3339 with the user's current offset.
 * @param {string} local e.g. "2025-03-01T14:30" or with seconds
 * @returns {string | null}
 */
export function localToRfc3339(local) {
  const d = new Date(local);
  if (!local || Number.isNaN(d.getTime())) return null;
  const off = -d.getTimezoneOffset();
  const abs = Math.abs(off);
  return `${pad(d.getFullYear(), 4)}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:`
    + `${pad(d.getMinutes())}:${pad(d.getSeconds())}${off >= 0 ? "+" : "-"}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** An RFC 3339 date-time as a datetime-local value in the user's zone ("" if unparseable). @param {unknown} value */
export function rfc3339ToLocal(value) {
  const d = new Date(String(value));
  if (value === undefined || value === null || Number.isNaN(d.getTime())) return "";
  return `${pad(d.getFullYear(), 4)}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:`
    + `${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/**
 * Shallow type check of a parsed JSON value against schema.type, for the JSON editor.
 * @param {unknown} value @param {Schema} schema @returns {string | null} an error message
 */
export function typeMismatch(value, schema) {
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : null;
  if (!types) return null;
  const actual = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
  const ok = types.some((/** @type {string} */ t) => t === actual
    || (t === "integer" && typeof value === "number" && Number.isInteger(value))
    || (t === "number" && typeof value === "number"));
  return ok ? null : `Expected ${types.join(" or ")}, got ${actual}`;
}
