// @ts-check
// A resource (read on open, re-read on resources/updated) or a resource template (a form
// for its {variables}, expanded per RFC 6570, then read).

import { h, replaceChildren } from "../html.js";
import { describeError } from "../rpc.js";
import { templateVariables, expandTemplate } from "../uri-template.js";
import { createArgsForm } from "./args-form.js";
import { resourceContents, jsonDetails } from "./content-view.js";
import { copyButton, resultText } from "./copy.js";
import { attachCompletion, otherValues } from "./completion.js";
import { metaEditor } from "./meta-editor.js";
import { freshFor } from "./server-details.js";
import { prettyJson } from "../html.js";

/** @typedef {(server: string, uri: string, meta?: Record<string, unknown> | null) => Promise<any>} ReadFn */
/**
 * @typedef {object} ResourceOptions
 * @property {import("../rpc.js").RpcClient} [rpc] for subscriptions and completions
 * @property {boolean} [subscribe] the server offers resource subscriptions
 * @property {boolean} [completions] the server offers completion/complete
 */

/**
 * @param {string} server @param {any} resource @param {ReadFn} read @param {ResourceOptions} [opts]
 * @returns {{el: HTMLElement, uri: string, reload: () => void, updated: () => void, dispose: () => void}}
 */
export function resourceView(server, resource, read, opts = {}) {
  const out = h("div", { class: "read-output", dataset: { testid: "resource-result" } });
  const reload = h("button", { type: "button", class: "small", text: "Reload" });
  const uri = String(resource.uri ?? "");
  const meta = metaEditor("resources/read");
  const load = () => readInto(out, server, uri, read, reload, meta);
  reload.addEventListener("click", load);
  let subscribed = false;
  let updates = 0;
  const note = h("p", { class: "muted resource-updated", hidden: true, dataset: { testid: "resource-updated" } });
  const subButton = opts.subscribe && opts.rpc ? h("button", { type: "button", class: "small", text: "Subscribe",
    title: "Re-read it whenever the server says it changed", dataset: { action: "subscribe", subscribed: "false" } }) : null;
  const rpc = opts.rpc;
  subButton?.addEventListener("click", async () => {
    if (!rpc) return;
    subButton.disabled = true;
    try {
      const on = !subscribed;
      await rpc.request(on ? "resources/subscribe" : "resources/unsubscribe", { server, uri });
      subscribed = on;
      subButton.textContent = on ? "Unsubscribe" : "Subscribe";
      subButton.dataset.subscribed = String(on);
      note.hidden = false;
      note.textContent = on ? "Subscribed: changes are read as they happen." : "Not subscribed.";
    } catch (err) {
      note.hidden = false;
      note.textContent = `Could not ${subscribed ? "unsubscribe" : "subscribe"}: ${describeError(err)}`;
    } finally {
      subButton.disabled = false;
    }
  });
  const el = h("article", { class: "view resource-view" },
    head(server, "Resource", String(resource.title ?? resource.name ?? uri), resource, h("span", { class: "head-actions" }, subButton, reload)),
    h("code", { class: "uri block", text: uri }),
    note,
    meta.el,
    out);
  load();
  return {
    el, uri, reload: load,
    /** resources/updated for this resource: read it again and say so. */
    updated() {
      updates += 1;
      note.hidden = false;
      note.dataset.updates = String(updates);
      note.textContent = `Updated ${updates} time${updates === 1 ? "" : "s"} (last at ${new Date().toLocaleTimeString()}).`;
      load();
    },
    dispose() {
      if (subscribed && rpc) rpc.request("resources/unsubscribe", { server, uri }).catch(() => { /* gone */ });
    },
  };
}

