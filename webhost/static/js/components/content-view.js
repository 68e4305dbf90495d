// @ts-check
// Renders MCP content (tool results, prompt messages, resource contents) as DOM, never as
// server-supplied markup. Big text is truncated so a 10 MB result cannot freeze the page.
//
// Server content never runs on the host origin: HTML, SVG or XML is shown as text, images only
// through <img> from a data: URL (an SVG in <img> runs no script), and no blob: URL of the page's
// origin ever carries an active type: downloads are application/octet-stream, media blobs only
// audio/* or video/*. Opening any URL this module makes cannot run a server's script here.

import { renderMarkdown } from "../markdown.js";
import { h, prettyJson, formatBytes } from "../html.js";
import { showJson } from "./json-highlight.js";

export const PREVIEW_LIMIT = 200_000;

/**
 * @typedef {object} ContentContext
 * @property {string} server
 * @property {(server: string, uri: string) => Promise<any>} readResource
 */

const SAFE_MIME = /^[a-z0-9.+-]+\/[a-z0-9.+-]+$/i;

/** @param {unknown} mime @param {string} fallback */
function safeMime(mime, fallback) {
  const m = String(mime ?? "").split(";")[0].trim();
  return SAFE_MIME.test(m) ? m : fallback;
}

/** Decode base64 without fetch() (CSP connect-src forbids data: URLs). @param {string} b64 */
export function base64ToBytes(b64) {
  const bin = atob(b64.replace(/\s+/g, ""));
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}

