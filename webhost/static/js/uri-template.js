// @ts-check
// RFC 6570 URI templates, levels 1–3 (what MCP resource templates use): list the variables
// of a template and expand it with percent-encoded string values.

const OPS = /** @type {Record<string, {first: string, sep: string, named: boolean, ifEmpty: string, reserved: boolean}>} */ ({
  "": { first: "", sep: ",", named: false, ifEmpty: "", reserved: false },
  "+": { first: "", sep: ",", named: false, ifEmpty: "", reserved: true },
  "#": { first: "#", sep: ",", named: false, ifEmpty: "", reserved: true },
  ".": { first: ".", sep: ".", named: false, ifEmpty: "", reserved: false },
  "/": { first: "/", sep: "/", named: false, ifEmpty: "", reserved: false },
  ";": { first: ";", sep: ";", named: true, ifEmpty: "", reserved: false },
  "?": { first: "?", sep: "&", named: true, ifEmpty: "=", reserved: false },
  "&": { first: "&", sep: "&", named: true, ifEmpty: "=", reserved: false },
});

const EXPR = /\{([+#./;?&]?)([^}]*)\}/g;

/**
 * @param {string} spec one varspec, e.g. "path*" or "id:3"
 * @returns {{name: string, prefix: number | null}}
 */
function parseVarspec(spec) {
  const m = /^([A-Za-z0-9_.%]+)(?::(\d+)|\*)?$/.exec(spec.trim());
  if (!m) return { name: spec.trim(), prefix: null };
  return { name: m[1], prefix: m[2] ? Number(m[2]) : null };
}

/** The variable names of a template, in order, without duplicates. @param {string} template */
export function templateVariables(template) {
  /** @type {string[]} */
  const names = [];
  for (const m of template.matchAll(EXPR)) {
    for (const spec of m[2].split(",")) {
      const { name } = parseVarspec(spec);
      if (name && !names.includes(name)) names.push(name);
    }
  }
  return names;
}

/**
 * @param {string} value
 * @param {boolean} reserved keep reserved characters (the + and # operators)
 */
function encode(value, reserved) {
  if (!reserved) return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  // Reserved expansion keeps :/?#[]@!$&'()*+,;= and existing %XX triplets.
  return value.split(/(%[0-9A-Fa-f]{2})/).map((part, i) =>
    (i % 2 ? part : encodeURI(part).replace(/%5B/g, "[").replace(/%5D/g, "]"))).join("");
}

/**
 * Expand a template. Undefined or empty-string-less variables are skipped per the RFC.
 * @param {string} template
 * @param {Record<string, string | undefined>} values
 */
export function expandTemplate(template, values) {
  return template.replace(EXPR, (_all, op, list) => {
    const o = OPS[op] ?? OPS[""];
    /** @type {string[]} */
    const parts = [];
    for (const spec of String(list).split(",")) {
      const { name, prefix } = parseVarspec(spec);
      const raw = values[name];
      if (raw === undefined || raw === null) continue;
      const v = prefix !== null ? [...raw].slice(0, prefix).join("") : raw;
      const enc = encode(v, o.reserved);
      parts.push(o.named ? (v === "" ? `${name}${o.ifEmpty}` : `${name}=${enc}`) : enc);
    }
    return parts.length ? o.first + parts.join(o.sep) : "";
  });
}
