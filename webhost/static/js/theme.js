// @ts-check
// Light/dark theme: the current value lives in <html data-theme>, a user's choice persists in
// localStorage, otherwise it follows the server default then prefers-color-scheme. Fires a
// "themechange" CustomEvent ({detail: {theme}}) on document; the MCP Apps bridge listens to it.

/** @typedef {"light" | "dark"} Theme */

const KEY = "webhost.theme";
export const THEME_EVENT = "themechange";

/** The 76 standard MCP Apps style variable names; app.css defines all of them on :root. */
export const STYLE_VARIABLES = [
  ...["background", "text", "border"].flatMap((k) =>
    ["primary", "secondary", "tertiary", "inverse", "ghost", "info", "danger", "success", "warning",
      "disabled"].map((v) => `--color-${k}-${v}`)),
  ...["primary", "secondary", "inverse", "info", "danger", "success", "warning"].map((v) => `--color-ring-${v}`),
  "--font-sans", "--font-mono",
  ...["normal", "medium", "semibold", "bold"].map((v) => `--font-weight-${v}`),
  ...["xs", "sm", "md", "lg"].flatMap((s) => [`--font-text-${s}-size`, `--font-text-${s}-line-height`]),
  ...["xs", "sm", "md", "lg", "xl", "2xl", "3xl"].flatMap((s) =>
    [`--font-heading-${s}-size`, `--font-heading-${s}-line-height`]),
  ...["xs", "sm", "md", "lg", "xl", "full"].map((s) => `--border-radius-${s}`),
  "--border-width-regular",
  ...["hairline", "sm", "md", "lg"].map((s) => `--shadow-${s}`),
];

/** @returns {Theme} */
export function getTheme() {
  return document.documentElement.dataset.theme === "dark" ? "dark" : "light";
}

/** @returns {Theme | null} */
function stored() {
  try {
    const v = localStorage.getItem(KEY);
    return v === "light" || v === "dark" ? v : null;
  } catch {
    return null;
  }
}

/** @returns {Theme} */
function fallbackTheme() {
  const d = document.documentElement.dataset.defaultTheme;
  if (d === "light" || d === "dark") return d;
  return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

/** @param {Theme} theme */
function apply(theme) {
  const before = document.documentElement.dataset.theme;
  document.documentElement.dataset.theme = theme;
  if (before !== theme) {
    document.dispatchEvent(new CustomEvent(THEME_EVENT, { detail: { theme } }));
  }
}

/** Set and persist the theme. @param {Theme} theme */
export function setTheme(theme) {
  try { localStorage.setItem(KEY, theme); } catch { /* storage blocked: session-only */ }
  apply(theme);
}

export function toggleTheme() {
  setTheme(getTheme() === "dark" ? "light" : "dark");
}

/**
 * Listen for theme changes; returns an unsubscribe function.
 * @param {(theme: Theme) => void} listener
 */
export function onThemeChange(listener) {
  /** @param {Event} ev */
  const fn = (ev) => listener(/** @type {CustomEvent} */ (ev).detail.theme);
  document.addEventListener(THEME_EVENT, fn);
  return () => document.removeEventListener(THEME_EVENT, fn);
}

/** Resolved values of every standard style variable, for hostContext.styles.variables. */
export function getStyleVariables() {
  const cs = getComputedStyle(document.documentElement);
  /** @type {Record<string, string>} */
  const out = {};
  for (const name of STYLE_VARIABLES) {
    const v = cs.getPropertyValue(name).trim();
    if (v) out[name] = v;
  }
  return out;
}

/** Apply the initial theme and follow the OS setting while the user has not chosen one. */
export function initTheme() {
  apply(stored() ?? fallbackTheme());
  matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => {
    if (!stored()) apply(fallbackTheme());
  });
}
