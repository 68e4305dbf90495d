// @ts-check
// Icons a server gives (`icons` on tools, resources, templates, prompts and its serverInfo), drawn
// only when safe under the page's CSP (img-src 'self' data: blob:): a `data:` URL of a raster image
// or SVG, at most MAX_DATA characters. An <img> never runs an SVG's scripts. Any other URL
// (https:, or one on the page's own origin, which would be fetched with the person's cookies) is not
// loaded: the icon is left out and the item says so in `data-icon="skipped"`.

import { h } from "./html.js";

const MAX_DATA = 64 * 1024;
const SAFE = /^data:image\/(png|jpeg|gif|webp|svg\+xml)(;[\w=.+-]+)*[;,]/i;

/**
 * The icon to draw for the current theme, or null.
 * @param {unknown} icons an MCP `Icon[]` @param {"light" | "dark"} theme
 * @returns {{el: HTMLImageElement | null, skipped: boolean}}
 */
export function iconFor(icons, theme) {
  if (!Array.isArray(icons) || !icons.length) return { el: null, skipped: false };
  const usable = icons.filter((i) => i && typeof i.src === "string" && i.src.length <= MAX_DATA && SAFE.test(i.src));
  const pick = usable.find((i) => i.theme === theme) ?? usable.find((i) => !i.theme) ?? usable[0];
  if (!pick) return { el: null, skipped: true };
  const el = h("img", { class: "item-icon", src: pick.src, alt: "", width: 16, height: 16, decoding: "async",
    referrerpolicy: "no-referrer", draggable: "false" });
  return { el, skipped: false };
}