/** @param {string} uri @param {string} fallback */
function fileNameFor(uri, fallback) {
  const tail = String(uri ?? "").split(/[/?#]/).filter(Boolean).pop() ?? "";
  const cleaned = tail.replace(/[^\w.-]+/g, "_").slice(0, 100);
  return cleaned || fallback;
}

/** Media a blob: URL of the page's origin may carry: passive types only (never HTML, SVG, XML or script). */
const PASSIVE_MEDIA = /^(audio|video)\/[a-z0-9.+-]+$/i;

/**
 * A download link for in-memory data, built from a Blob object URL. The Blob is always
 * application/octet-stream whatever the content claims, so the URL, opened by its address,
 * downloads instead of rendering a document on the host's origin.
 * @param {BlobPart} data @param {string} _mime what the content says it is (not used for the Blob)
 * @param {string} filename @param {string} [label]
 */
export function downloadLink(data, _mime, filename, label) {
  const blob = new Blob([data], { type: "application/octet-stream" });
  const url = URL.createObjectURL(blob);
  return h("a", { class: "button small download", href: url, download: filename,
    text: label ?? `Download ${filename} (${formatBytes(blob.size)})` });
}

/**
 * Pre-wrapped text, truncated above PREVIEW_LIMIT with "show all" and "download" controls.
 * @param {string} text @param {{className?: string, filename?: string}} [opts]
 */
export function textView(text, opts = {}) {
  const pre = h("pre", { class: `text-content ${opts.className ?? ""}` });
  const json = (opts.className ?? "").split(" ").includes("json");
  const show = (/** @type {string} */ shown) => { if (json) showJson(pre, shown); else pre.textContent = shown; };
  if (text.length <= PREVIEW_LIMIT) {
    show(text);
    return pre;
  }
  show(text.slice(0, PREVIEW_LIMIT));
  const note = h("span", { class: "muted", text: `Showing the first ${formatBytes(PREVIEW_LIMIT)} of ${formatBytes(text.length)}.` });
  const showAll = h("button", { type: "button", class: "small", text: "Show all" });
  const bar = h("div", { class: "truncation-bar" }, note, showAll,
    h("button", { type: "button", class: "small", text: "Download",
      onclick: () => {
        const a = downloadLink(text, "text/plain;charset=utf-8", opts.filename ?? "result.txt");
        a.click();
        setTimeout(() => URL.revokeObjectURL(a.href), 30_000);
      } }));
  showAll.addEventListener("click", () => {
    show(text);
    note.textContent = `Showing all ${formatBytes(text.length)}.`;
    showAll.remove();
  });
  return h("div", { class: "truncated" }, bar, pre);
}

/** @param {unknown} value @param {string} label @param {boolean} open */
export function jsonDetails(value, label, open) {
  const details = h("details", { class: "json-details", open });
  const summary = h("summary", { text: label });
  details.append(summary);
  // Rendered on first open: _meta and structured content can be large.
  const render = () => {
    if (details.childElementCount > 1) return;
    details.append(textView(prettyJson(value), { className: "json", filename: "data.json" }));
  };
  if (open) render();
  else details.addEventListener("toggle", render, { once: true });
  return details;
}

/** @param {any} block @param {ContentContext} ctx @returns {HTMLElement} */
export function contentBlock(block, ctx) {
  const type = block?.type;
  /** @type {HTMLElement} */
  let body;
  if (type === "text") {
    // Text that is a JSON object or array is shown formatted (Copy text still copies it as sent).
    const text = String(block.text ?? "");
    body = /^\s*[[{]/.test(text) ? jsonText(text, "result.txt") : textView(text);
  } else if (type === "image" && typeof block.data === "string") {
    body = h("img", { class: "content-image", alt: "Image from the server",
      src: `data:${imageMime(block.mimeType)};base64,${block.data.replace(/\s+/g, "")}` });
  } else if (type === "audio" && typeof block.data === "string") {
    body = h("audio", { controls: true, src: `data:${safeMime(block.mimeType, "audio/wav")};base64,${block.data.replace(/\s+/g, "")}` });
  } else if (type === "resource_link") {
    body = resourceLink(block, ctx);
  } else if (type === "resource" && block.resource) {
    body = resourceContents(block.resource);
  } else {
    body = jsonDetails(block, `Unknown content (${String(type)})`, true);
  }
  const wrap = h("div", { class: `content-block content-${String(type ?? "unknown").replace(/[^\w-]/g, "")}`,
    dataset: { contentType: String(type ?? "unknown") } }, body);
  if (block?.annotations) wrap.append(jsonDetails(block.annotations, "annotations", false));
  if (block?._meta) wrap.append(jsonDetails(block._meta, "_meta", false));
  return wrap;
}

/** @param {any} link @param {ContentContext} ctx */
function resourceLink(link, ctx) {
  const out = h("div", { class: "read-output" });
  const read = h("button", { type: "button", class: "small", text: "Read" });
  read.addEventListener("click", async () => {
    read.disabled = true;
    out.replaceChildren(h("p", { class: "muted", text: "Reading…" }));
    try {
      const result = await ctx.readResource(ctx.server, String(link.uri));
      out.replaceChildren(...(result?.contents ?? []).map(resourceContents));
      if (!result?.contents?.length) out.replaceChildren(h("p", { class: "muted", text: "No contents." }));
    } catch (err) {
      out.replaceChildren(h("p", { class: "inline-error", text: `Could not read: ${err instanceof Error ? err.message : String(err)}` }));
    } finally {
      read.disabled = false;
    }
  });
  return h("div", { class: "resource-link" },
    h("div", { class: "resource-link-head" },
      h("span", { class: "badge", text: "resource link" }),
      h("strong", { text: String(link.title ?? link.name ?? "") }),
      link.mimeType ? h("span", { class: "muted", text: String(link.mimeType) }) : null,
      typeof link.size === "number" ? h("span", { class: "muted", text: formatBytes(link.size) }) : null,
      h("span", { class: "spacer" }), read),
    h("code", { class: "uri", text: String(link.uri ?? "") }),
    link.description ? h("p", { class: "muted", text: String(link.description) }) : null,
    out);
}

/** One entry of ReadResourceResult.contents or an embedded resource. @param {any} c */
export function resourceContents(c) {
  const mime = safeMime(c?.mimeType, "application/octet-stream");
  const head = h("div", { class: "resource-head" },
    h("code", { class: "uri", text: String(c?.uri ?? "") }),
    c?.mimeType ? h("span", { class: "badge", text: String(c.mimeType) }) : null);
  /** @type {HTMLElement} */
  let body;
  if (typeof c?.text === "string") {
    body = mime.includes("json") ? jsonText(c.text)
      : mime.toLowerCase() === "text/markdown" && c.text.length <= PREVIEW_LIMIT ? markdownText(c.text, fileNameFor(c.uri, "resource.md"))
        : textView(c.text, { filename: fileNameFor(c.uri, "resource.txt") });
  } else if (typeof c?.blob === "string") {
    body = blobView(c.blob, mime, fileNameFor(c.uri, "resource.bin"));
  } else {
    body = jsonDetails(c, "contents", true);
  }
  const wrap = h("div", { class: "resource-contents" }, head, body);
  if (c?._meta) wrap.append(jsonDetails(c._meta, "_meta", false));
  return wrap;
}

/** Markdown rendered (DOM only, no raw HTML: ../markdown.js), with its source a click away. @param {string} text @param {string} filename */
function markdownText(text, filename) {
  const source = h("details", { class: "md-source" }, h("summary", { text: "Source" }), textView(text, { filename }));
  return h("div", { class: "markdown-view" }, renderMarkdown(text), source);
}

/** @param {string} text @param {string} [filename] */
function jsonText(text, filename = "resource.json") {
  if (text.length > PREVIEW_LIMIT) return textView(text, { filename });
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    return textView(text, { filename });
  }
  const view = textView(prettyJson(value), { className: "json" });
  view.dataset.jsonFormatted = "true";
  // It may scroll sideways: keyboard users must be able to reach it (axe scrollable-region-focusable).
  view.tabIndex = 0;
  view.setAttribute("aria-label", "Formatted JSON");
  return view;
}

/** @param {string} b64 @param {string} mime @param {string} filename */
function blobView(b64, mime, filename) {
  let bytes;
  try {
    bytes = base64ToBytes(b64);
  } catch {
    return h("p", { class: "inline-error", text: "The blob is not valid base64." });
  }
  const link = downloadLink(bytes, mime, filename);
  if (mime.toLowerCase().startsWith("image/")) {
    // A data: URL, never a blob: one: opened by its address it gets an opaque origin, not ours.
    const src = `data:${imageMime(mime)};base64,${b64.replace(/\s+/g, "")}`;
    return h("div", { class: "blob" }, h("img", { class: "content-image", alt: filename, src }), link);
  }
  if (PASSIVE_MEDIA.test(mime)) {
    const media = URL.createObjectURL(new Blob([bytes], { type: mime }));
    const tag = mime.toLowerCase().startsWith("audio/") ? "audio" : "video";
    return h("div", { class: "blob" }, h(tag, { controls: true, src: media }), link);
  }
  return h("div", { class: "blob" }, link);
}

/** An image MIME type for a data: URL shown in <img> (anything else is treated as PNG). @param {unknown} mime */
function imageMime(mime) {
  const m = safeMime(mime, "image/png");
  return m.toLowerCase().startsWith("image/") ? m : "image/png";
}
