// @ts-check
// completion/complete as you type: a <datalist> ([data-completions="ARG"]) under a string input,
// filled with the server's suggestions for what is typed so far.

import { h, uid } from "../html.js";

const DEBOUNCE_MS = 150;

/**
 * @param {HTMLInputElement} input
 * @param {(value: string) => Promise<any>} fetch a CompleteResult for the current value
 */
export function attachCompletion(input, fetch) {
  const list = h("datalist", { id: uid("complete"), dataset: { completions: input.name } });
  input.setAttribute("list", list.id);
  input.after(list);
  /** @type {ReturnType<typeof setTimeout> | null} */
  let timer = null;
  let seq = 0;
  const ask = () => {
    const mine = ++seq;
    const value = input.value;
    fetch(value).then((result) => {
      if (mine !== seq) return;
      const values = Array.isArray(result?.completion?.values) ? result.completion.values.slice(0, 100) : [];
      list.replaceChildren(...values.map((/** @type {unknown} */ v) => h("option", { value: String(v) })));
      list.dataset.for = value;
    }, () => {
      if (mine === seq) list.replaceChildren();
    });
  };
  input.addEventListener("input", () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(ask, DEBOUNCE_MS);
  });
  input.addEventListener("focus", () => { if (!list.childElementCount) ask(); }, { once: true });
  return list;
}

/**
 * The other string inputs' values (completion context). @param {HTMLElement} formEl @param {string} except
 * @returns {Record<string, string>}
 */
export function otherValues(formEl, except) {
  /** @type {Record<string, string>} */
  const out = {};
  for (const el of /** @type {NodeListOf<HTMLInputElement>} */ (formEl.querySelectorAll("input[name], textarea[name]"))) {
    if (el.name !== except && el.value !== "") out[el.name] = el.value;
  }
  return out;
}
