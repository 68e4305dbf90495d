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
//    person sees (contract §4), and Playwright's strict mode never trips on a parked copy. They are
//    renamed once, by park(), and given back by unpark(). What a component puts inside a parked
//    element later (a call's result, an app's frame) it passes to matchParking(), which renames
//    its attributes the same way;
//  - except a floating part ([data-floating]: an app shown picture-in-picture, stage.js): it stays
//    visible, reachable and named, and keeps running on top of whatever is shown now. Only what is
//    beside the path from the parked element to it is made inert, so nothing is moved. The stage
//    tells floatingChanged() when a part starts or stops floating.

/** Attributes renamed inside a parked element; contract selectors must not see them. */
export const PARKED_ATTRS = Object.freeze([
  "data-testid", "name", "data-app-frame", "data-server", "data-field", "data-field-error", "data-content-type",
]);

const hiddenName = (/** @type {string} */ attr) => `data-hidden-${attr.startsWith("data-") ? attr.slice(5) : attr}`;

/** @type {WeakMap<Element, {attrs: readonly string[], inert: HTMLElement[]}>} */
const parked = new WeakMap();

/** `root` and everything inside it that has one of `selector`. @param {Element} root @param {string} selector */
function within(root, selector) {
  return root.matches(selector) ? [root, ...root.querySelectorAll(selector)] : [...root.querySelectorAll(selector)];
}

/** Rename `attrs` on `root` and inside it, floating parts excepted. @param {Element} root @param {readonly string[]} attrs */
function strip(root, attrs) {
  for (const el of within(root, attrs.map((a) => `[${a}]`).join(","))) {
    if (el.closest("[data-floating]")) continue;
    for (const a of attrs) {
      const v = el.getAttribute(a);
      if (v === null) continue;
      el.setAttribute(hiddenName(a), v);
      el.removeAttribute(a);
    }
  }
}

/**
 * Give `attrs` back on `root` and inside it, except inside another parked element (it keeps its own
 * renamed until it is unparked). @param {Element} root @param {readonly string[]} attrs @param {Element} owner
 */
function restore(root, attrs, owner) {
  for (const a of attrs) {
    const h = hiddenName(a);
    for (const el of within(root, `[${h}]`)) {
      if (el.closest("[data-parked]") !== owner) continue;
      el.setAttribute(a, /** @type {string} */ (el.getAttribute(h)));
      el.removeAttribute(h);
    }
  }
}

/** The parked element `node` is in, with what it renames, or null. @param {Element} node */
function parkedAround(node) {
  const root = node.closest("[data-parked]");
  return root ? { root, attrs: parked.get(root)?.attrs ?? PARKED_ATTRS } : null;
}

/**
 * Park an element (idempotent). `extra` adds attributes to rename (e.g. data-elicitation).
 * @param {HTMLElement} el @param {string[]} [extra]
 */
export function park(el, extra = []) {
  if (parked.has(el)) return;
  const attrs = [...PARKED_ATTRS, ...extra];
  parked.set(el, { attrs, inert: [] });
  el.dataset.parked = "";
  // The root keeps its own data-server etc. only if it is not a contract element; rename inside and on it.
  strip(el, attrs);
  makeInert(el);
}

/**
 * Content added to the page: when it landed inside a parked element (or got contract attributes
 * there), it loses them as the rest of that element did. Call it after inserting or setting them.
 * @param {Element} node
 */
export function matchParking(node) {
  const around = parkedAround(node);
  if (around) strip(node, around.attrs);
}

/**
 * A part inside a parked element started or stopped floating (stage.js): it gets its names back,
 * or loses them, and what is inert around it follows. @param {HTMLElement} part
 */
export function floatingChanged(part) {
  const around = part.parentElement ? parkedAround(part.parentElement) : null;
  if (!around || !(around.root instanceof HTMLElement)) return;
  if (part.hasAttribute("data-floating")) restore(part, around.attrs, around.root);
  else strip(part, around.attrs);
  makeInert(around.root);
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
  for (const node of state.inert) node.inert = false;
  restore(el, state.attrs, el);
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

/** Forget a parked element that is about to be removed (its attributes stay renamed). @param {HTMLElement} el */
function unparkQuietly(el) {
  parked.delete(el);
}