/** @param {string} server @param {any} template @param {ReadFn} read @param {ResourceOptions} [opts] */
export function templateView(server, template, read, opts = {}) {
  const pattern = String(template.uriTemplate ?? "");
  const vars = templateVariables(pattern);
  const preview = h("code", { class: "uri block" });
  const out = h("div", { class: "read-output", dataset: { testid: "resource-result" } });
  const meta = metaEditor("resources/read");
  /** @type {Record<string, any>} */
  const schema = {
    type: "object",
    properties: Object.fromEntries(vars.map((v) => [v, { type: "string", title: v }])),
    required: vars,
  };
  const form = createArgsForm(schema, {
    submitLabel: "Read",
    submitAttrs: { "data-testid": "read-resource" },
    rawToggle: false,
    emptyText: "This template has no variables.",
    onSubmit: (values) => {
      const uri = expandTemplate(pattern, /** @type {Record<string, string>} */ (values));
      preview.textContent = uri;
      readInto(out, server, uri, read, null, meta);
    },
  });
  const updatePreview = () => {
    /** @type {Record<string, string>} */
    const values = {};
    for (const v of vars) {
      const input = /** @type {HTMLInputElement | null} */ (form.el.querySelector(`[name="${CSS.escape(v)}"]`));
      if (input && input.value !== "") values[v] = input.value;
    }
    preview.textContent = expandTemplate(pattern, values);
  };
  form.el.addEventListener("input", updatePreview);
  updatePreview();
  const rpc = opts.rpc;
  if (opts.completions && rpc) {
    for (const v of vars) {
      const input = /** @type {HTMLInputElement | null} */ (form.el.querySelector(`input[name="${CSS.escape(v)}"]`));
      if (input) attachCompletion(input, (value) => rpc.request("completion/complete", {
        server, ref: { type: "ref/resource", uri: pattern }, argument: { name: v, value },
        context: { arguments: otherValues(form.el, v) } }));
    }
  }
  return h("article", { class: "view template-view" },
    head(server, "Resource template", String(template.title ?? template.name ?? pattern), template, null),
    h("p", { class: "muted" }, "Template ", h("code", { class: "uri", text: pattern })),
    form.el,
    meta.el,
    h("p", { class: "muted preview-label", text: "Will read" }), preview,
    out);
}

/**
 * @param {string} server @param {string} kind @param {string} title @param {any} item
 * @param {HTMLElement | null} action
 */
function head(server, kind, title, item, action) {
  return h("header", { class: "view-head" },
    h("div", { class: "view-title-row" },
      h("h2", { class: "view-title", text: title }),
      item.mimeType ? h("span", { class: "badge", text: String(item.mimeType) }) : null,
      h("span", { class: "spacer" }), action),
    h("p", { class: "view-sub muted" }, `${kind} on `, h("strong", { text: server })),
    item.description ? h("p", { class: "description", text: String(item.description) }) : null,
    item._meta ? jsonDetails(item._meta, "_meta", false) : null);
}

/**
 * @param {HTMLElement} out @param {string} server @param {string} uri @param {ReadFn} read
 * @param {HTMLButtonElement | null} button @param {ReturnType<typeof metaEditor>} meta
 */
async function readInto(out, server, uri, read, button, meta) {
  /** @type {Record<string, unknown> | null} */
  let extra;
  try {
    extra = meta.value();
  } catch {
    return; // the editor says what is wrong
  }
  if (button) button.disabled = true;
  out.dataset.status = "pending";
  replaceChildren(out, h("p", { class: "muted", text: "Reading…" }));
  try {
    const result = await read(server, uri, extra);
    const contents = Array.isArray(result?.contents) ? result.contents : [];
    out.dataset.status = "ok";
    replaceChildren(out, h("div", { class: "copy-actions" },
      copyButton("Copy text", "copy-text", () => resultText(result)),
      copyButton("Copy JSON", "copy-json", () => prettyJson(result)),
      copyButton("Copy request", "copy-request", () => prettyJson({ method: "resources/read", params: { server, uri, ...(extra ? { _meta: extra } : {}) } }))),
    contents.length ? contents.map(resourceContents) : h("p", { class: "muted", text: "The resource is empty." }),
      typeof result?.ttlMs === "number" ? h("p", { class: "muted small", dataset: { testid: "cache-hint", ttlMs: String(result.ttlMs),
        cacheScope: String(result.cacheScope ?? "") }, text: `Caching hint: fresh for ${freshFor(result.ttlMs)}, ${String(result.cacheScope ?? "")}` }) : null,
      result?._meta ? jsonDetails(result._meta, "_meta", false) : null);
  } catch (err) {
    out.dataset.status = "error";
    replaceChildren(out, h("p", { class: "inline-error", text: `Could not read ${uri}: ${describeError(err)}` }));
  } finally {
    if (button) button.disabled = false;
  }
}
