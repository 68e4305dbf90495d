// @ts-check
// Parking: keeping an element in the document (so the MCP App frames inside it stay alive) while it
// is out of sight and out of reach. Used for the tool views you switched away from, a previous
// result during its app's teardown, and an answered app elicitation card during its teardown.
//
// A parked element:
//  - stays where it is: an iframe that is moved or detached loses its browsing context (the app
//    dies without ui/resource-teardown), so nothing is ever re-parented;
//  - is [data-parked] + inert: invisible (visibility, not display:none, so the app's container keeps
//    its width and the app sees no resize), height 0, no focus, no clicks, not in the a11y tree;
//  - has its automation attributes renamed (data-testid → data-hidden-testid, name →
//    data-hidden-name, data-app-frame → data-hidden-app-frame, …), so the contract's selectors
//    ([data-testid="tool-result"], [name=ARG], iframe[data-app-frame], …) match only what the
//    person sees, and Playwright's strict mode never trips on a parked copy. A MutationObserver
//    keeps renaming what is added or set inside while parked (a call finishing, a frame being
//    built); unpark() restores everything.
//  - except a floating part ([data-floating]: an app shown picture-in-picture, stage.js): it stays
//    visible, reachable and named, and keeps running on top of whatever is shown now. Only what is
//    beside the path from the parked element to it is made inert, so nothing is moved.

/** Attributes renamed inside a parked element; contract selectors must not see them. */
export const PARKED_ATTRS = Object.freeze([
  "data-testid", "name", "data-app-frame", "data-server", "data-field", "data-field-error", "data-content-type",
]);

const hiddenName = (/** @type {string} */ attr) => `data-hidden-${attr.startsWith("data-") ? attr.slice(5) : attr}`;

/** @type {WeakMap<Element, {observer: MutationObserver, attrs: readonly string[], inert: HTMLElement[]}>} */
const parked = new WeakMap();

/** @param {Element} root @param {readonly string[]} attrs */
function strip(root, attrs) {
  const selector = attrs.map((a) => `[${a}]`).join(",");
  const els = root.matches(selector) ? [root, ...root.querySelectorAll(selector)] : [...root.querySelectorAll(selector)];
  for (const el of els) {
    if (el.closest("[data-floating]")) continue;
    for (const a of attrs) {
      const v = el.getAttribute(a);
      if (v === null) continue;
      el.setAttribute(hiddenName(a), v);
      el.removeAttribute(a);
    }
  }
}

/** @param {Element} root @param {readonly string[]} attrs */
function restore(root, attrs) {
  for (const a of attrs) {
    const h = hiddenName(a);
    const els = root.hasAttribute(h) ? [root, ...root.querySelectorAll(`[${h}]`)] : [...root.querySelectorAll(`[${h}]`)];
    for (const el of els) {
      el.setAttribute(a, /** @type {string} */ (el.getAttribute(h)));
      el.removeAttribute(h);
    }
  }
}

/**
 * Park an element (idempotent). `extra` adds attributes to rename (e.g. data-elicitation).
 * @param {HTMLElement} el @param {string[]} [extra]
 */
export function park(el, extra = []) {
  if (parked.has(el)) return;
  const attrs = [...PARKED_ATTRS, ...extra];
  // The root keeps its own data-server etc. only if it is not a contract element; rename inside and on it.
  strip(el, attrs);
  const observer = new MutationObserver((records) => {
    for (const r of records) {
      if (r.type === "attributes" && r.attributeName === "data-floating" && r.target instanceof Element) {
        // A part starts or stops floating while parked: it gets its names back, or loses them.
        if (r.target.hasAttribute("data-floating")) restore(r.target, attrs);
        else strip(r.target, attrs);
        makeInert(el);
      } else if (r.type === "childList") {
        for (const n of r.addedNodes) if (n instanceof Element) strip(n, attrs);
      } else if (r.target instanceof Element && r.attributeName && r.target.hasAttribute(r.attributeName)) {
        strip(r.target, [r.attributeName]);
      }
    }
  });
  observer.observe(el, { subtree: true, childList: true, attributes: true, attributeFilter: [...attrs, "data-floating"] });
  parked.set(el, { observer, attrs, inert: [] });
  el.dataset.parked = "";
  makeInert(el);
}

/**
 * Make a parked element inert, all but its floating parts: then what is beside each floating part's
 * ancestors (up to `el`) is made inert instead of `el` itself. @param {HTMLElement} el
 */
function makeInert(el) {
  const state = parked.get(el);
  if (!state) return;
  for (const node of state.inert.splice(0)) node.inert = false;
  const floating = [...el.querySelectorAll("[data-floating]")];
  el.inert = floating.length === 0;
  if (!floating.length) return;
  const keep = new Set();
  for (const f of floating) for (let n = /** @type {Element | null} */ (f); n && n !== el; n = n.parentElement) keep.add(n);
  for (const n of keep) {
    for (const sibling of n.parentElement?.children ?? []) {
      if (keep.has(sibling) || !(sibling instanceof HTMLElement) || sibling.inert) continue;
      sibling.inert = true;
      state.inert.push(sibling);
    }
  }
}

/** Bring a parked element back (idempotent). @param {HTMLElement} el */
export function unpark(el) {
  const state = parked.get(el);
  if (!state) return;
  parked.delete(el);
  state.observer.disconnect();
  for (const node of state.inert) node.inert = false;
  restore(el, state.attrs);
  delete el.dataset.parked;
  el.inert = false;
}

/** @param {Element} el */
export function isParked(el) {
  return parked.has(el);
}

/** The most a removal waits for the apps inside to acknowledge their teardown. */
export const RELEASE_BOUND_MS = 4000;

/**
 * Tear down every MCP App inside `el` (ui/resource-teardown while the frames are still in the page),
 * then remove `el`. `el` is parked meanwhile. Bounded: removes it after RELEASE_BOUND_MS whatever happens.
 * @param {HTMLElement} el @param {string} reason
 * @param {Pick<import("./apps/index.js").Apps, "release">} apps
 */
export async function releaseThenRemove(el, reason, apps) {
  park(el);
  try {
    await bounded(apps.release(el, reason));
  } catch (err) {
    console.warn("webhost: releasing the apps failed", err);
  } finally {
    unparkQuietly(el);
    el.remove();
  }
}

/**
 * Wait for `promise`, at most `ms`; never rejects for the timeout.
 * @param {unknown} promise @param {number} [ms]
 */
export function bounded(promise, ms = RELEASE_BOUND_MS) {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  const timeout = new Promise((resolve) => { timer = setTimeout(resolve, ms); });
  return Promise.race([Promise.resolve(promise), timeout]).finally(() => clearTimeout(timer));
}

/** Stop observing a parked element that is about to be removed (its attributes stay renamed). @param {HTMLElement} el */
function unparkQuietly(el) {
  parked.get(el)?.observer.disconnect();
  parked.delete(el);
}
