// @ts-check
// Escaping and DOM-building helpers. Everything a server sends is untrusted: build nodes
// with h() / textContent, or escape with esc() before any markup string.

const ESCAPES = /** @type {Record<string, string>} */ ({
  "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;", "`": "&#96;",
});

/** Escape a value for use in HTML text or a quoted attribute. @param {unknown} value */
export function esc(value) {
  return String(value ?? "").replace(/[&<>"'`]/g, (c) => ESCAPES[c]);
}

/** Marks a string as trusted markup for the html tag (our own literals only). */
export class Raw {
  /** @param {string} value */
  constructor(value) { this.value = value; }
  toString() { return this.value; }
}

/** @param {string} value */
export const raw = (value) => new Raw(value);

/**
 * Tagged template producing an escaped markup string; interpolations are escaped unless
 * wrapped with raw(). Arrays are joined.
 * @param {TemplateStringsArray} strings
 * @param {...unknown} values
 */
export function html(strings, ...values) {
  let out = strings[0];
  values.forEach((v, i) => {
    const part = Array.isArray(v) ? v.map((x) => (x instanceof Raw ? x.value : esc(x))).join("")
      : v instanceof Raw ? v.value : esc(v);
    out += part + strings[i + 1];
  });
  return new Raw(out);
}

/**
 * @typedef {Record<string, unknown>} Attrs
 * Keys: "class", "text" (textContent), "dataset" (object), "on<event>" (listener),
 * "style" is refused: the page CSP blocks style attributes (set el.style.x from JS instead);
 * boolean true sets an empty attribute, false/null/undefined skip it;
 * DOM properties (value, checked, hidden, disabled, ...) are set as properties.
 */

const PROPS = new Set(["value", "checked", "disabled", "hidden", "selected", "indeterminate",
  "open", "multiple", "required", "readOnly", "tabIndex", "src", "href", "download", "type"]);

/**
 * Create an element. Children may be nodes, strings (as text), numbers, arrays, or null.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs | null} [attrs]
 * @param {...unknown} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, val] of Object.entries(attrs ?? {})) {
    if (val === undefined || val === null || val === false) continue;
    if (key === "style") throw new Error("h(): style attributes are blocked by the CSP; use el.style");
    if (key === "class") el.className = String(val);
    else if (key === "text") el.textContent = String(val);
    else if (key === "dataset") Object.assign(el.dataset, val);
    else if (key.startsWith("on") && typeof val === "function") {
      el.addEventListener(key.slice(2), /** @type {EventListener} */ (val));
    } else if (PROPS.has(key)) /** @type {any} */ (el)[key] = val;
    else el.setAttribute(key, val === true ? "" : String(val));
  }
  append(el, children);
  return el;
}

/**
 * @param {Node} parent
 * @param {unknown[]} children
 */
export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/** Replace all children of a node. @param {Node} parent @param {...unknown} children */
export function replaceChildren(parent, ...children) {
  while (parent.firstChild) parent.removeChild(parent.firstChild);
  return append(parent, children);
}

/** Pretty JSON that never throws (cycles, BigInt). @param {unknown} value */
export function prettyJson(value) {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Human-readable byte size. @param {number} n */
export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

let idCounter = 0;
/** A unique DOM id for label/aria wiring. @param {string} prefix */
export function uid(prefix = "wh") {
  idCounter += 1;
  return `${prefix}-${idCounter}`;
}
