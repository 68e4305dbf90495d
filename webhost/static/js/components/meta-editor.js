// @ts-check
// The request `_meta` editor under a tool's, prompt's or resource's form: a JSON object sent as the request's
// `_meta` (a trace id, SEP-414's `traceparent`). The protocol's own keys and `progressToken` are webhost's.

import { h } from "../html.js";

// A prefix whose second label is `modelcontextprotocol` or `mcp` (io.modelcontextprotocol/, dev.mcp/).
const RESERVED = /^[^./]+\.(?:modelcontextprotocol|mcp)(?:\.[^/]*)?\//i;

/**
 * The editor: `value()` is the object to send (null when empty), or throws with what is wrong.
 * @param {string} what the request it belongs to ("tools/call"), for its label
 * @returns {{el: HTMLElement, value: () => Record<string, unknown> | null, set: (meta: unknown) => void}}
 */
export function metaEditor(what) {
  const area = h("textarea", { name: "_meta", rows: 3, spellcheck: "false", class: "mono",
    placeholder: '{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}',
    "aria-label": `Request _meta of ${what} (a JSON object)` });
  const problem = h("p", { class: "inline-error", hidden: true, role: "alert", dataset: { testid: "request-meta-error" } });
  const el = h("details", { class: "request-meta", dataset: { testid: "request-meta" } },
    h("summary", { text: "Request _meta" }),
    h("p", { class: "muted small", text: `Sent as the _meta of ${what}. Keys of the protocol (io.modelcontextprotocol/…) and progressToken are webhost's own.` }),
    area, problem);
  area.addEventListener("input", () => { problem.hidden = true; area.removeAttribute("aria-invalid"); });
  const value = () => {
    const text = area.value.trim();
    if (!text) return null;
    /** @type {unknown} */
    let parsed;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      return fail(`The request _meta is not JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return fail("The request _meta must be a JSON object.");
    const reserved = Object.keys(parsed).filter((k) => RESERVED.test(k) || k === "progressToken");
    if (reserved.length) return fail(`Reserved in _meta: ${reserved.join(", ")}.`);
    return Object.keys(parsed).length ? /** @type {Record<string, unknown>} */ (parsed) : null;
  };
  /** @param {string} message @returns {never} */
  const fail = (message) => {
    problem.textContent = message;
    problem.hidden = false;
    area.setAttribute("aria-invalid", "true");
    /** @type {HTMLDetailsElement} */ (el).open = true;
    throw new Error(message);
  };
  const set = (/** @type {unknown} */ meta) => {
    area.value = meta && typeof meta === "object" && Object.keys(meta).length ? JSON.stringify(meta, null, 2) : "";
    if (area.value) /** @type {HTMLDetailsElement} */ (el).open = true;
  };
  return { el, value, set };
}
